"""Atomic file writing: every file plexnet writes goes through here.

A write goes to a temporary file in the target's own folder (same filesystem, so the
rename is atomic), is flushed and fsynced, then renamed over the target with
``os.replace`` and the folder is fsynced. A process killed at any point leaves either
the old file or the new one, never a truncated or empty file.

* Temporary files are named ``.BASENAME.PID.RANDOM.plexnet-tmp``. A killed writer
  leaves one behind; the next successful write of the same target removes those whose
  writer process is gone (or that are older than a day), plus the temp files earlier
  plexnet versions left (``BASENAME.tmp-PID``, ``BASENAME.tmpPID``, ``.BASENAME.*.tmp``).
* A new file is created with mode ``0o666 & ~umask``, as ``open(path, 'w')`` would;
  replacing an existing file keeps that file's permission bits.
"""
from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator
from typing import IO

__all__ = ["TMP_SUFFIX", "AtomicFile", "atomic_open", "atomic_write", "cleanup_stale_temps"]

TMP_SUFFIX = ".plexnet-tmp"
#: a temp file whose writer cannot be told alive or dead (no pid in its name, or another
#: host) is removed once it is this old
_STALE_AGE_S = 24 * 3600.0
_LEGACY_AGE_S = 600.0


def _tmp_path(path: str) -> str:
    folder, base = os.path.split(path)
    return os.path.join(folder, f".{base}.{os.getpid()}.{secrets.token_hex(4)}{TMP_SUFFIX}")


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: exists, owned by someone else
        return True
    return True


def cleanup_stale_temps(path: str, keep: str | None = None) -> list[str]:
    """Remove temp files that earlier, killed writes of ``path`` left in its folder.

    A temp file of this module's naming is removed when its writer process no longer
    exists, or when it is older than a day (its writer may run on another host). Returns
    the removed paths.
    """
    folder, base = os.path.split(os.path.abspath(path))
    esc = re.escape(base)
    ours = re.compile(rf"^\.{esc}\.(\d+)\.[0-9a-f]+{re.escape(TMP_SUFFIX)}$")
    legacy = re.compile(rf"^(?:{esc}\.tmp-?(\d+)|\.{esc}\.[A-Za-z0-9_]+\.tmp)$")
    removed: list[str] = []
    try:
        with os.scandir(folder) as it:  # cheap prefilter: the regexes run on candidates only
            names = [e.name for e in it if e.name.startswith((f".{base}.", f"{base}.tmp"))]
    except OSError:
        return removed
    now = time.time()
    for name in names:
        m = ours.match(name) or legacy.match(name)
        if not m:
            continue
        full = os.path.join(folder, name)
        if keep is not None and full == os.path.abspath(keep):
            continue
        pid = m.group(1)
        try:
            age = now - os.stat(full).st_mtime
        except OSError:
            continue
        if pid is None:
            stale = age > _LEGACY_AGE_S
        else:  # our own pid: maybe a concurrent write in another thread, so alive
            stale = age > _STALE_AGE_S or not _pid_alive(int(pid))
        if stale:
            with contextlib.suppress(OSError):
                os.unlink(full)
                removed.append(full)
    return removed


def _fsync_dir(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class AtomicFile:
    """A binary file that becomes ``path`` only on :meth:`commit`.

    Until then the data lives in a temp file next to ``path``; :meth:`abort` (or a
    failure during commit) removes the temp file and leaves ``path`` as it was. A
    symbolic link is followed (the file it points to is replaced, the link stays). A
    ``path`` that exists and is not a regular file (``/dev/null``, a FIFO) is written
    directly: renaming over a device node would replace it.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.path.realpath(os.fspath(path))
        self.done = False
        try:
            direct = not stat.S_ISREG(os.stat(self.path).st_mode)
        except FileNotFoundError:
            direct = False
        if direct:
            self.tmp = None
            self.file: IO[bytes] = open(self.path, "wb")  # noqa: SIM115 - closed by commit/abort
            return
        self.tmp = _tmp_path(self.path)
        # 0o666 here: the kernel applies the umask, as for a plain open(path, 'w')
        fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        self.file = os.fdopen(fd, "wb")

    def write(self, data: bytes | bytearray | memoryview) -> int:
        return self.file.write(data)

    def tell(self) -> int:
        return self.file.tell()

    def commit(self) -> None:
        """Flush, fsync and rename the temp file over ``path``; then tidy stale temps."""
        if self.done:
            return
        self.done = True
        if self.tmp is None:
            self.file.close()
            return
        try:
            self.file.flush()
            os.fsync(self.file.fileno())
            try:
                os.chmod(self.tmp, os.stat(self.path).st_mode & 0o7777)  # keep an existing file's mode
            except FileNotFoundError:
                pass
            self.file.close()
            os.replace(self.tmp, self.path)
        except BaseException:
            self._discard()
            raise
        _fsync_dir(os.path.dirname(self.path))
        cleanup_stale_temps(self.path)

    def _discard(self) -> None:
        with contextlib.suppress(Exception):
            self.file.close()
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)

    def abort(self) -> None:
        """Drop what was written; ``path`` keeps its old content (or stays absent)."""
        if not self.done:
            self.done = True
            self._discard()


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike) -> Iterator[IO[bytes]]:
    """``with atomic_open(p) as f: f.write(...)``: ``p`` appears only if the block succeeds."""
    af = AtomicFile(path)
    try:
        yield af.file
    except BaseException:
        af.abort()
        raise
    af.commit()


def atomic_write(path: str | os.PathLike, data: bytes | bytearray | memoryview | str) -> None:
    """Write ``data`` (``str`` is written as UTF-8) to ``path`` atomically."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    with atomic_open(path) as f:
        f.write(data)
