"""Every operator case of plexnet-ops-basic's test suite, on gpu(0), against the CPU.

ops-basic's harness (``plugins/ops-basic/tests/opcheck.py``) repeats every operator run on
the context named by ``PLEXNET_OPCHECK_CTX``: device copies of the same inputs, outputs,
gradients and aux states, every ``req`` the case uses (``write``, ``add``, ``null``,
``inplace``), twice on two streams with no synchronisation in between, and compares
outputs, input gradients, aux states and untouched inputs with the CPU run (its NDArray
tests run with gpu(0) as the default context). This test runs that suite in a subprocess
(the harness is imported by path there) with ``PLEXNET_OPCHECK_CTX=gpu(0)``, on the
simulator in CI and on CuPy on a real GPU, and checks from the harness's report that every
operator of ops-basic ran on the gpu except the ones its README lists under "GPU notes".
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from _gpu_suite import SIMULATED, cupy_loader

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
#: ops-basic's tests (a source checkout); ``PLEXNET_OPS_BASIC_TESTS`` points elsewhere
OPS_BASIC_TESTS = os.environ.get("PLEXNET_OPS_BASIC_TESTS") or os.path.join(ROOT, "plugins", "ops-basic", "tests")

#: operators that cannot run on the gpu here (plugins/ops-basic/README.md, "GPU notes"):
#: they need ``cupyx.scipy.special``, which CuPy has and the simulator offers as its own
#: ``__plexnet_cupyx__`` only when scipy is installed
NOT_ON_GPU = ({"gamma", "gammaln"} if SIMULATED and getattr(getattr(cupy_loader, "cupy", None), "__plexnet_cupyx__",
                                                             None) is None else set())


@pytest.mark.timeout(300)
def test_every_ops_basic_case_on_gpu_matches_cpu(tmp_path):
    pytest.importorskip("plexnet_ops_basic", reason="plexnet-ops-basic is not installed")
    if not os.path.isfile(os.path.join(OPS_BASIC_TESTS, "opcheck.py")):
        pytest.skip(f"ops-basic's tests are not here ({OPS_BASIC_TESTS}); set PLEXNET_OPS_BASIC_TESTS")
    report = tmp_path / "opcheck.json"
    env = dict(os.environ, PLEXNET_OPCHECK_CTX="gpu(0)", PLEXNET_OPCHECK_REPORT=str(report))
    env.pop("PYTEST_ADDOPTS", None)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--timeout", "120",
           "-k", "not matches_mxnet"]  # the MXNet 1.9.1 cross-check runs MXNet, not plexnet's gpu
    if SIMULATED:
        cmd += ["-W", "error::plexnet_device_cuda.simulator.StreamHazardWarning"]
    cwd = ROOT if os.path.exists(os.path.join(ROOT, "pyproject.toml")) else OPS_BASIC_TESTS
    proc = subprocess.run(cmd + [OPS_BASIC_TESTS], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=280)
    out = proc.stdout
    assert proc.returncode == 0, f"ops-basic's cases on gpu(0) (exit {proc.returncode}):\n{out[-12000:]}"
    rep = json.loads(report.read_text())
    assert rep["device"] == "gpu(0)" and rep["runs"] > 1000, out[-3000:]

    from plexnet.plugins import registries
    reg = registries().operators
    ours = {reg.canonical(n) for n in reg.list_operators() if str(reg.owner(n)) == "ops_basic"}
    ran = set(rep["per_operator"])
    unsupported = set(rep["unsupported"])
    assert unsupported == NOT_ON_GPU, rep["unsupported"]
    missing = sorted(ours - ran - unsupported)
    assert not missing, f"ops-basic operators no case ran on gpu(0): {missing}"
    for name, msg in rep["unsupported"].items():  # the error names the operator and what is missing
        assert msg.startswith(f"{name}: not available") and "cupyx.scipy.special" in msg, msg
