"""Every graph this plugin builds, constructed with the installed cuDNN frontend and put
through the frontend's own ``validate()``, without a GPU: a stub ``libcudnn.so.9``
(compiled here) answers the version queries, and a dummy handle stands in for a real one.
This checks our use of the frontend's API (keyword names, arities, tensor attributes)
against the installed version; what cuDNN supports is decided later, on a device.

Skips unless ``nvidia-cudnn-frontend`` is installed and a C compiler is available.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("plexnet_ops_cudnn", reason="plexnet-ops-cudnn is not installed")

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("cudnn") is None, reason="nvidia-cudnn-frontend is not installed"),
    pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler"),
]

STUB = r"""
#include <stddef.h>
size_t cudnnGetVersion(void) { return 91000; }
size_t cudnnGetCudartVersion(void) { return 12080; }
size_t cudnnGetMaxDeviceVersion(void) { return 900; }
const char* cudnnGetErrorString(int s) { return "stub"; }
int cudnnGetProperty(int type, int* value) { *value = type == 0 ? 9 : (type == 1 ? 10 : 0); return 0; }
"""

SCRIPT = r"""
import sys, numpy as np
import cudnn
from plexnet_ops_cudnn import _fe, _loader, activation, batchnorm, convolution, softmax
_loader.cudnn = cudnn
H = cudnn.Handle(12345, 0, 0) if hasattr(cudnn, "Handle") else 12345
_fe.handle_for = lambda dev: H

def validate_only(spec, **kw):
    spec.graph.validate()
    return _fe.Built(spec, 0, None)

_fe.build = validate_only
f32, f16 = np.float32, np.float16
cases = {
    "conv fprop": lambda: convolution.fprop_graph(0, f32, [2, 4, 8, 8], [6, 2, 3, 3], [2, 6, 4, 4], (2, 2), (1, 1),
                                                  (1, 1), None),
    "conv dgrad": lambda: convolution.dgrad_graph(0, f32, [2, 4, 8, 8], [6, 2, 3, 3], [2, 6, 4, 4], (2, 2), (1, 1),
                                                  (1, 1), None),
    "conv wgrad": lambda: convolution.wgrad_graph(0, f32, [2, 4, 8, 8], [6, 2, 3, 3], [2, 6, 4, 4], (2, 2), (1, 1),
                                                  (1, 1), None),
    "conv fp16": lambda: convolution.fprop_graph(0, f16, [2, 4, 8, 8], [6, 4, 3, 3], [2, 6, 8, 8], (1, 1), (1, 1),
                                                 (1, 1), None),
    "conv 3-d": lambda: convolution.fprop_graph(0, f32, [2, 4, 6, 8, 8], [6, 4, 3, 3, 3], [2, 6, 4, 6, 6],
                                                (1, 1, 1), (0, 0, 0), (1, 1, 1), None),
    "bn train nchw": lambda: batchnorm.train_graphs(0, f32, [4, 8, 5, 5], "nchw", 1e-3),
    "bn train nhwc": lambda: batchnorm.train_graphs(0, f32, [4, 8, 5, 5], "nhwc", 1e-3),
    "bn inference": lambda: batchnorm.infer_graph(0, f32, [4, 8, 5, 5], "nchw"),
}
for act in ("relu", "sigmoid", "tanh"):
    cases[f"{act} fwd"] = lambda act=act: activation.fwd_graph(0, f32, 1000, act)
    cases[f"{act} bwd"] = lambda act=act: activation.bwd_graph(0, f16, 1000, act)
cases["softmax fwd"] = lambda: softmax.fwd_graphs(0, f32, 8, 10, 1)
cases["softmax fwd inner"] = lambda: softmax.fwd_graphs(0, f32, 2, 3, 20)
cases["softmax bwd"] = lambda: softmax.bwd_graphs(0, f32, 8, 10, 1)
bad = 0
for name, fn in cases.items():
    try:
        fn()
        print("OK", name)
    except Exception as e:
        bad += 1
        print("FAIL", name, type(e).__name__, e)
sys.exit(1 if bad else 0)
"""


def test_every_graph_passes_frontend_validate(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    (tmp_path / "stub.c").write_text(STUB)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(tmp_path / "libcudnn.so.9"), str(tmp_path / "stub.c")],
                   check=True)
    (tmp_path / "check.py").write_text(textwrap.dedent(SCRIPT))
    env = dict(os.environ, LD_LIBRARY_PATH=str(tmp_path), PLEXNET_CUDNN_PRELOAD="0")
    p = subprocess.run([sys.executable, str(tmp_path / "check.py")], env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
