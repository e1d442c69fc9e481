"""Issue 13, points 11 and 12: nothing outlives a launched job, its temp dirs are
private, and a hung (SIGSTOPped) worker is named.

The first two tests start the launcher with a Ray instance of its own (two Ray startups
in all); the hung-worker test joins the session's Ray instance.
"""
import json
import os
import signal
import stat
import subprocess
import sys
import time

import pytest

pytest.importorskip("ray", reason="the dist kvstore tests need Ray (pip install ray)")

from plexnet_kvstore_dist.watchdog import find_marked  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
pytestmark = [pytest.mark.ray, pytest.mark.timeout(240)]


def _start(tmp_path, scenario, workers=1, extra=(), env=None):
    cmd = [sys.executable, "-m", "plexnet_kvstore_dist.launch", "-n", str(workers), "-s", "1", *extra, "--",
           sys.executable, os.path.join(HERE, "dist_scenarios.py"), scenario, str(tmp_path)]
    log = open(tmp_path / "launcher.log", "w")
    # a session of its own: a SIGINT to its process group is what Ctrl-C in a terminal sends
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, **(env or {})})


def _run(p, tmp_path, timeout=120):
    """Wait for the launcher (killing its group if it overruns); ``(status, log)``."""
    try:
        rc = p.wait(timeout=timeout)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)
    return rc, (tmp_path / "launcher.log").read_text()


def _wait_for(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def _world_or_group_writable(root):
    bad = []
    for d, dirs, files in os.walk(root):
        for n in [d] + [os.path.join(d, x) for x in dirs + files]:
            try:
                st = os.lstat(n)
            except OSError:
                continue
            if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o022:
                bad.append((n, oct(st.st_mode & 0o777)))
    return bad


@pytest.mark.parametrize("how", ["SIGKILL", "SIGINT"])
def test_killed_launcher_leaves_nothing(tmp_path, how):
    p = _start(tmp_path, "hold")
    try:
        info = _wait_for(lambda: (tmp_path / "hold-0.json").exists() and json.loads(
            (tmp_path / "hold-0.json").read_text()), 150, "the worker to start")
        job, ray_tmp = info["job"], info["ray_temp_dir"]
        assert job and ray_tmp.startswith("/tmp/pxray-")
        shm = f"/dev/shm/pxkv-{info['kv_job']}"
        # point 12: the Ray temp dir and everything under it are private
        assert stat.S_IMODE(os.stat(ray_tmp).st_mode) == 0o700
        assert _world_or_group_writable(ray_tmp) == []
        assert len(find_marked(job, dirs=(ray_tmp,))) >= 3  # gcs, raylet, server actor, worker...
        if how == "SIGKILL":
            os.kill(p.pid, signal.SIGKILL)
        else:
            os.killpg(p.pid, signal.SIGINT)  # Ctrl-C
        p.wait(timeout=60)
        # point 11: no process of the job survives, the temp dirs are gone
        _wait_for(lambda: not find_marked(job, dirs=(ray_tmp,)), 60, "the job's processes to be gone")
        _wait_for(lambda: not os.path.exists(ray_tmp), 30, f"{ray_tmp} to be removed")
        assert not os.path.exists(shm)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)
    if how == "SIGINT":
        assert p.returncode == 128 + signal.SIGINT


def test_hung_worker_is_named(tmp_path, ray_address):
    rc, log = _run(_start(tmp_path, "hang", workers=2, extra=("--address", ray_address, "--grace", "2"),
                          env={"PLEXNET_KVSTORE_HEARTBEAT_TIMEOUT": "4", "PLEXNET_KVSTORE_TIMEOUT": "60"}),
                   tmp_path)
    assert rc == 128 + signal.SIGSTOP, log[-3000:]
    assert "worker 1 (pid" in log and "hung: stopped (SIGSTOP)" in log, log[-3000:]


def test_relaunch_without_usable_checkpoint_says_so(tmp_path, ray_address):
    """Point 10: checkpoints of unequal rounds (no round every server has) are reported,
    the job starts from round 0 instead of silently."""
    ck = tmp_path / "ckpt"
    ck.mkdir()
    (ck / "server-0-of-2.r00000004.npz").write_bytes(b"x")
    (ck / "server-1-of-2.r00000006.npz").write_bytes(b"x")
    rc, log = _run(_start(tmp_path, "noop", workers=1,
                          extra=("--address", ray_address, "-s", "2", "--checkpoint-dir", str(ck))), tmp_path)
    assert rc == 0, log[-3000:]
    assert "no usable checkpoint in" in log and "server 0: [4]; server 1: [6]" in log, log[-3000:]
