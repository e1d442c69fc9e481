"""Multi-process tests: ``plexnet launch`` with 2 workers on a private Ray instance
(127.0.0.1, no dashboard, own temp dir; the launcher shuts everything down)."""
import json

import numpy as np
import pytest

pytest.importorskip("ray", reason="the dist kvstore tests need Ray (pip install ray)")

import dist_scenarios_ref as ref  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.timeout(150)]


def _load(tmp_path, name, rank):
    return dict(np.load(tmp_path / f"{name}-{rank}.npz"))


def _ok(p):
    assert p.returncode == 0, f"launcher exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-6000:]}"


@pytest.mark.parametrize("servers,transport,kvtype", [(1, "auto", "dist_sync"), (2, "shm", "dist_device_sync"),
                                                      (2, "ray", "dist_sync"), (2, "tcp", "dist_sync")])
def test_dist_sync_equals_serial(tmp_path, run_job, servers, transport, kvtype):
    """Includes a big array sliced over both servers (bound lowered to 1000 elements)."""
    p = run_job("sync", tmp_path, servers=servers,
                env={"PLEXNET_KVSTORE_TRANSPORT": transport, "MXNET_KVSTORE_BIGARRAY_BOUND": "1000",
                     "KVTYPE": kvtype})
    _ok(p)
    want = ref.serial_sgd(2, ref.STEPS)
    for rank in (0, 1):
        got = _load(tmp_path, "sync", rank)
        assert str(got["plane"]) == {"auto": "shm"}.get(transport, transport)  # one host: auto picks shm
        assert bool(got["transport"]) == (transport != "ray")
        for k in ref.SHAPES:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-5, err_msg=k)
        np.testing.assert_array_equal(got["sum"], 1 + 2 + 2)  # ranks 1 and 2, plus two ones


def test_two_bit_compression_matches_numpy(tmp_path, run_job):
    _ok(run_job("compress", tmp_path))
    want = ref.compressed_sums(2, 4, 0.4)
    for rank in (0, 1):
        np.testing.assert_allclose(_load(tmp_path, "compress", rank)["pulled"], want, rtol=1e-6)


def test_dist_async_converges(tmp_path, run_job):
    _ok(run_job("async", tmp_path))
    for rank in (0, 1):
        got = _load(tmp_path, "async", rank)
        assert float(got["loss"]) < 1e-3, float(got["loss"])
        np.testing.assert_allclose(got["x"], np.arange(10) / 10, atol=0.05)


@pytest.mark.parametrize("transport", ["auto", "tcp"])
def test_sigkill_worker_makes_others_fail_fast(tmp_path, run_job, transport):
    p = run_job("kill_worker", tmp_path, env={"PLEXNET_KVSTORE_TRANSPORT": transport})
    assert p.returncode != 0
    res = json.loads((tmp_path / "kill_worker-0.json").read_text())
    assert "worker 1" in res["error"] and ("died" in res["error"] or "heartbeat" in res["error"]), res
    assert res["seconds"] < 30


def test_uneven_pushes_raise(tmp_path, run_job):
    p = run_job("uneven", tmp_path)
    _ok(p)
    res = json.loads((tmp_path / "uneven-0.json").read_text())
    assert "unequally" in res["error"] or "none yet from [1]" in res["error"], res
    assert json.loads((tmp_path / "uneven-1.json").read_text())["error"] == ""


def test_kill_server_and_resume_from_checkpoint(tmp_path, run_job):
    ck = tmp_path / "ckpt"
    env = {"MXNET_KVSTORE_BIGARRAY_BOUND": "1000", "PLEXNET_KVSTORE_CHECKPOINT_EVERY": "1"}
    p1 = run_job("resume1", tmp_path, servers=2, env=env, launch_args=("--checkpoint-dir", str(ck)))
    assert p1.returncode != 0
    for rank in (0, 1):
        err = json.loads((tmp_path / f"resume1-{rank}.json").read_text())["error"]
        assert "server 0" in err and ("died" in err or "connection" in err), err
    p2 = run_job("resume2", tmp_path, servers=2, env=env, launch_args=("--checkpoint-dir", str(ck)))
    _ok(p2)
    want = ref.serial_sgd(2, ref.STEPS)
    for rank in (0, 1):
        got = _load(tmp_path, "resume2", rank)
        assert int(got["start"]) == 4
        for k in ref.SHAPES:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-5, err_msg=k)
