"""The Ray transport: server shards are Ray actors, workers are Ray drivers.

* Servers: one async actor per shard (``RayServer``), named
  ``plexnet-kv-<job>-server-<i>`` in the job's namespace, owned by the process that
  created it (the launcher), ``num_cpus=0``, not restarted by Ray (a restarted actor
  would come back empty; a job restart resumes from the servers' checkpoints instead).
* Data: numpy arrays travel as Ray call arguments and results (large ones through the
  shared-memory object store, read zero-copy by the receiver); nothing but arrays,
  tuples, ints and strings is sent, and the optimizer goes as JSON.
* Membership: each worker sends a heartbeat to every server each second from a daemon
  thread; a server that hears nothing from a worker for ``heartbeat_timeout`` seconds,
  or that the launcher tells about a dead worker process, fails the job; a dead server
  shows up as ``RayActorError`` at once. Every wait has a timeout.
* Loopback only: a local Ray instance is started on 127.0.0.1 without dashboard, in its
  own temp dir (``local_ray_init``).
"""
from __future__ import annotations

import os

# Ray picks the machine's external address unless told otherwise; keep everything on
# loopback (this must be set before ray is imported).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

import atexit  # noqa: E402
import collections  # noqa: E402
import contextlib  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from typing import Any, Sequence  # noqa: E402

import ray  # noqa: E402
from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError  # noqa: E402

from plexnet.kvstore.base import KVStoreError  # noqa: E402

from .server import ServerCore, ServerError  # noqa: E402
from .watchdog import make_private  # noqa: E402
from .transport import PullHandle, Transport  # noqa: E402

__all__ = ["RayServer", "RayTransport", "local_ray_init", "start_servers", "server_name", "translate_error",
           "NAMESPACE", "choose_plane", "transport_mode"]

NAMESPACE = "plexnet-kvstore"


def server_name(job: str, i: int) -> str:
    return f"plexnet-kv-{job}-server-{i}"


def local_ray_init(temp_dir: str | None = None, num_cpus: int | None = None, namespace: str = NAMESPACE,
                   quiet: bool = True) -> dict[str, Any]:
    """Start a private Ray instance on 127.0.0.1 (no dashboard, own temp dir); returns
    ``ray.init``'s address info, with ``temp_dir`` (the folder to remove at the end).

    The temp dir is private: without ``temp_dir``, Ray's folder is ``r`` inside a fresh
    ``mkdtemp`` folder (mode 0700); Ray's habit of making its folders world-writable
    (0777, for machines shared by several users) is switched off while it starts, and
    whatever it made group/world-writable anyway is fixed afterwards."""
    own = temp_dir is None
    if own:
        # short: Ray's unix socket paths must stay under ~107 characters
        outer = tempfile.mkdtemp(prefix="pxray-", dir="/tmp")
        temp_dir = os.path.join(outer, "r")
    kw: dict[str, Any] = dict(_node_ip_address="127.0.0.1", include_dashboard=False, _temp_dir=temp_dir,
                              namespace=namespace, log_to_driver=not quiet, configure_logging=True,
                              logging_level="WARNING")
    if num_cpus is not None:
        kw["num_cpus"] = num_cpus
    with _private_dirs():
        ctx = ray.init(**kw)
    make_private(outer if own else temp_dir)
    if own and os.environ.get("PLEXNET_KEEP_RAY_LOGS", "") in ("", "0"):
        atexit.register(_shutdown_and_remove, outer)
    info = dict(ctx.address_info)
    info["temp_dir"] = outer if own else temp_dir
    info["ray_temp_dir"] = temp_dir
    return info


@contextlib.contextmanager
def _private_dirs() -> Any:
    """Ray (``ray._common.utils.try_make_directory_shared``) chmods every folder it makes
    to 0777; ours are the job's own."""
    try:
        from ray._common import utils as mod
    except ImportError:  # another Ray version: make_private fixes the modes afterwards
        mod = None
    old = getattr(mod, "try_make_directory_shared", None)
    if old is None:
        yield
        return
    mod.try_make_directory_shared = lambda path: None
    try:
        yield
    finally:
        mod.try_make_directory_shared = old


