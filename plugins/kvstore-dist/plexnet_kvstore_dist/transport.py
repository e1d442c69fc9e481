"""The transport interface between a worker's kvstore and the servers.

``KVStoreDist`` only talks to a ``Transport``: non-blocking ``push``/``pull`` per server
(one call carries every key of that server), blocking ``init``/``command``/``barrier``,
and membership (``check`` raises once a peer is known to be dead). ``RayTransport``
(``ray_transport.py``) implements it on Ray actors; an MPI or raw-socket transport can
implement the same few methods.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Sequence

__all__ = ["Transport", "PullHandle"]


class PullHandle(ABC):
    """An in-flight pull from one server."""

    @abstractmethod
    def result(self, timeout: float) -> list[Any]:
        """The arrays, in the order of the pulled items; raises ``KVStoreError`` on a
        failure or after ``timeout`` seconds."""


class Transport(ABC):
    rank: int
    num_workers: int
    num_servers: int
    #: what the servers said at connection (``restored_round`` ...)
    info: dict[str, Any]

    @abstractmethod
    def init(self, per_server: dict[int, list[tuple[tuple, Any]]]) -> None:
        """Create keys on the servers (blocking)."""

    #: whether ``push(..., then_pull=...)`` is honoured (see ``push``)
    pulls_ahead: bool = False

    @abstractmethod
    def push(self, server: int, items: list[tuple[tuple, Any]],
             then_pull: list[tuple[tuple, int]] | None = None) -> None:
        """Send pushes to one server; returns once the data is handed over (the caller
        may reuse its buffers). Failures surface at later calls. ``then_pull``
        (``(skey, version)`` items, when ``pulls_ahead``): the server answers them as a
        pull once the push is applied, and a ``pull`` of exactly these items that
        follows takes that answer without a request of its own; others ignore it."""

    @abstractmethod
    def pull(self, server: int, items: list[tuple[tuple, int]], dests: Sequence[Any] | None = None) -> PullHandle:
        """Ask one server for ``(skey, version)`` items; does not block. ``dests``: per
        item a flat array the transport may receive the value into (then the result is
        that array), or None."""

    def wait(self, handles: Sequence[PullHandle], timeout: float) -> list[list[Any]]:
        return [h.result(timeout) for h in handles]

    def when_done(self, handles: Sequence[PullHandle], callback: Any) -> bool:
        """Optionally call ``callback(results, error)`` when every handle finished, from
        the transport's own thread; return False to let the caller wait instead."""
        return False

    def sending(self) -> bool:
        """Whether a send is in progress (then a new one would wait for it)."""
        return False

    def send_buffer(self, server: int, skey: tuple, n: int, dtype: Any) -> Any:
        """Optionally a buffer to write a pushed slice into (e.g. shared memory)."""
        return None

    @abstractmethod
    def command(self, name: str, *args: Any, servers: Sequence[int] | None = None) -> list[Any]:
        """Run a control method on servers (all by default) and wait for the results."""

    @abstractmethod
    def barrier(self) -> None:
        """Wait until every worker arrives (raises on timeout or a dead peer)."""

    @abstractmethod
    def check(self) -> None:
        """Raise ``KVStoreError`` if a server or a worker is known to be dead."""

    @abstractmethod
    def close(self) -> None:
        """Tell the servers this worker is done and release resources."""
