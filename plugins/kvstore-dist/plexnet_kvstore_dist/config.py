"""Settings from the environment (set by ``plexnet launch``, or by hand).

Job (set by the launcher for each worker; MXNet's ``DMLC_*`` names are set too):

``PLEXNET_KV_JOB``            job id (the server actors' names derive from it)
``PLEXNET_RAY_ADDRESS``       Ray GCS address to join
``PLEXNET_RAY_NAMESPACE``     Ray namespace of the job's actors
``PLEXNET_WORKER_RANK``       this worker's rank (``DMLC_WORKER_ID`` is accepted)
``PLEXNET_NUM_WORKERS``       number of workers (``DMLC_NUM_WORKER``)
``PLEXNET_NUM_SERVERS``       number of server shards (``DMLC_NUM_SERVER``)

Tuning (read by workers and servers; the launcher passes its environment on):

``PLEXNET_KVSTORE_TIMEOUT``             seconds any wait may take (default 120)
``PLEXNET_KVSTORE_HEARTBEAT_TIMEOUT``   a worker silent this long is dead (default 10)
``PLEXNET_KVSTORE_CHECKPOINT_DIR``      servers checkpoint here and resume from it
``PLEXNET_KVSTORE_CHECKPOINT_EVERY``    dist_sync: every N completed rounds (default 10)
``PLEXNET_KVSTORE_CHECKPOINT_SECONDS``  dist_async: at most this often (default 30)
``MXNET_KVSTORE_BIGARRAY_BOUND`` / ``PLEXNET_KVSTORE_BIGARRAY_BOUND``
                                        arrays this big are sliced over all servers
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

__all__ = ["JobEnv", "job_env", "server_settings"]


def _get(*names: str, default: str | None = None) -> str | None:
    for n in names:
        v = os.environ.get(n)
        if v not in (None, ""):
            return v
    return default


@dataclass
class JobEnv:
    job: str
    address: str | None
    namespace: str
    rank: int
    num_workers: int
    num_servers: int


def job_env() -> JobEnv | None:
    """The job this process is a worker of, or None when not started by a launcher."""
    job = _get("PLEXNET_KV_JOB")
    if job is None:
        return None
    rank = _get("PLEXNET_WORKER_RANK", "DMLC_WORKER_ID")
    nw = _get("PLEXNET_NUM_WORKERS", "DMLC_NUM_WORKER")
    ns = _get("PLEXNET_NUM_SERVERS", "DMLC_NUM_SERVER")
    if rank is None or nw is None or ns is None:
        raise RuntimeError("PLEXNET_KV_JOB is set but PLEXNET_WORKER_RANK / PLEXNET_NUM_WORKERS / "
                           "PLEXNET_NUM_SERVERS are not; start workers with `plexnet launch`")
    return JobEnv(job=job, address=_get("PLEXNET_RAY_ADDRESS"),
                  namespace=_get("PLEXNET_RAY_NAMESPACE", default="plexnet-kvstore") or "plexnet-kvstore",
                  rank=int(rank), num_workers=int(nw), num_servers=int(ns))


def server_settings() -> dict[str, Any]:
    """Keyword arguments for ``ServerCore`` from the environment."""
    return {
        "timeout": float(_get("PLEXNET_KVSTORE_TIMEOUT", default="120")),
        "heartbeat_timeout": float(_get("PLEXNET_KVSTORE_HEARTBEAT_TIMEOUT", default="10")),
        "checkpoint_dir": _get("PLEXNET_KVSTORE_CHECKPOINT_DIR"),
        "checkpoint_every": int(_get("PLEXNET_KVSTORE_CHECKPOINT_EVERY", default="10")),
        "checkpoint_seconds": float(_get("PLEXNET_KVSTORE_CHECKPOINT_SECONDS", default="30")),
    }


def wait_timeout() -> float:
    """Worker-side backstop: a little longer than the servers' own timeout."""
    return float(_get("PLEXNET_KVSTORE_TIMEOUT", default="120")) + 30.0