def _shutdown_and_remove(temp_dir: str) -> None:
    """At exit: stop Ray and remove the private temp dir (its logs and sockets)."""
    try:
        ray.shutdown()
    except Exception:  # noqa: BLE001
        pass
    import shutil
    shutil.rmtree(temp_dir, ignore_errors=True)


@ray.remote(num_cpus=0, max_restarts=0, max_concurrency=1000)
class RayServer:
    """A server shard: forwards every call to a ``ServerCore``."""

    def __init__(self, shm_dir: str | None = None, tcp: bool = True, **kw: Any) -> None:
        self.dp = None
        if shm_dir:
            from .shm_transport import DataPlaneServer, ShmAllocator
            alloc = ShmAllocator(shm_dir, kw["server_id"])
            self.core = ServerCore(alloc=alloc, **kw)
            self.dp = DataPlaneServer(self.core, shm_dir, alloc)
        else:
            self.core = ServerCore(**kw)
        self.tcp = None
        if tcp:
            from .tcp_transport import TcpDataPlaneServer
            self.tcp = TcpDataPlaneServer(self.core)
        self.shm_dir = shm_dir
        self.socket: str | None = None
        self.tcp_addr: tuple[str, int] | None = None
        self.host_nonce: str | None = None
        self.profiler_state: dict[str, Any] = {}   # the server profiler's file name (server_profiler.run)

    async def start_data_plane(self) -> str | None:
        if self.dp is not None:
            self.socket = await self.dp.start()
            self.host_nonce = write_host_nonce(self.shm_dir, self.core.server_id)  # type: ignore[arg-type]
        if self.tcp is not None:
            self.tcp_addr = await self.tcp.start()
        return self.socket

    async def hello(self, rank: int) -> dict:
        info = await self.core.hello(rank)
        info.update(socket=self.socket, shm_dir=self.shm_dir, host_nonce=self.host_nonce,
                    tcp=list(self.tcp_addr) if self.tcp_addr else None,
                    token=self.tcp.token if self.tcp is not None else None)
        return info

    async def heartbeat(self, rank: int) -> str | None:
        return await self.core.heartbeat(rank)

    async def leave(self, rank: int) -> None:
        await self.core.leave(rank)

    async def worker_failed(self, rank: int, reason: str) -> None:
        await self.core.worker_failed(rank, reason)

    async def ping(self) -> int:
        return await self.core.ping()

    async def info(self) -> dict:
        return await self.core.info()

    async def init(self, rank: int, items: list) -> None:
        await self.core.init(rank, items)

    async def set_optimizer(self, config_json: str) -> None:
        await self.core.set_optimizer(config_json)

    async def profiler(self, body: str) -> str:
        """A ``profile_process='server'`` profiler call, run on this server's profiler."""
        from .server_profiler import run
        return run(body, self.core.server_id, self.profiler_state)

    async def set_mode(self, mode: str) -> None:
        await self.core.set_mode(mode)

    async def push(self, rank: int, items: list) -> None:
        await self.core.push(rank, items)

    async def pull(self, rank: int, items: list) -> list:
        return await self.core.pull(rank, items)

    async def barrier(self, rank: int, gen: int) -> None:
        await self.core.barrier(rank, gen)

    async def checkpoint(self) -> int:
        return await self.core.checkpoint()


def start_servers(job: str, num_servers: int, num_workers: int, mode: str, *, namespace: str | None = None,
                  tcp: bool | None = None, actor_options: Sequence[dict] | None = None,
                  **core_kw: Any) -> list[Any]:
    """Create the job's server actors (named, in ``namespace``) and wait until they run.
    ``tcp``: open the TCP data plane (default: unless ``PLEXNET_KVSTORE_TRANSPORT=ray``);
    ``actor_options``: extra Ray options per server (e.g. resources that place it)."""
    if tcp is None:
        tcp = transport_mode() != "ray"
    handles = []
    for i in range(num_servers):
        opts: dict[str, Any] = {"name": server_name(job, i)}
        if namespace is not None:
            opts["namespace"] = namespace
        if actor_options is not None:
            opts.update(actor_options[i])
        handles.append(RayServer.options(**opts).remote(server_id=i, num_servers=num_servers, tcp=tcp,
                                                        num_workers=num_workers, mode=mode, **core_kw))
    ray.get([h.ping.remote() for h in handles], timeout=120)
    ray.get([h.start_data_plane.remote() for h in handles], timeout=60)
    return handles


