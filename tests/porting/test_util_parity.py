"""MXNet 1.9.1's NumPy-shape switch (mx.np_shape, mx.util.*) found by MXNet's test_infer_shape.py;
expected values recorded with MXNet 1.9.1."""
import threading

import pytest

import plexnet as mx


def test_switch_functions_and_scope():
    assert mx.is_np_shape() is False
    assert mx.np_shape is mx.util.np_shape and mx.set_np_shape is mx.util.set_np_shape
    with mx.np_shape():
        assert mx.is_np_shape()
        with mx.np_shape(False):
            assert not mx.is_np_shape()
        assert mx.is_np_shape()
    assert not mx.is_np_shape()
    assert mx.set_np_shape(True) is False and mx.set_np_shape(False) is True


def test_switch_is_per_thread():
    seen = []
    with mx.np_shape():
        t = threading.Thread(target=lambda: seen.append(mx.is_np_shape()))
        t.start()
        t.join(10)
    assert seen == [False]


def test_use_np_shape_decorator():
    @mx.use_np_shape
    def f(x):
        return x, mx.is_np_shape()

    assert f(3) == (3, True) and not mx.is_np_shape()

    @mx.util.use_np_shape
    class C:
        def m(self):
            return mx.is_np_shape()

    assert C().m() is True
    with pytest.raises(TypeError):
        mx.use_np_shape(3)


def test_completely_unknown_shape_is_none():
    ret = mx.sym.sin(mx.sym.var("data"))
    assert ret.infer_shape_partial() == ([()], [()], [])
    with mx.np_shape():
        assert ret.infer_shape_partial() == ([None], [None], [])
        fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=4)
        assert fc.infer_shape_partial() == ([None, None, None], [None], [])


def test_minus_one_is_the_unknown_dimension():
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    with mx.np_shape(True):
        assert mx.sym.dot(x, y).infer_shape_partial(x=(-1, 3, 4), y=(4, 5))[1] == [(-1, 3, 5)]
        bd = mx.sym.batch_dot(x, y)
        assert bd.infer_shape_partial(x=(-1, 3, 4), y=(-1, 4, 5))[1] == [(-1, 3, 5)]
        assert bd.infer_shape_partial(x=(-1, 3, 4), y=(-1, -1, 5))[1] == [None]
        t = mx.sym.transpose(x, axes=[0, 3, 2, 1])
        assert t.infer_shape_partial(x=(-1, 3, 224, 224))[1] == [(-1, 224, 224, 3)]
        fc = mx.sym.FullyConnected(mx.sym.var("data", shape=(-1, 5)), num_hidden=4)
        assert fc.infer_shape_partial() == ([(-1, 5), (4, 5), (4,)], [(-1, 4)], [])
        fc = mx.sym.FullyConnected(mx.sym.var("data", shape=(3, 5)), num_hidden=4)
        assert fc.infer_shape() == ([(3, 5), (4, 5), (4,)], [(3, 4)], [])
        a, b = mx.sym.var("a"), mx.sym.var("b", shape=(-1, 3))
        assert (a + b).infer_shape_partial() == ([(-1, 3), (-1, 3)], [(-1, 3)], [])
    # legacy semantics: 0 is the unknown dimension (-1 given is read as unknown too)
    assert mx.sym.sin(mx.sym.var("d", shape=(-1, 2, 3))).infer_shape_partial() == ([(0, 2, 3)], [(0, 2, 3)], [])


def test_init_load_and_recordio_cv2_as_mxnet():
    """mx.init.load is nd.load and mx.recordio.cv2 is OpenCV (None without it), as
    MXNet's modules import them at their top."""
    assert mx.init.load is mx.nd.load
    try:
        import cv2
    except ImportError:
        cv2 = None
    assert mx.recordio.cv2 is cv2
    with pytest.raises(AttributeError):
        mx.init.no_such_name
