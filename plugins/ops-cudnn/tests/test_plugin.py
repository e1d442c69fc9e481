"""What runs everywhere (no GPU, no cuDNN needed): import, registration, availability with
its reason, selection and forcing, parameter-level decisions, the graph cache, and the
frontend plumbing against a fake ``cudnn`` module."""
from __future__ import annotations

import contextlib
import sys
import types

import numpy as np
import pytest

import plexnet as mx
from plexnet.operator.registry import OperatorNotFound
from plexnet.plugins import get_manager, registries

plexnet_ops_cudnn = pytest.importorskip("plexnet_ops_cudnn", reason="plexnet-ops-cudnn is not installed")
pytest.importorskip("plexnet_ops_basic", reason="plexnet-ops-basic is not installed")

from plexnet_ops_cudnn import _fe, _loader, activation, batchnorm, convolution, pooling, softmax  # noqa: E402

from _harness import make_prop  # noqa: E402

OPS = ["Convolution", "Pooling", "BatchNorm", "Activation", "softmax", "SoftmaxActivation"]


def test_plugin_loads_and_registers_every_implementation():
    recs = {r["name"]: r for r in get_manager().report()}
    if "ops_cudnn" not in recs:
        pytest.skip("plexnet-ops-cudnn is importable but not installed (no entry point)")
    rec = recs["ops_cudnn"]
    assert rec["status"] == "ok", rec
    registered = rec["registered"]["operators"]
    for op in OPS:
        assert f"{op}[gpu:cudnn]" in registered
    reg = registries().operators
    for op in OPS:
        recs = [r for r in reg.implementations(op) if r.impl_name == "cudnn"]
        assert len(recs) == 1, (op, reg.implementations(op))
        r = recs[0]
        assert r.device_type == "gpu" and r.priority == 10 and r.plugin == "ops_cudnn"
        # the xp implementation it falls back to is there too
        assert any(x.impl_name == "xp" for x in reg.implementations(op))


def test_availability_and_reason_match():
    st = plexnet_ops_cudnn.status()
    assert st["available"] == _loader.available()
    if st["available"]:
        assert st["reason"] is None
    else:
        assert isinstance(st["reason"], str) and st["reason"]
        rec = [r for r in registries().operators.implementations("Convolution") if r.impl_name == "cudnn"][0]
        assert rec.availability() == (False, st["reason"])  # the probe says why


@pytest.mark.skipif(_loader.available(), reason="cuDNN is available here")
def test_without_cudnn_gpu_selects_xp_and_forcing_cudnn_is_a_clear_error():
    reg = registries().operators
    for op in OPS:
        assert reg.select_impl(op, "gpu").impl_name == "xp"
    reg.force_impl("Convolution", "gpu", "cudnn")
    try:
        with pytest.raises(OperatorNotFound, match="cudnn.*not available"):
            reg.select_impl("Convolution", "gpu")
    finally:
        reg.force_impl("Convolution", "gpu", None)


def test_cpu_never_sees_the_cudnn_implementation():
    reg = registries().operators
    for op in OPS:
        # xp, or a CPU plugin's (plexnet-ops-torch) where installed; never cuDNN
        assert reg.select_impl(op, "cpu").impl_name != "cudnn"


def test_missing_frontend_is_reported_not_raised(monkeypatch):
    saved = (_loader._checked, _loader._reason, _loader.cudnn, _loader.cupy, dict(_loader._info))
    monkeypatch.setitem(sys.modules, "cudnn", None)  # import cudnn -> ImportError
    monkeypatch.setenv("PLEXNET_CUDNN_PRELOAD", "0")
    monkeypatch.setattr(_loader, "_check_simulated", lambda: None)  # also under PLEXNET_CUDA_SIMULATE
    _loader._reset_for_tests()
    try:
        assert _loader.available() is False
        assert "not installed" in _loader.reason()
        assert plexnet_ops_cudnn.status()["available"] is False
    finally:
        _loader._checked, _loader._reason, _loader.cudnn, _loader.cupy = saved[:4]
        _loader._info.clear()
        _loader._info.update(saved[4])