def make_job_dir(job: str) -> str | None:
    """The job's directory for the shared-memory data plane (None: use Ray only, when
    ``PLEXNET_KVSTORE_TRANSPORT=ray`` or /dev/shm is missing)."""
    if transport_mode() in ("ray", "tcp"):
        return None
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    if base is None:
        return None
    path = os.path.join(base, f"pxkv-{job}")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def remove_job_dir(path: str | None) -> None:
    if path and os.path.basename(path).startswith("pxkv-"):
        import shutil
        shutil.rmtree(path, ignore_errors=True)


TRANSPORTS = ("auto", "shm", "tcp", "ray")


def transport_mode() -> str:
    """``PLEXNET_KVSTORE_TRANSPORT``: ``auto`` (default: shared memory when every server
    is on this host, else TCP), ``shm``, ``tcp`` or ``ray`` (Ray calls carry the data)."""
    mode = os.environ.get("PLEXNET_KVSTORE_TRANSPORT", "auto").strip().lower() or "auto"
    if mode not in TRANSPORTS:
        raise KVStoreError(f"PLEXNET_KVSTORE_TRANSPORT={mode!r}: choose one of {', '.join(TRANSPORTS)}")
    return mode


def write_host_nonce(shm_dir: str, server: int) -> str:
    """A random token in the job's shared-memory folder: a worker that reads the same
    token there shares this host's /dev/shm with the server."""
    import secrets
    nonce = secrets.token_hex(8)
    path = os.path.join(shm_dir, f"s{server}.host")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(nonce)
    return nonce


def server_is_local(info: dict) -> bool:
    """Whether the server described by ``hello``'s ``info`` shares this host (its Unix
    socket and its shared-memory folder are the ones this process sees)."""
    sock, d, nonce = info.get("socket"), info.get("shm_dir"), info.get("host_nonce")
    if not (sock and d and nonce and os.path.exists(sock)):
        return False
    try:
        with open(os.path.join(d, f"s{info['server_id']}.host")) as f:
            return f.read() == nonce
    except OSError:
        return False


def choose_plane(infos: Sequence[dict], mode: str, is_local: Any = server_is_local) -> str:
    """The data plane for servers described by ``infos``: ``shm`` when all of them are on
    this host, ``tcp`` otherwise (or as forced by ``mode``), ``ray`` when forced or when
    the servers offer no data plane."""
    if mode == "ray":
        return "ray"
    local = all(is_local(i) for i in infos)
    if mode == "shm" and not local:
        raise KVStoreError("PLEXNET_KVSTORE_TRANSPORT=shm, but the kvstore servers "
                           f"{[i.get('server_id') for i in infos if not is_local(i)]} are not on this host (or "
                           "were started without shared memory); use auto or tcp")
    if mode in ("auto", "shm") and local:
        return "shm"
    if all(i.get("tcp") and i.get("token") for i in infos):
        return "tcp"
    if mode == "tcp":
        raise KVStoreError("PLEXNET_KVSTORE_TRANSPORT=tcp, but the kvstore servers were started without the TCP "
                           "data plane (the launcher ran with PLEXNET_KVSTORE_TRANSPORT=ray)")
    return "ray"


