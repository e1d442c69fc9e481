"""The launcher's watchdog: nothing of a job outlives its launcher.

``plexnet launch`` starts this as a separate process in a session of its own (so a
Ctrl-C in the terminal or a SIGKILL of the launcher does not reach it) and keeps a pipe
to its stdin open. Every process of the job carries the environment variable
``PLEXNET_LAUNCH_JOB=<job>``: the launcher sets it before starting Ray, so Ray's GCS,
raylet, the server actors and the worker commands inherit it. Ray's dashboard and
runtime-env agents get a reduced environment from the raylet and rename themselves
(``setproctitle`` overwrites the command line and the environment block), so a process
that holds a file open inside the job's Ray temp dir (its logs) counts as the job's
too. The launcher sends the paths to remove (``rmtree PATH`` lines), which are also
those folders.

When the pipe closes without a final ``done`` line, the launcher died without cleaning
up (SIGKILL, a crash): the watchdog SIGTERMs every process of the same user carrying
the job's marker, SIGKILLs those still alive after a short grace, and removes the paths.
On a clean exit the launcher cleans up itself and writes ``done``; the watchdog then
exits without touching anything.

Linux only (``/proc``); elsewhere the launcher runs without a watchdog.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

__all__ = ["MARKER", "find_marked", "kill_marked", "make_private", "start", "main"]

#: environment variable every process of a launched job carries
MARKER = "PLEXNET_LAUNCH_JOB"


def _holds_file_in(pid: int, dirs: tuple[str, ...]) -> bool:
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(dirs):
            return True
    return False


def find_marked(job: str, exclude: tuple[int, ...] = (), dirs: tuple[str, ...] = ()) -> list[int]:
    """Pids of this user's processes whose environment has ``PLEXNET_LAUNCH_JOB=job``,
    or that hold a file open under one of ``dirs``."""
    needle = f"{MARKER}={job}".encode()
    prefixes = tuple(os.path.join(os.path.abspath(d), "") for d in dirs)
    me, uid = os.getpid(), os.getuid()
    out = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        pid = int(name)
        if pid == me or pid in exclude:
            continue
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if needle + b"\0" in env or env.endswith(needle) or (prefixes and _holds_file_in(pid, prefixes)):
            out.append(pid)
    return out


def kill_marked(job: str, grace: float = 2.0, exclude: tuple[int, ...] = (),
                dirs: tuple[str, ...] = ()) -> list[int]:
    """SIGTERM the job's processes (see ``find_marked``), then SIGKILL what is left after
    ``grace`` seconds (bounded: gives up after ``grace + 5`` seconds). Returns the pids
    found first."""
    first = find_marked(job, exclude, dirs)
    for pid in first:
        try:
            os.kill(pid, signal.SIGCONT)  # a stopped process cannot act on SIGTERM
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and find_marked(job, exclude, dirs):
        time.sleep(0.1)
    hard_deadline = time.monotonic() + 5.0
    while time.monotonic() < hard_deadline:
        left = find_marked(job, exclude, dirs)
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.1)
    return first


def make_private(path: str) -> None:
    """Remove group and world write permission from ``path`` and everything under it
    (Ray makes its temp dirs 0777 so that several users may share them; ours is the
    job's own)."""
    def fix(p: str) -> None:
        try:
            st = os.lstat(p)
        except OSError:
            return
        if os.path.islink(p):
            return
        mode = st.st_mode & 0o7777
        if mode & 0o022:
            try:
                os.chmod(p, mode & ~0o022)
            except OSError:
                pass
    fix(path)
    for root, dirs, files in os.walk(path):
        for n in dirs + files:
            fix(os.path.join(root, n))


def start(job: str) -> subprocess.Popen | None:
    """Start the watchdog for ``job`` (None where /proc is missing)."""
    if not os.path.isdir("/proc/self"):
        return None
    env = {k: v for k, v in os.environ.items() if k != MARKER}
    return subprocess.Popen([sys.executable, "-m", "plexnet_kvstore_dist.watchdog", job, str(os.getpid())],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env, start_new_session=True)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    job, launcher = args[0], int(args[1])
    for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(s, signal.SIG_IGN)  # only the pipe tells us to act
    paths: list[str] = []
    done = False
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line:
            break
        cmd, _, arg = line.decode("utf-8", "replace").rstrip("\n").partition(" ")
        if cmd == "rmtree" and arg:
            paths.append(arg)
        elif cmd == "done":
            done = True
    if done:
        return 0
    found = kill_marked(job, exclude=(launcher,), dirs=tuple(paths))
    for p in paths:
        shutil.rmtree(p, ignore_errors=True)
    print(f"[plexnet launch watchdog] launcher {launcher} of job {job} is gone: stopped {len(found)} "
          f"process(es), removed {len(paths)} dir(s)", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
