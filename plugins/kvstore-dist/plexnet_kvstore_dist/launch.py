"""``plexnet launch``: run a distributed job on Ray.

::

    plexnet launch -n WORKERS -s SERVERS [--address RAY_ADDRESS] [--env K=V ...]
                   [--checkpoint-dir DIR] [--timeout SECONDS] -- python train.py ...

MXNet's ``tools/launch.py`` command line works as is (``plexnet launch -n 2 --launcher local
python train.py --kv-store dist_sync``): the command starts at the first positional argument
(``--`` is optional; a single argument holding a whole command line runs through the shell,
as MXNet's local launcher runs every command), ``--launcher local`` is the only launcher (other hosts join through a Ray
cluster, ``--address``), ``--env NAME`` / ``--env NAME:VALUE`` / ``--env-worker NAME:VALUE`` set
worker environment and ``--env-server NAME:VALUE`` the servers'. ``-s`` defaults to 1 server
shard (MXNet starts as many servers as workers).

Starts Ray (a private local instance on 127.0.0.1 without dashboard, in its own temp
dir, unless ``--address`` names a running cluster), creates the server actors, and
runs WORKERS copies of the command as local processes. Each worker sees its rank in
``PLEXNET_WORKER_RANK`` (and MXNet's ``DMLC_ROLE=worker``, ``DMLC_NUM_WORKER``,
``DMLC_NUM_SERVER``, ``DMLC_WORKER_ID``) and finds the servers through
``PLEXNET_KV_JOB`` / ``PLEXNET_RAY_ADDRESS`` / ``PLEXNET_RAY_NAMESPACE``;
``mx.kv.create('dist_sync')`` does the rest.

When a worker dies (non-zero exit or a signal), the launcher tells the servers, which
fail every pending and later call of the other workers with a message naming it; the
others get ``grace`` seconds to exit, then are killed. The exit status is the first
failing worker's (128 + signal for a signal), else 0. Ctrl-C / SIGTERM stop everything.
A worker stopped (``SIGSTOP``, state ``T``) for longer than the heartbeat timeout is
hung: the launcher names it, fails the job and exits with 128 + SIGSTOP (147).

Nothing outlives the job (see ``watchdog.py``): every process of the job carries
``PLEXNET_LAUNCH_JOB=<job>`` in its environment, and a watchdog process in a session of
its own removes the job's processes, its Ray temp dir and its ``/dev/shm/pxkv-*`` dir
when the launcher dies without cleaning up (SIGKILL). The Ray temp dir is private
(``/tmp/pxray-*``, nothing in it group- or world-writable).
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import uuid
from typing import Any

__all__ = ["main", "parse_args"]


def parse_args(argv: list[str]) -> argparse.Namespace:
    if "--" in argv:
        i = argv.index("--")
        opts, cmd = argv[:i], argv[i + 1:]
    else:
        opts, cmd = argv, []
    p = argparse.ArgumentParser(prog="plexnet launch", description="Run a distributed plexnet job on Ray.")
    p.add_argument("-n", "--num-workers", type=int, required=True, help="number of worker processes")
    p.add_argument("-s", "--num-servers", type=int, default=1, help="number of server shards (default 1)")
    p.add_argument("--address", default=None, help="Ray cluster to join (default: start a private local one)")
    p.add_argument("--env", action="append", default=[], metavar="K=V", help="extra environment for workers")
    p.add_argument("--checkpoint-dir", default=None, help="servers checkpoint here and resume from it")
    p.add_argument("--timeout", type=float, default=None, help="seconds any kvstore wait may take")
    p.add_argument("--grace", type=float, default=30.0,
                   help="seconds the other workers get to exit after one failed (default 30)")
    p.add_argument("--quiet", action="store_true", help="no launcher messages")
    # MXNet's tools/launch.py options
    p.add_argument("--launcher", default="local", choices=["local", "ssh", "mpi", "sge", "yarn"],
                   help="MXNet's launcher choice: only 'local' (join other hosts with --address)")
    p.add_argument("-H", "--hostfile", default=None, help=argparse.SUPPRESS)
    p.add_argument("--sync-dst-dir", default=None, help=argparse.SUPPRESS)
    p.add_argument("--env-worker", action="append", default=[], metavar="K:V", help="worker environment (MXNet)")
    p.add_argument("--env-server", action="append", default=[], metavar="K:V", help="server environment (MXNet)")
    p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    ns = p.parse_args(opts)
    ns.command = ns.rest + cmd
    if not ns.command:
        p.error("no worker command given: plexnet launch -n 2 -s 1 -- python train.py")
    if ns.num_workers < 1 or ns.num_servers < 1:
        p.error("need at least one worker and one server")
    if ns.launcher != "local" or ns.hostfile:
        what = f"--launcher {ns.launcher}" if ns.launcher != "local" else "--hostfile"
        p.error(f"{what}: plexnet launch runs the workers on this host; to use other hosts start a Ray "
                f"cluster there (ray start) and pass --address")
    ns.env = [_env_pair(p, kv, "--env", allow_name=True) for kv in ns.env]
    ns.env = [kv for kv in ns.env if kv is not None] + [_env_pair(p, kv, "--env-worker") for kv in ns.env_worker]
    ns.env_server = [_env_pair(p, kv, "--env-server") for kv in ns.env_server]
    return ns


def _env_pair(p: argparse.ArgumentParser, kv: str, opt: str, allow_name: bool = False) -> str | None:
    """``K=V`` from ``K=V`` or MXNet's ``K:V``; with ``allow_name`` a bare ``K`` passes the
    launcher's own value (``None`` when it has none)."""
    if "=" in kv:
        return kv
    if ":" in kv:
        return kv.replace(":", "=", 1)
    if allow_name and kv:
        return f"{kv}={os.environ[kv]}" if kv in os.environ else None
    p.error(f"{opt} expects K=V (or MXNet's K:V), got {kv!r}")
    return None