def translate_error(e: BaseException, server: int | None = None) -> KVStoreError:
    """A clear ``KVStoreError`` for a Ray failure."""
    where = f"kvstore server {server}" if server is not None else "a kvstore server"
    if isinstance(e, KVStoreError):
        return e
    if isinstance(e, RayTaskError):
        cause = getattr(e, "cause", None)
        if isinstance(cause, ServerError):
            return KVStoreError(str(cause))
        if isinstance(cause, BaseException):
            return KVStoreError(f"{where} failed: {type(cause).__name__}: {cause}")
    if isinstance(e, RayActorError):
        return KVStoreError(f"{where} died ({type(e).__name__}); the job can not go on. Restart it: servers resume "
                            f"from their last checkpoint when PLEXNET_KVSTORE_CHECKPOINT_DIR is set")
    if isinstance(e, GetTimeoutError):
        return KVStoreError(f"timed out waiting for {where}")
    return KVStoreError(f"{where}: {type(e).__name__}: {e}")


class _RayPull(PullHandle):
    __slots__ = ("transport", "server", "ref")

    def __init__(self, transport: "RayTransport", server: int, ref: Any) -> None:
        self.transport, self.server, self.ref = transport, server, ref

    def result(self, timeout: float) -> list[Any]:
        return self.transport.wait([self], timeout)[0]


