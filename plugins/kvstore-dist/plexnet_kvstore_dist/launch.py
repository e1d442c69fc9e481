"""``plexnet launch``: run a distributed job on Ray.

::

    plexnet launch -n WORKERS -s SERVERS [--address RAY_ADDRESS] [--env K=V ...]
                   [--checkpoint-dir DIR] [--timeout SECONDS] -- python train.py ...

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
    p.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    ns = p.parse_args(opts)
    ns.command = ns.rest + cmd
    if not ns.command:
        p.error("no worker command given: plexnet launch -n 2 -s 1 -- python train.py")
    if ns.num_workers < 1 or ns.num_servers < 1:
        p.error("need at least one worker and one server")
    for kv in ns.env:
        if "=" not in kv:
            p.error(f"--env expects K=V, got {kv!r}")
    return ns


def _say(args: argparse.Namespace, msg: str) -> None:
    if not args.quiet:
        print(f"[plexnet launch] {msg}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    extra = dict(kv.split("=", 1) for kv in args.env)
    for k, v in extra.items():  # servers read the same settings as workers
        if k.startswith(("PLEXNET_", "MXNET_")):
            os.environ[k] = v
    if args.checkpoint_dir:
        os.environ["PLEXNET_KVSTORE_CHECKPOINT_DIR"] = os.path.abspath(args.checkpoint_dir)
    if args.timeout:
        os.environ["PLEXNET_KVSTORE_TIMEOUT"] = str(args.timeout)

    from . import config
    from . import ray_transport as rt
    from .server import describe_restore
    import ray

    job = uuid.uuid4().hex[:10]
    namespace = f"plexnet-{job}"
    if args.address:
        ray.init(address=args.address, namespace=namespace, log_to_driver=False, configure_logging=True,
                 logging_level="WARNING")
        address = args.address
        temp_dir = None
    else:
        info = rt.local_ray_init(namespace=namespace, num_cpus=max(2, args.num_workers + args.num_servers))
        address, temp_dir = info["gcs_address"], info["temp_dir"]
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
            })
            procs.append(subprocess.Popen(args.command, env=env))
        status = _monitor(args, procs, servers, stopping)
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
        if temp_dir and os.environ.get("PLEXNET_KEEP_RAY_LOGS", "") in ("", "0"):
            import shutil
            shutil.rmtree(temp_dir, ignore_errors=True)
        for s, h in old.items():
            signal.signal(s, h)
    return status


def _exit_code(rc: int) -> int:
    return 128 - rc if rc < 0 else rc


def _monitor(args: argparse.Namespace, procs: list[subprocess.Popen], servers: list[Any],
             stopping: dict) -> int:
    import ray
    first_fail: int | None = None
    fail_time = None
    reported: set[int] = set()
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
            for i, s in enumerate(servers):
                try:
                    ray.get(s.ping.remote(), timeout=10)
                except Exception as e:  # noqa: BLE001
                    if fail_time is None:
                        _say(args, f"server {i} is gone ({type(e).__name__}); workers will fail")
                        first_fail, fail_time = 1, time.monotonic()
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
