import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:  # dist_scenarios_ref, whatever pytest's import mode
    sys.path.insert(0, HERE)


_ADDRESS = {}


@pytest.fixture(scope="session")
def ray_address():
    """One private Ray instance (127.0.0.1, no dashboard, own temp dir) for the
    session; each launched job joins it with --address and its own namespace."""
    pytest.importorskip("ray", reason="the dist kvstore tests need Ray (pip install ray)")
    from plexnet_kvstore_dist.ray_transport import _shutdown_and_remove, local_ray_init
    info = local_ray_init(num_cpus=8)
    _ADDRESS["addr"] = info["gcs_address"]
    yield info["gcs_address"]
    _ADDRESS.clear()
    _shutdown_and_remove(info["temp_dir"])


def launch(scenario, tmp_path, workers=2, servers=1, env=None, launch_args=(), timeout=120):
    """Run ``dist_scenarios.py SCENARIO`` under ``plexnet launch``; returns the process."""
    e = dict(os.environ)
    e.update(env or {})
    addr = ("--address", _ADDRESS["addr"]) if "addr" in _ADDRESS else ()
    cmd = [sys.executable, "-m", "plexnet_kvstore_dist.launch", "-n", str(workers), "-s", str(servers),
           "--quiet", *addr, *launch_args, "--", sys.executable, os.path.join(HERE, "dist_scenarios.py"), scenario,
           str(tmp_path)]
    return subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def run_job(ray_address):
    return launch


def pytest_configure(config):
    config.addinivalue_line("markers", "ray: needs Ray (skipped when it is not installed)")