# -- parameter-level decisions ---------------------------------------------------------------------
def test_convolution_parameter_decisions():
    p = make_prop("Convolution", dict(kernel=(3, 3), num_filter=4)).param
    assert convolution.unsupported_params(p) is None
    p = make_prop("Convolution", dict(kernel=(3, 3), num_filter=4, cudnn_off=True)).param
    assert "cudnn_off" in convolution.unsupported_params(p)
    assert convolution.as_2d((3,), (2,), (1,), (1,)) == ((3, 1), (2, 1), (1, 0), (1, 1))
    assert convolution.nd_dims((2, 3, 7)) == [2, 3, 7, 1]


def test_pooling_parameter_decisions_and_geometry():
    mk = lambda **kw: make_prop("Pooling", kw).param  # noqa: E731
    assert "no pooling" in pooling.unsupported_params(mk(kernel=(2, 2), pool_type="max"))
    assert pooling.unsupported_params(mk(kernel=(2, 2), pool_type="avg")) is None
    assert pooling.unsupported_params(mk(kernel=(2, 2), pool_type="sum")) is None
    assert pooling.unsupported_params(mk(kernel=(3, 3), pool_type="avg", pad=(1, 1),
                                         count_include_pad=False)) is not None
    assert pooling.unsupported_params(mk(kernel=(3, 3), pool_type="avg", count_include_pad=False)) is None
    p = mk(kernel=(2, 2), stride=(2, 2), pool_type="avg")
    assert pooling.conv_geometry(p, (1, 3, 8, 8), (1, 3, 4, 4)) == ((2, 2), (2, 2), (0, 0), (1, 1))
    # full convention with a partial window: not expressible
    assert pooling.conv_geometry(p, (1, 3, 7, 7), (1, 3, 4, 4)) is None
    g = mk(global_pool=True, pool_type="avg")
    assert pooling.conv_geometry(g, (2, 5, 4, 6), (2, 5, 1, 1)) == ((4, 6), (1, 1), (0, 0), (1, 1))
    one_d = mk(kernel=(3,), pool_type="avg")
    assert pooling.conv_geometry(one_d, (2, 3, 9), (2, 3, 7)) == ((3, 1), (1, 1), (0, 0), (1, 1))


def test_max_pooling_factory_returns_the_xp_operator():
    from plexnet_ops_basic.nn.pooling import PoolingOp
    prop = make_prop("Pooling", dict(kernel=(2, 2), pool_type="max"))
    op = pooling.factory(prop, mx.gpu(0))
    assert isinstance(op, PoolingOp)
    prop = make_prop("Activation", dict(act_type="softrelu"))
    assert type(activation.factory(prop, mx.gpu(0))).__name__ == "ActivationOp"
    prop = make_prop("softmax", dict(temperature=2.0))
    assert type(softmax.softmax_factory(prop, mx.gpu(0))).__name__ == "SoftmaxOp"
    prop = make_prop("BatchNorm", dict(cudnn_off=True))
    assert type(batchnorm.factory(prop, mx.gpu(0))).__name__ == "BatchNormOp"


def test_cudnn_operators_are_created_for_supported_parameters():
    # creating does not touch the GPU; running does
    assert isinstance(convolution.factory(make_prop("Convolution", dict(kernel=(3, 3), num_filter=2)), mx.gpu(0)),
                      convolution.CudnnConvolution)
    assert isinstance(activation.factory(make_prop("Activation", dict(act_type="tanh")), mx.gpu(0)),
                      activation.CudnnActivation)
    assert isinstance(softmax.softmax_factory(make_prop("softmax", {}), mx.gpu(0)), softmax.CudnnSoftmax)
    assert isinstance(batchnorm.factory(make_prop("BatchNorm", {}), mx.gpu(0)), batchnorm.CudnnBatchNorm)


def test_softmax_geometry():
    sm = softmax.CudnnSoftmax(make_prop("softmax", dict(axis=1)), mx.gpu(0))
    assert sm.geometry((2, 3, 4, 5)) == (2, 3, 20)
    sm = softmax.CudnnSoftmax(make_prop("softmax", {}), mx.gpu(0))
    assert sm.geometry((8, 10)) == (8, 10, 1)
    sa = softmax.CudnnSoftmaxActivation(make_prop("SoftmaxActivation", dict(mode="channel")), mx.gpu(0))
    assert sa.geometry((2, 3, 4, 5)) == (2, 3, 20)
    sa = softmax.CudnnSoftmaxActivation(make_prop("SoftmaxActivation", {}), mx.gpu(0))
    assert sa.geometry((2, 3, 4, 5)) == (2, 60, 1)


