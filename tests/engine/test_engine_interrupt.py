"""Ctrl-C: a script interrupted with a long backlog of pending operations exits at once
(the queued operations are dropped, one line says how many) instead of draining the
backlog for up to PLEXNET_ENGINE_SHUTDOWN_TIMEOUT, as MXNet's script exits at once."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

SCRIPT = textwrap.dedent("""
    import time, plexnet
    from plexnet import engine
    eng = engine.get()
    v = eng.new_var()
    for _ in range(400):                      # 400 x 50 ms: 20 s of work queued
        eng.push_sync(lambda rc: time.sleep(0.05), plexnet.cpu(), (), (v,))
    print("pushed", flush=True)
    raise KeyboardInterrupt
""")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["ThreadedEnginePerDevice", "ThreadedEngine"])
def test_ctrl_c_exits_without_draining_the_backlog(kind: str) -> None:
    env = dict(os.environ, PLEXNET_ENGINE_TYPE=kind, PLEXNET_ENGINE_MAX_PENDING="0")
    t = time.monotonic()
    p = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=50, env=env)
    took = time.monotonic() - t
    assert "pushed" in p.stdout, p.stderr[-2000:]
    assert p.returncode != 0 and "KeyboardInterrupt" in p.stderr
    assert "plexnet: interrupted;" in p.stderr and "dropped" in p.stderr, p.stderr[-2000:]
    assert took < 15, took        # the backlog alone is 20 s
