"""Parity fixes found porting MXNet's remaining 1.x unit-test files (test_subgraph, ...).

No MXNet needed; the expected behaviour was checked against MXNet 1.9.1 by hand."""
import numpy as np
import pytest

import plexnet as mx


def _bind_run(sym, inputs, aux=None):
    grads = {k: mx.nd.zeros(v.shape) for k, v in inputs.items()}
    exe = sym.bind(mx.cpu(), args=inputs, args_grad=grads, aux_states=aux or {})
    exe.forward(is_train=True)
    heads = [mx.nd.ones(o.shape) * 0.5 for o in exe.outputs]
    exe.backward(heads)
    return [o.asnumpy() for o in exe.outputs], {k: g.asnumpy() for k, g in grads.items()}


def test_cached_op_symbol_matches_its_graph():
    # test_subgraph.test_make_subgraph: sym._internal._CachedOp(*inputs, subgraph=json)
    a, b = mx.sym.var("a"), mx.sym.var("b")
    c = a * b + mx.sym.sin(a)
    y = mx.sym._internal._CachedOp(mx.sym.var("a"), mx.sym.var("b"), subgraph=c.tojson()) * 2
    assert y.list_arguments() == ["a", "b"]
    rng = np.random.RandomState(0)
    ins = {"a": mx.nd.array(rng.randn(3, 4)), "b": mx.nd.array(rng.randn(3, 4))}
    (o1,), g1 = _bind_run(c * 2, ins)
    (o2,), g2 = _bind_run(y, ins)
    np.testing.assert_allclose(o1, o2, rtol=1e-6)
    for k in g1:
        np.testing.assert_allclose(g1[k], g2[k], rtol=1e-6)


def test_cached_op_symbol_keeps_auxiliary_states():
    d = mx.sym.BatchNorm(mx.sym.var("data"), fix_gamma=False, output_mean_var=True, name="bn")
    y = mx.sym._internal._CachedOp(*[mx.sym.var(n) for n in d.list_inputs()], subgraph=d.tojson(), name="sub")
    assert y.list_arguments() == ["data", "bn_gamma", "bn_beta"]
    assert y.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    # MXNet names the outputs "<_CachedOp node>_<subgraph output>"
    assert y.list_outputs() == ["sub_bn_output", "sub_bn_mean", "sub_bn_var"]
    rng = np.random.RandomState(1)
    ins = {"data": mx.nd.array(rng.randn(4, 3)), "bn_gamma": mx.nd.ones((3,)), "bn_beta": mx.nd.zeros((3,))}
    aux1 = {"bn_moving_mean": mx.nd.zeros((3,)), "bn_moving_var": mx.nd.ones((3,))}
    aux2 = {k: v.copy() for k, v in aux1.items()}
    o1, g1 = _bind_run(d, ins, aux1)
    o2, g2 = _bind_run(y, ins, aux2)
    for u, v in zip(o1, o2):
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)
    for k in g1:
        np.testing.assert_allclose(g1[k], g2[k], rtol=1e-5, atol=1e-6)
    for k in aux1:  # the training forward updated the moving statistics in both
        np.testing.assert_allclose(aux1[k].asnumpy(), aux2[k].asnumpy(), rtol=1e-6)
    assert not np.allclose(aux2["bn_moving_mean"].asnumpy(), 0)


def test_cached_op_symbol_missing_inputs_and_bad_flags():
    c = mx.sym.var("a") * mx.sym.var("b")
    with mx.name.NameManager():
        z = mx.sym._internal._CachedOp(mx.sym.var("x"), subgraph=c.tojson())
    # as any operator: a missing input becomes the variable <node>_<input>
    assert z.list_arguments() == ["x", "_cachedop0_b"]
    assert z.list_outputs() == ["_cachedop0_" + c.list_outputs()[0]]  # e.g. _cachedop0__mul0_output
    z2 = mx.sym._internal._CachedOp(mx.sym.var("x"), subgraph=c.tojson(), name="sub", static_alloc=True)
    assert z2.list_arguments() == ["x", "sub_b"]
    with pytest.raises(mx.base.MXNetError, match="cannot find argument 'foo'"):
        mx.sym._internal._CachedOp(mx.sym.var("x"), subgraph=c.tojson(), foo=1)
    with pytest.raises(mx.base.MXNetError, match="takes 2 input symbols"):
        mx.sym._internal._CachedOp(*[mx.sym.var(n) for n in "xyz"], subgraph=c.tojson())
    with pytest.raises(mx.base.MXNetError, match="subgraph argument"):
        mx.sym._internal._CachedOp(mx.sym.var("x"))