def _say(args: argparse.Namespace, msg: str) -> None:
    if not args.quiet:
        print(f"[plexnet launch] {msg}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    extra = dict(kv.split("=", 1) for kv in args.env)
    for k, v in extra.items():  # servers read the same settings as workers
        if k.startswith(("PLEXNET_", "MXNET_")):
            os.environ[k] = v
    for kv in args.env_server:  # before Ray starts: the servers inherit the launcher's environment
        k, v = kv.split("=", 1)
        os.environ[k] = v
    if args.checkpoint_dir:
        os.environ["PLEXNET_KVSTORE_CHECKPOINT_DIR"] = os.path.abspath(args.checkpoint_dir)
    if args.timeout:
        os.environ["PLEXNET_KVSTORE_TIMEOUT"] = str(args.timeout)

    from . import config
    from . import ray_transport as rt
    from .server import describe_restore
    import ray

    from . import watchdog
    job = uuid.uuid4().hex[:10]
    namespace = f"plexnet-{job}"
    os.environ[watchdog.MARKER] = job  # inherited by Ray's processes, the servers and the workers
    wd = watchdog.start(job)

    def tell(line: str) -> None:
        if wd is not None and wd.stdin is not None:
            try:
                wd.stdin.write(line.encode() + b"\n")
                wd.stdin.flush()
            except OSError:
                pass

    if args.address:
        ray.init(address=args.address, namespace=namespace, log_to_driver=False, configure_logging=True,
                 logging_level="WARNING")
        address = args.address
        temp_dir = None
    else:
        import tempfile
        temp_dir = tempfile.mkdtemp(prefix="pxray-", dir="/tmp")  # 0700; Ray's own dir goes inside
        if os.environ.get("PLEXNET_KEEP_RAY_LOGS", "") in ("", "0"):
            tell(f"rmtree {temp_dir}")
        info = rt.local_ray_init(temp_dir=os.path.join(temp_dir, "r"), namespace=namespace,
                                 num_cpus=max(2, args.num_workers + args.num_servers))
        address = info["gcs_address"]
        watchdog.make_private(temp_dir)
    procs: list[subprocess.Popen] = []
    job_dir = None
    status = 0
    stopping = {"sig": None}

    def on_signal(signum: int, frame: Any) -> None:
        stopping["sig"] = signum

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        settings = config.server_settings()
        restore, why_not = describe_restore(settings["checkpoint_dir"], args.num_servers)
        if restore is not None:
            _say(args, f"resuming from the round-{restore} checkpoints in {settings['checkpoint_dir']}")
        elif why_not:
            _say(args, why_not)
        # the servers learn sync/async from the workers' kvstore type (rank 0 tells them)
        job_dir = rt.make_job_dir(job)
        if job_dir:
            tell(f"rmtree {job_dir}")
        servers = rt.start_servers(job, args.num_servers, args.num_workers, "sync", namespace=namespace,
                                   restore_round=restore, shm_dir=job_dir, **settings)
        _say(args, f"job {job}: {args.num_servers} server(s), {args.num_workers} worker(s), "
                   f"Ray at {address}")
        for rank in range(args.num_workers):
            env = dict(os.environ)
            env.update(extra)
            env.update({
                "PLEXNET_KV_JOB": job, "PLEXNET_RAY_ADDRESS": address, "PLEXNET_RAY_NAMESPACE": namespace,
                "PLEXNET_WORKER_RANK": str(rank), "PLEXNET_NUM_WORKERS": str(args.num_workers),
                "PLEXNET_NUM_SERVERS": str(args.num_servers), "DMLC_ROLE": "worker",
                "DMLC_NUM_WORKER": str(args.num_workers), "DMLC_NUM_SERVER": str(args.num_servers),
                "DMLC_WORKER_ID": str(rank), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
                "PLEXNET_RAY_TEMP_DIR": temp_dir or "",
            })
            # MXNet's local launcher runs ' '.join(command) through the shell: one quoted
            # command line ("python train.py --kv-store dist_sync") is run the same way
            if len(args.command) == 1 and any(c.isspace() for c in args.command[0]):
                procs.append(subprocess.Popen(args.command[0], shell=True, env=env))
            else:
                procs.append(subprocess.Popen(args.command, env=env))
        status = _monitor(args, procs, servers, stopping, temp_dir)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        try:
            ray.shutdown()
        except Exception:  # noqa: BLE001
            pass
        rt.remove_job_dir(job_dir)
        try:  # Ray's agents (children of the raylet) are not stopped by ray.shutdown()
            left = watchdog.kill_marked(job, grace=2.0, dirs=(temp_dir,) if temp_dir else ())
            if left:
                _say(args, f"stopped {len(left)} leftover process(es) of job {job}")
        except Exception:  # noqa: BLE001 - clean-up must not hide the job's status
            pass
        if temp_dir and os.environ.get("PLEXNET_KEEP_RAY_LOGS", "") in ("", "0"):
            import shutil
            shutil.rmtree(temp_dir, ignore_errors=True)
        for s, h in old.items():
            signal.signal(s, h)
        tell("done")  # cleaned up: the watchdog leaves everything alone
        if wd is not None:
            try:
                if wd.stdin is not None:
                    wd.stdin.close()
                wd.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
    return status


def _exit_code(rc: int) -> int:
    return 128 - rc if rc < 0 else rc


def _proc_state(pid: int) -> str:
    """The process state letter from /proc (``T``: stopped), or '' where unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
        return data[data.rindex(b")") + 2:][:1].decode()
    except (OSError, ValueError):
        return ""


def _monitor(args: argparse.Namespace, procs: list[subprocess.Popen], servers: list[Any],
             stopping: dict, temp_dir: str | None = None) -> int:
    import ray

    from .config import server_settings
    from .watchdog import make_private
    # half the heartbeat timeout: name the stopped worker before the servers' heartbeat
    # check fails the others (who would then look like the first failure)
    hang_after = max(1.0, float(server_settings()["heartbeat_timeout"]) / 2)
    first_fail: int | None = None
    fail_time = None
    reported: set[int] = set()
    stopped_since: dict[int, float] = {}
    server_failure_said = False
    last_ping = time.monotonic()
    while True:
        if stopping["sig"] is not None:
            _say(args, f"signal {stopping['sig']}: stopping the workers")
            for p in procs:
                if p.poll() is None:
                    p.terminate()
            _wait_all(procs, 5.0)
            return 128 + int(stopping["sig"])
        running = 0
        for rank, p in enumerate(procs):
            rc = p.poll()
            if rc is None:
                running += 1
                if rank not in reported and _proc_state(p.pid) in ("T", "t"):
                    since = stopped_since.setdefault(rank, time.monotonic())
                    if time.monotonic() - since >= hang_after:
                        reported.add(rank)
                        how = f"hung: stopped (SIGSTOP) for {time.monotonic() - since:.0f} s"
                        _say(args, f"worker {rank} (pid {p.pid}) is {how}; stopping the job")
                        try:
                            ray.get([s.worker_failed.remote(rank, how) for s in servers], timeout=10)
                        except Exception:  # noqa: BLE001
                            pass
                        if first_fail is None:
                            first_fail, fail_time = 128 + int(signal.SIGSTOP), time.monotonic()
                else:
                    stopped_since.pop(rank, None)
                continue
            if rank in reported:
                continue
            reported.add(rank)
            if rc == 0:
                continue
            how = f"killed by signal {-rc}" if rc < 0 else f"exit code {rc}"
            _say(args, f"worker {rank} failed ({how})")
            try:
                ray.get([s.worker_failed.remote(rank, how) for s in servers], timeout=10)
            except Exception:  # noqa: BLE001 - a dead server is reported by the workers
                pass
            if first_fail is None:
                first_fail, fail_time = _exit_code(rc), time.monotonic()
        if running == 0:
            return first_fail or 0
        if fail_time is not None and time.monotonic() - fail_time > args.grace:
            _say(args, f"killing {running} worker(s) still running {args.grace:.0f} s after the failure")
            for p in procs:
                if p.poll() is None:
                    p.kill()
            _wait_all(procs, 5.0)
            return first_fail or 1
        if time.monotonic() - last_ping > 2.0:
            last_ping = time.monotonic()
            if temp_dir:
                make_private(temp_dir)  # folders Ray made since (worker logs) stay private too
            for i, s in enumerate(servers):
                try:
                    failure = ray.get(s.info.remote(), timeout=10).get("failure")
                except Exception as e:  # noqa: BLE001
                    if fail_time is None:
                        _say(args, f"server {i} is gone ({type(e).__name__}); workers will fail")
                        first_fail, fail_time = 1, time.monotonic()
                    continue
                if failure and not server_failure_said:
                    server_failure_said = True  # e.g. "worker 1 sent no heartbeat ... (killed or hung)"
                    _say(args, f"server {i}: {failure}")
        time.sleep(0.05)


def _wait_all(procs: list[subprocess.Popen], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()


if __name__ == "__main__":
    sys.exit(main())