def test_layout_helpers():
    assert _fe.packed_strides([2, 3, 4, 5]) == [60, 20, 5, 1]
    assert _fe.nhwc_strides([2, 3, 4, 5]) == [60, 1, 15, 3]
    assert _fe.nhwc_strides([2, 3, 4, 5, 6]) == [360, 1, 90, 18, 3]
    dims, st = _fe.flat_dims(1000)
    assert int(np.prod(dims)) == 1000 and st[1] == 1 and dims[1] == 8
    dims, st = _fe.flat_dims(7)
    assert dims == [1, 1, 7, 1]
    assert batchnorm.bn_dims((8, 5)) == [8, 5, 1, 1]
    assert batchnorm.bn_dims((2, 3, 7)) == [2, 3, 7, 1]
    assert batchnorm._nhwc_shape((2, 3, 4, 5)) == (2, 4, 5, 3)


# -- the graph cache ---------------------------------------------------------------------------------------
def test_graph_cache_lru_and_unsupported_entries():
    c = _fe.GraphCache(maxsize=2)
    built = []
    assert c.get_or_build("a", lambda: built.append("a") or "A") == "A"
    assert c.get_or_build("a", lambda: built.append("a2") or "X") == "A"  # hit: no rebuild
    c.get_or_build("b", lambda: "B")
    c.get_or_build("a", lambda: "X")  # a is now most recent
    c.get_or_build("c", lambda: "C")  # evicts b
    assert "b" not in c and "a" in c and "c" in c and len(c) == 2
    assert built == ["a"]

    def boom():
        raise RuntimeError("no engine")
    u = c.get_or_build("bad", boom, what="Test")
    assert isinstance(u, _fe.Unsupported) and "no engine" in u.reason
    assert c.get_or_build("bad", lambda: "never") is u  # refusal cached
    assert any("no engine" in r for r in _fe.fallback_reasons().values())
    c.clear()
    assert len(c) == 0


# -- frontend plumbing against a fake module ------------------------------------------------------------
class _FakeTensor:
    def __init__(self, name: str, uid: int) -> None:
        self.name, self.uid, self.attrs = name, uid, {}

    def set_output(self, v):
        self.attrs["output"] = v
        return self

    def set_data_type(self, v):
        self.attrs["dtype"] = v
        return self

    def set_dim(self, v):
        self.attrs["dim"] = list(v)
        return self

    def set_stride(self, v):
        self.attrs["stride"] = list(v)
        return self


class _FakeGraph:
    instances: list = []

    def __init__(self, **kw):
        self.kw, self.calls, self.executed, self._n = kw, [], [], 0
        _FakeGraph.instances.append(self)

    def _t(self, name):
        self._n += 1
        return _FakeTensor(name, self._n)

    def tensor(self, name, dim, stride, data_type=None, is_pass_by_value=False):
        t = self._t(name)
        t.attrs.update(dim=list(dim), stride=list(stride), dtype=data_type, pbv=is_pass_by_value)
        return t

    def conv_fprop(self, **kw):
        self.calls.append(("conv_fprop", sorted(kw)))
        return self._t("y")

    def batchnorm(self, **kw):
        self.calls.append(("batchnorm", sorted(kw)))
        return [self._t(n) for n in ("y", "mean", "inv", "nrm", "nrv")]

    def batchnorm_backward(self, **kw):
        self.calls.append(("batchnorm_backward", sorted(kw)))
        return [self._t(n) for n in ("dx", "ds", "db")]

    def __getattr__(self, name):
        if name in ("validate", "build_operation_graph", "check_support", "build_plans"):
            return lambda *a, **k: self.calls.append(name)
        raise AttributeError(name)

    def create_execution_plans(self, modes):
        self.calls.append(("plans", list(modes)))

    def deselect_numeric_notes(self, notes):
        self.calls.append(("deselect_notes", list(notes)))

    def deselect_workspace_greater_than(self, n):
        self.calls.append(("ws_limit", n))

    def get_workspace_size(self):
        return 4096

    def execute(self, pack, workspace, handle=None):
        self.executed.append((pack, workspace, handle))


