"""Runs the GPU suite (``gpu/``) on plexnet's CuPy simulator, in a subprocess.

SIMULATED: no GPU is involved. The suite is the one that runs on a real GPU; here
``PLEXNET_CUDA_SIMULATE=2`` makes the ``gpu`` backend use two simulated devices (numpy
on the host, CuPy's namespace and host/device rules, stream-ordering checks). This
checks plexnet's GPU plumbing -- device activation, streams, copies between contexts,
storage, random streams, executors, kvstores, Module -- without a GPU; it says nothing
about kernels, cuDNN or speed. The subprocess keeps the simulator out of this process.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(HERE, "gpu")
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

pytest.importorskip("plexnet_device_cuda", reason="plexnet-device-cuda is not installed")


def _run_suite(extra_env: dict[str, str], *args: str, timeout: float = 150) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLEXNET_CUDA_SIMULATE")}
    env.pop("PYTEST_ADDOPTS", None)
    env.update({"PLEXNET_CUDA_SIMULATE": "2", "PLEXNET_CUDA_SIMULATE_HAZARDS": "raise"}, **extra_env)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--timeout", "60", "-W",
           "error::plexnet_device_cuda.simulator.StreamHazardWarning", *args, SUITE]
    proc = subprocess.run(cmd, cwd=ROOT if os.path.exists(os.path.join(ROOT, "pyproject.toml")) else HERE,
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return proc.returncode, proc.stdout


def _counts(out: str) -> dict[str, int]:
    tail = out.strip().splitlines()[-1] if out.strip() else ""
    return {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)", tail)}


#: ops-basic's operator cases on gpu(0) (about 15 s here): they call the operators through
#: the operator contract on streams of their own, not through the engine, so they run in
#: the default configuration only
OPS_BASIC_CASES = os.path.join(SUITE, "test_gpu_ops_basic.py")


@pytest.mark.timeout(180)
@pytest.mark.parametrize("config,args", [
    pytest.param({}, (), id="defaults"),
    # two compute streams per device: operations of one device on different streams
    pytest.param({"PLEXNET_GPU_WORKER_NSTREAMS": "2", "PLEXNET_GPU_COPY_NTHREADS": "2"},
                 ("--ignore", OPS_BASIC_CASES), id="two-streams"),
    # everything on the pushing thread: device activation and streams without workers
    pytest.param({"PLEXNET_ENGINE_TYPE": "NaiveEngine"}, ("--ignore", OPS_BASIC_CASES), id="naive-engine"),
])
def test_gpu_suite_passes_on_two_simulated_gpus(config, args):
    rc, out = _run_suite(config, *args)
    assert rc == 0, f"the GPU suite failed under the CuPy simulator (exit {rc}):\n{out[-12000:]}"
    counts = _counts(out)
    # it really ran (a suite that skips everything would also exit 0)
    assert counts.get("passed", 0) >= 40, out[-4000:]
    assert counts.get("skipped", 0) == 0, f"nothing should skip on two simulated GPUs:\n{out[-4000:]}"
