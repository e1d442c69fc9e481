"""mx.profiler with profile_process='server': each server profiles its own process and
writes its own trace (MXNet's kSetProfilerParams commands)."""
import json
import os

import numpy as np
import pytest

pytest.importorskip("ray", reason="the dist kvstore tests need Ray (pip install ray)")

import plexnet as mx  # noqa: E402
from plexnet_kvstore_dist.server_profiler import run, server_filename  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.timeout(120)]


def test_server_files_are_named_per_rank(tmp_path):
    assert server_filename(str(tmp_path / "p.json"), 3) == str(tmp_path / "rank3_p.json")
    assert server_filename("p.json", 0) == "rank0_p.json"
    with pytest.raises(ValueError, match="unknown call"):
        run(json.dumps({"call": "nope"}), 0, {})


def test_profiling_the_servers_of_a_dist_store(ray_address, monkeypatch, tmp_path):
    monkeypatch.setenv("PLEXNET_NUM_SERVERS", "2")
    kv = mx.kv.create("dist_sync")
    try:
        kv.init(3, mx.nd.ones((4, 4)))
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1))
        mx.profiler.set_kvstore_handle(kv.handle)
        target = str(tmp_path / "server_profile.json")
        mx.profiler.set_config(profile_process="server", filename=target, profile_all=True)
        mx.profiler.set_state("run", profile_process="server")
        out = mx.nd.zeros((4, 4))
        for _ in range(3):
            kv.push(3, mx.nd.ones((4, 4)))
            kv.pull(3, out=out)
        out.wait_to_read()
        mx.profiler.pause(profile_process="server")
        mx.profiler.resume(profile_process="server")
        names = mx.profiler.dump(profile_process="server").split(",")
        assert sorted(os.path.basename(n) for n in names) == ["rank0_server_profile.json",
                                                               "rank1_server_profile.json"]
        for n in names:
            with open(n) as f:
                assert "traceEvents" in json.load(f)
        assert not os.path.exists(target)          # the worker's own file is not written
        np.testing.assert_allclose(out.asnumpy(), 1 - 3 * 0.1, rtol=1e-6)
    finally:
        mx.profiler.set_kvstore_handle(None)
        kv.close()


def test_server_profiling_needs_a_dist_store():
    mx.profiler.set_kvstore_handle(None)
    with pytest.raises(mx.base.MXNetError, match="set_kvstore_handle"):
        mx.profiler.set_state("run", profile_process="server")
    mx.profiler.set_kvstore_handle(mx.kv.create("local").handle)
    try:
        with pytest.raises(mx.base.MXNetError, match="dist kvstore"):
            mx.profiler.set_config(profile_process="server", filename="x.json")
    finally:
        mx.profiler.set_kvstore_handle(None)
    with pytest.raises(ValueError, match="profile_process"):
        mx.profiler.pause(profile_process="nowhere")