@pytest.fixture
def fake_frontend(monkeypatch):
    dt = types.SimpleNamespace(FLOAT="FLOAT", HALF="HALF", DOUBLE="DOUBLE")
    streams = []
    fake = types.SimpleNamespace(
        data_type=dt, heur_mode=types.SimpleNamespace(A="A", FALLBACK="FALLBACK"),
        numerical_note=types.SimpleNamespace(TENSOR_CORE="TC", DOWN_CONVERT_INPUTS="DCI"),
        pygraph=_FakeGraph, create_handle=lambda: 77, set_stream=lambda h, s: streams.append((h, s)))
    fake_cupy = types.SimpleNamespace(cuda=types.SimpleNamespace(
        Device=lambda i: contextlib.nullcontext(),
        get_current_stream=lambda: types.SimpleNamespace(ptr=0)))
    monkeypatch.setattr(_loader, "cudnn", fake)
    monkeypatch.setattr(_loader, "cupy", fake_cupy)
    monkeypatch.setattr(_fe, "_tls", type(_fe._tls)())
    _FakeGraph.instances.clear()
    return types.SimpleNamespace(streams=streams)


def test_build_follows_the_frontend_sequence_and_tf32_switch(fake_frontend, monkeypatch):
    monkeypatch.setenv("PLEXNET_CUDNN_ALLOW_TF32", "0")
    b = convolution.fprop_graph(0, np.float32, [2, 4, 8, 8], [6, 2, 3, 3], [2, 6, 4, 4], (2, 2), (1, 1), (1, 1),
                                1 << 20)
    g = _FakeGraph.instances[-1]
    names = [c if isinstance(c, str) else c[0] for c in g.calls]
    assert names == ["conv_fprop", "validate", "build_operation_graph", "plans", "deselect_notes", "ws_limit",
                     "check_support", "build_plans"]
    assert ("plans", ["A", "FALLBACK"]) in g.calls
    assert g.kw["io_data_type"] == "FLOAT" and g.kw["compute_data_type"] == "FLOAT" and g.kw["handle"] == 77
    assert b.workspace == 4096
    y = b.tensors["y"]
    assert y.attrs["output"] and y.attrs["dim"] == [2, 6, 4, 4] and y.attrs["stride"] == [96, 16, 4, 1]
    monkeypatch.setenv("PLEXNET_CUDNN_ALLOW_TF32", "1")
    convolution.fprop_graph(0, np.float16, [2, 4, 8, 8], [6, 4, 3, 3], [2, 6, 8, 8], (1, 1), (1, 1), (1, 1), None)
    g = _FakeGraph.instances[-1]
    assert not any(c[0] == "deselect_notes" for c in g.calls if isinstance(c, tuple))
    assert g.kw["io_data_type"] == "HALF" and g.kw["compute_data_type"] == "FLOAT"


def test_execute_binds_pointers_host_scalars_and_the_worker_stream(fake_frontend):
    b = batchnorm.train_graphs(0, np.float32, [4, 3, 5, 5], "nhwc", 1e-3)
    fwd = _FakeGraph.instances[0]
    assert fwd.calls[0] == ("batchnorm", sorted(["input", "scale", "bias", "in_running_mean", "in_running_var",
                                                 "epsilon", "momentum", "compute_data_type", "name"]))
    assert b.tensors["x"].attrs["stride"] == [75, 1, 15, 3]  # channels-last description
    assert b.tensors["eps"].attrs["pbv"] is True
    assert b.extra["layout"] == "nhwc" and b.extra["bwd"].workspace == 4096
    rctx = types.SimpleNamespace(stream=types.SimpleNamespace(ptr=1234))
    names = ["x", "scale", "bias", "rmean", "rvar", "y", "mean", "inv", "nrmean", "nrvar"]
    _fe.execute(b, rctx, 0, {n: 1000 + i for i, n in enumerate(names)}, 555)
    _fe.execute(b, rctx, 0, {n: 1000 + i for i, n in enumerate(names)}, 555)
    assert fake_frontend.streams == [(77, 1234)]  # set once, remembered
    pack, ws, handle = fwd.executed[-1]
    assert ws == 555 and handle == 77
    by_name = {t.name: p for t, p in pack.items()}
    assert by_name["x"] == 1000 and by_name["y"] == 1005
    eps_ptr = by_name["eps"]
    assert eps_ptr == b.host["eps"].ctypes.data and float(b.host["eps"].ravel()[0]) == pytest.approx(1e-3)