class RayTransport(Transport):
    """Worker side of the Ray transport (see the module docstring)."""

    def __init__(self, job: str, rank: int, num_workers: int, servers: Sequence[Any], *,
                 heartbeat_interval: float = 1.0, wait_timeout: float = 150.0, owned: bool = False) -> None:
        self.job = job
        self.rank = rank
        self.num_workers = num_workers
        self.servers = list(servers)
        self.num_servers = len(self.servers)
        self.wait_timeout = wait_timeout
        self.owned = owned  # standalone: this process created the servers
        self.failure: KVStoreError | None = None
        self._pushes: collections.deque = collections.deque()  # (server, ref) not yet checked
        self._lock = threading.Lock()
        self._barrier_gen = 0
        self._closed = False
        try:
            infos = ray.get([s.hello.remote(rank) for s in self.servers], timeout=60)
        except Exception as e:  # noqa: BLE001
            raise translate_error(e) from e
        self.info = {"restored_round": min(i["restored_round"] for i in infos), "servers": infos}
        self.dp: Any = None
        self.plane = choose_plane(infos, transport_mode())
        if self.plane == "shm":
            from .shm_transport import DataPlaneClient
            self.dp = DataPlaneClient(self, infos[0]["shm_dir"], [i["socket"] for i in infos])
        elif self.plane == "tcp":
            from .tcp_transport import TcpDataPlaneClient
            self.dp = TcpDataPlaneClient(self, [tuple(i["tcp"]) for i in infos], [i["token"] for i in infos])
        #: push(..., then_pull=...) is answered (the TCP data plane)
        self.pulls_ahead = self.plane == "tcp"
        self._stop = threading.Event()
        self._hb_interval = heartbeat_interval
        self._hb = threading.Thread(target=self._heartbeat_loop, name=f"plexnet-kv-heartbeat-{rank}", daemon=True)
        self._hb.start()
        atexit.register(self.close)

    @classmethod
    def connect(cls, job: str, rank: int, num_workers: int, num_servers: int, namespace: str,
                timeout: float = 60.0, **kw: Any) -> "RayTransport":
        deadline = time.monotonic() + timeout
        servers = []
        for i in range(num_servers):
            while True:
                try:
                    servers.append(ray.get_actor(server_name(job, i), namespace=namespace))
                    break
                except ValueError:
                    if time.monotonic() > deadline:
                        raise KVStoreError(f"kvstore server {i} of job {job!r} was not found in Ray namespace "
                                           f"{namespace!r} within {timeout:.0f} s; start workers with "
                                           f"`plexnet launch`") from None
                    time.sleep(0.2)
        return cls(job, rank, num_workers, servers, **kw)

    # -- membership ------------------------------------------------------------------------------
    def _set_failure(self, err: KVStoreError) -> None:
        with self._lock:
            if self.failure is None:
                self.failure = err

    def check(self) -> None:
        if self.failure is not None:
            raise self.failure

    def _heartbeat_loop(self) -> None:
        while not self._stop.wait(self._hb_interval):
            refs = [s.heartbeat.remote(self.rank) for s in self.servers]
            for i, ref in enumerate(refs):
                try:
                    msg = ray.get(ref, timeout=max(10.0, 5 * self._hb_interval))
                except Exception as e:  # noqa: BLE001
                    if not self._stop.is_set():
                        self._set_failure(translate_error(e, i))
                    continue
                if msg:
                    self._set_failure(KVStoreError(msg))
            if self.dp is not None:
                self.dp.collect()
                self.dp.expire(self.wait_timeout, self.failure)
            else:
                self._collect_pushes(block=False)

    def _collect_pushes(self, block: bool, servers: Sequence[int] | None = None, timeout: float = 0.0) -> None:
        """Surface errors of finished pushes (all of them, or those to ``servers``)."""
        with self._lock:
            items = list(self._pushes)
        if not items:
            return
        pick = [(s, r) for s, r in items if servers is None or s in servers]
        if not pick:
            return
        refs = [r for _, r in pick]
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=timeout if block else 0)
        if not ready:
            return
        ready_set = set(ready)
        for s, r in pick:
            if r in ready_set:
                try:
                    ray.get(r)
                except Exception as e:  # noqa: BLE001
                    self._set_failure(translate_error(e, s))
        with self._lock:
            self._pushes = collections.deque((s, r) for s, r in self._pushes if r not in ready_set)

    # -- data ----------------------------------------------------------------------------------------
    def init(self, per_server: dict[int, list[tuple[tuple, Any]]]) -> None:
        self.check()
        refs = {s: self.servers[s].init.remote(self.rank, items) for s, items in per_server.items()}
        self._get_all(refs)

    def sending(self) -> bool:
        """Whether the data plane is in the middle of a send (a small push or pull on the
        calling thread would wait for it: the worker then hands it to the engine)."""
        return self.dp is not None and self.dp.sending()

    def send_buffer(self, server: int, skey: tuple, n: int, dtype: Any) -> Any:
        """A buffer to write a pushed slice into (shared memory), or None."""
        return self.dp.send_buffer(server, skey, n, dtype) if self.dp is not None else None

    def push(self, server: int, items: list[tuple[tuple, Any]],
             then_pull: list[tuple[tuple, int]] | None = None) -> None:
        if self.dp is not None:
            if then_pull is not None and self.plane == "tcp":
                self.dp.push(server, items, then_pull)
            else:
                self.dp.push(server, items)
            return
        ref = self.servers[server].push.remote(self.rank, items)
        with self._lock:
            self._pushes.append((server, ref))
            n = len(self._pushes)
        if n > 256:  # bound the refs we hold
            self._collect_pushes(block=True, timeout=1.0)

    def pull(self, server: int, items: list[tuple[tuple, int]], dests: Sequence[Any] | None = None) -> PullHandle:
        if self.plane == "tcp":
            return self.dp.pull(server, items, dests)
        if self.dp is not None:
            return self.dp.pull(server, items)
        return _RayPull(self, server, self.servers[server].pull.remote(self.rank, items))

    def wait(self, handles: Sequence[PullHandle], timeout: float | None = None) -> list[list[Any]]:
        if self.dp is not None:
            return self._wait_futures(handles, self.wait_timeout if timeout is None else timeout)
        refs = [h.ref for h in handles]  # type: ignore[attr-defined]
        timeout = self.wait_timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while True:
            try:
                return ray.get(refs, timeout=0.5)
            except GetTimeoutError:
                self.check()
                if time.monotonic() > deadline:
                    raise KVStoreError(f"worker {self.rank}: no answer from the kvstore servers within "
                                       f"{timeout:.0f} s") from None
            except Exception as e:  # noqa: BLE001
                server = self._server_of_failed(handles)
                err = translate_error(e, server)
                self._collect_pushes(block=False)
                if self.failure is not None:
                    raise self.failure from e
                raise err from e

    def when_done(self, handles: Sequence[PullHandle], callback: Any) -> bool:
        """Call ``callback(results, error)`` from the thread that completes the last
        handle; False when this transport can not (then the caller waits itself)."""
        if self.dp is None:
            return False
        recycle = getattr(self.dp, "recycle", None)
        if len(handles) == 1:  # the common case (one server), without the bookkeeping below
            h = handles[0]

            def one(fut: Any) -> None:
                e = fut.exception()
                if e is not None:
                    callback([None], self.failure if self.failure is not None else e)
                    return
                res = fut.result()
                callback([res], None)
                if recycle is not None:  # the callback copied the values out
                    recycle(h.server, res)  # type: ignore[attr-defined]

            self.dp.track(h.fut)  # type: ignore[attr-defined]
            h.fut.add_done_callback(one)  # type: ignore[attr-defined]
            return True
        n = len(handles)
        results: list[Any] = [None] * n
        state = {"left": n, "err": None}
        lock = threading.Lock()

        def done(i: int, fut: Any) -> None:
            e = fut.exception()
            with lock:
                if e is not None and state["err"] is None:
                    state["err"] = e
                else:
                    results[i] = None if e is not None else fut.result()
                state["left"] -= 1
                last = state["left"] == 0
            if last:
                err: Any = state["err"]
                if err is not None and self.failure is not None:
                    err = self.failure
                callback(results, err)
                if recycle is not None:  # the callback copied the values out
                    for h, r in zip(handles, results):
                        if r is not None:
                            recycle(h.server, r)  # type: ignore[attr-defined]

        for i, h in enumerate(handles):
            self.dp.track(h.fut)  # type: ignore[attr-defined]
            h.fut.add_done_callback(lambda f, i=i: done(i, f))  # type: ignore[attr-defined]
        return True

    def _wait_futures(self, handles: Sequence[PullHandle], timeout: float) -> list[list[Any]]:
        import concurrent.futures as cf
        deadline = time.monotonic() + timeout
        out = []
        for h in handles:
            while True:
                try:
                    out.append(h.fut.result(0.5))  # type: ignore[attr-defined]
                    break
                except cf.TimeoutError:
                    self.check()
                    if time.monotonic() > deadline:
                        raise KVStoreError(f"worker {self.rank}: no answer from kvstore server "
                                           f"{h.server} within {timeout:.0f} s") from None  # type: ignore[attr-defined]
                except KVStoreError:
                    self.dp.collect()
                    if self.failure is not None:
                        raise self.failure from None
                    raise
        return out

    def _server_of_failed(self, handles: Sequence[PullHandle]) -> int | None:
        for h in handles:
            try:
                ray.get(h.ref, timeout=0)  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001
                return h.server  # type: ignore[attr-defined]
        return None

    def _get_all(self, refs: dict[int, Any], timeout: float | None = None) -> dict[int, Any]:
        out = {}
        deadline = time.monotonic() + (self.wait_timeout if timeout is None else timeout)
        for s, ref in refs.items():
            while True:
                try:
                    out[s] = ray.get(ref, timeout=0.5)
                    break
                except GetTimeoutError:
                    self.check()
                    if time.monotonic() > deadline:
                        raise KVStoreError(f"worker {self.rank}: kvstore server {s} did not answer in time") from None
                except Exception as e:  # noqa: BLE001
                    raise translate_error(e, s) from e
        return out

    def command(self, name: str, *args: Any, servers: Sequence[int] | None = None) -> list[Any]:
        self.check()
        idx = range(self.num_servers) if servers is None else servers
        refs = {s: getattr(self.servers[s], name).remote(*args) for s in idx}
        res = self._get_all(refs)
        return [res[s] for s in idx]

    def barrier(self) -> None:
        self.check()
        self._barrier_gen += 1
        self._get_all({0: self.servers[0].barrier.remote(self.rank, self._barrier_gen)})

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        try:
            if self.failure is None:
                if self.dp is not None:
                    self.dp.collect(wait=5.0)
                else:
                    self._collect_pushes(block=True, timeout=5.0)
            if self.dp is not None:
                self.dp.close()
            ray.get([s.leave.remote(self.rank) for s in self.servers], timeout=5)
        except Exception:  # noqa: BLE001 - best effort at shutdown
            pass
        if self.owned:
            for s in self.servers:
                try:
                    ray.kill(s)
                except Exception:  # noqa: BLE001
                    pass
            remove_job_dir(getattr(self, "job_dir", None))