def test_libinfo_module(monkeypatch, tmp_path):
    # test_libinfo.py: `from mxnet import libinfo`; plexnet has no native library or headers,
    # so the lookups fail as MXNet's do when nothing is found, unless the env points somewhere.
    from plexnet import libinfo
    assert mx.libinfo is libinfo and libinfo.__version__ == mx.__version__
    for var in ("MXNET_LIBRARY_PATH", "MXNET_INCLUDE_PATH", "MXNET_CONF_PATH"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(RuntimeError, match="Cannot find the MXNet include path"):
        libinfo.find_include_path()
    with pytest.raises(RuntimeError, match="Cannot find the MXNet library"):
        libinfo.find_lib_path()
    with pytest.raises(RuntimeError, match="Cannot find the TVM op config"):
        libinfo.find_conf_path()
    lib = tmp_path / "libmxnet.so"
    lib.write_bytes(b"")
    monkeypatch.setenv("MXNET_LIBRARY_PATH", str(lib))
    monkeypatch.setenv("MXNET_INCLUDE_PATH", str(tmp_path))
    assert libinfo.find_lib_path() == [str(lib)]
    assert libinfo.find_include_path() == str(tmp_path)
    monkeypatch.setenv("MXNET_INCLUDE_PATH", "relative/dir")  # missing: warned and ignored
    with pytest.raises(RuntimeError):
        libinfo.find_include_path()


def test_bipartite_matching_zero_size_under_np_shape():
    # test_smoke.test_18927 (MXNet issue 18927; 1.9.1 aborts there, 2.0 returns empty/-1 markers)
    with mx.np_shape(True):
        arr = mx.nd.zeros((0, 2))
        arr_grad = mx.nd.zeros((0, 2))
        mx.autograd.mark_variables([arr], [arr_grad])
        with mx.autograd.record():
            rows, cols = mx.nd.contrib.bipartite_matching(arr, threshold=0.1)
        rows.backward()
        assert rows.shape == (0,) and cols.shape == (2,)
        assert (cols.asnumpy() == -1).all()
        rows, cols = mx.nd.contrib.bipartite_matching(mx.nd.zeros((3, 0, 2)), threshold=0.1)
        assert rows.shape == (3, 0) and cols.shape == (3, 2) and (cols.asnumpy() == -1).all()
    s = mx.nd.array([[0.5, 0.6], [0.1, 0.9]])
    rows, cols = mx.nd.contrib.bipartite_matching(s, threshold=0.2)
    assert rows.asnumpy().tolist() == [0, 1] and cols.asnumpy().tolist() == [0, 1]


def test_cached_op_imperative():
    # MXNet also runs _CachedOp imperatively: nd._internal._CachedOp(*arrays, subgraph=json)
    a, b = mx.sym.var("a"), mx.sym.var("b")
    js = (a * b + 1).tojson()
    r = mx.nd._internal._CachedOp(mx.nd.ones((2,)), mx.nd.ones((2,)) * 3, subgraph=js)
    assert r.asnumpy().tolist() == [4.0, 4.0]
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd._internal._CachedOp(x, mx.nd.array([3.0, 5.0]), subgraph=js, static_alloc=True)
    y.backward()
    assert y.asnumpy().tolist() == [4.0, 11.0] and x.grad.asnumpy().tolist() == [3.0, 5.0]
    with pytest.raises(mx.base.MXNetError, match="foo"):
        mx.nd._internal._CachedOp(x, x, subgraph=js, foo=1)
    with pytest.raises(mx.base.MXNetError, match="subgraph argument"):
        mx.nd._internal._CachedOp(x, x)
