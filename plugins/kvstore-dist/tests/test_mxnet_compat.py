"""MXNet spellings the example scripts use: ``kv.create('dist')`` (example/distributed_training)
and tools/launch.py's command line (``-n 2 --launcher local python train.py --kv-store ...``)."""
import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("ray", reason="the dist kvstore tests need Ray (pip install ray)")

import plexnet as mx  # noqa: E402
from plexnet_kvstore_dist import worker  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.timeout(150)]

_WORKER = """
import argparse, json, os
import plexnet as mx
p = argparse.ArgumentParser()
p.add_argument("--kv-store", default="local")
p.add_argument("--out")
a = p.parse_args()
kv = mx.kv.create(a.kv_store)
kv.init(3, mx.nd.zeros((2,)))
kv.push(3, mx.nd.ones((2,)) * (kv.rank + 1))
out = mx.nd.zeros((2,))
kv.pull(3, out=out)
with open(os.path.join(a.out, "w%d.json" % kv.rank), "w") as f:
    json.dump({"rank": kv.rank, "n": kv.num_workers, "type": kv.type, "v": out.asnumpy().tolist(),
               "env": os.environ.get("PX_W")}, f)
"""


def test_dist_is_dist_sync(ray_address):
    # MXNet takes any name containing "dist" (sync unless "_async"; "device" sums on the devices)
    assert {"dist", "dist_sync_device", "dist_device_async"} <= set(mx.kv.list_types())
    assert set(worker.DIST_TYPES) <= set(mx.kv.list_types())
    kv = mx.kv.create("dist")  # no launcher: a one-worker job with private servers
    try:
        assert (kv.type, kv.rank, kv.num_workers) == ("dist", 0, 1)
        kv.init("w", mx.nd.zeros((3,)))
        kv.push("w", [mx.nd.ones((3,)), mx.nd.ones((3,)) * 2])  # summed, then stored (no optimizer)
        out = mx.nd.zeros((3,))
        kv.pull("w", out=out)
        np.testing.assert_array_equal(out.asnumpy(), [3, 3, 3])
    finally:
        kv.close()


@pytest.mark.parametrize("kvtype", ["dist", "dist_sync"])
def test_launch_takes_mxnets_command_line(tmp_path, ray_address, kvtype):
    script = tmp_path / "train.py"
    script.write_text(_WORKER)
    cmd = [sys.executable, "-m", "plexnet", "launch", "-n", "2", "--launcher", "local", "--quiet",
           "--address", ray_address, "--env-worker", "PX_W:5",
           sys.executable, str(script), "--kv-store", kvtype, "--out", str(tmp_path)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    got = sorted((json.loads((tmp_path / f"w{i}.json").read_text()) for i in range(2)), key=lambda d: d["rank"])
    assert [(g["rank"], g["n"], g["type"], g["v"], g["env"]) for g in got] == [
        (0, 2, kvtype, [3.0, 3.0], "5"), (1, 2, kvtype, [3.0, 3.0], "5")]


def test_launch_runs_one_quoted_command_line_through_the_shell(tmp_path, ray_address):
    # example/image-classification/benchmark.py passes ' '.join(args) as one argument
    script = tmp_path / "train.py"
    script.write_text(_WORKER)
    line = f"PX_W=7 {sys.executable} {script} --kv-store dist_sync --out {tmp_path}"
    cmd = [sys.executable, "-m", "plexnet", "launch", "-n", "2", "--launcher", "local", "--quiet",
           "--address", ray_address, line]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    got = [json.loads((tmp_path / f"w{i}.json").read_text()) for i in range(2)]
    assert sorted((g["rank"], g["v"], g["env"]) for g in got) == [(0, [3.0, 3.0], "7"), (1, [3.0, 3.0], "7")]
