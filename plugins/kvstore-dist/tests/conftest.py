import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def launch(scenario, tmp_path, workers=2, servers=1, env=None, launch_args=(), timeout=120):
    """Run ``dist_scenarios.py SCENARIO`` under ``plexnet launch``; returns the process."""
    e = dict(os.environ)
    e.update(env or {})
    cmd = [sys.executable, "-m", "plexnet_kvstore_dist.launch", "-n", str(workers), "-s", str(servers),
           "--quiet", *launch_args, "--", sys.executable, os.path.join(HERE, "dist_scenarios.py"), scenario,
           str(tmp_path)]
    return subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def run_job():
    return launch
