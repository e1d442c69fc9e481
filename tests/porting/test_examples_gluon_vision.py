"""MXNet 1.9.1 behaviours found by running apache/mxnet's Gluon vision / generative example
scripts (docs/porting-examples.md, "Gluon vision and generative models")."""
import gzip
import struct

import numpy as np
import pytest

import plexnet as mx


def _write_mnist(tmp_path, n=8, rows=28, cols=28):
    rng = np.random.RandomState(0)
    img = rng.randint(0, 256, size=(n, rows, cols)).astype(np.uint8)
    lab = (np.arange(n) % 10).astype(np.uint8)
    ip, lp = tmp_path / "img-idx3-ubyte.gz", tmp_path / "lab-idx1-ubyte.gz"
    with gzip.open(ip, "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, rows, cols) + img.tobytes())
    with gzip.open(lp, "wb") as f:
        f.write(struct.pack(">II", 2049, n) + lab.tobytes())
    return str(ip), str(lp), img


@pytest.mark.parametrize("kw,shape", [
    # gluon/image_classification.py (data.mnist_iterator) passes (1, 32, 32): MXNet ignores it
    (dict(input_shape=(1, 32, 32)), (4, 1, 28, 28)),
    (dict(input_shape=(1, 32, 32), flat=True), (4, 784)),
    (dict(input_shape=(784,)), (4, 1, 28, 28)),
    (dict(data_shape=(3, 28, 28)), (4, 1, 28, 28)),
    (dict(input_shape=(784,), flat=True), (4, 784)),
])
def test_mnistiter_shape_comes_from_flat_only(tmp_path, kw, shape):
    ip, lp, img = _write_mnist(tmp_path)
    it = mx.io.MNISTIter(image=ip, label=lp, batch_size=4, shuffle=False, **kw)
    assert it.provide_data[0].shape == shape
    batch = it.next()
    assert batch.data[0].shape == shape
    np.testing.assert_allclose(batch.data[0].asnumpy().reshape(4, 28, 28), img[:4] / 256.0, rtol=1e-6)


class _ScaledByParam(mx.gluon.HybridBlock):
    """embedding_learning/model.py's MarginLoss: a Parameter and a list of indices as inputs."""

    def hybrid_forward(self, F, x, beta_in, idx=None):
        beta = beta_in.data()[idx] if idx is not None else beta_in
        return F.sum(x * beta)


def test_hybridblock_takes_non_array_inputs_when_not_hybridized():
    # MXNet's _gather_type_ctx_info skips leaves that are neither NDArray nor Symbol
    beta = mx.gluon.Parameter("beta", shape=(4,))
    beta.initialize(mx.init.Constant(2.0))
    x = mx.nd.array([1.0, 2.0, 3.0])
    blk = _ScaledByParam()
    with mx.autograd.record():
        out = blk(x, beta, mx.nd.array([0, 1, 3]))
    out.backward()
    assert out.asscalar() == pytest.approx(12.0)
    np.testing.assert_allclose(beta.grad().asnumpy(), [1.0, 2.0, 0.0, 3.0])
    assert blk(x, 0.5).asscalar() == pytest.approx(3.0)  # a float beta (MarginLoss without lr_beta)


def test_hybridblock_input_errors_are_mxnets():
    blk = _ScaledByParam()
    with pytest.raises(ValueError, match="mixed NDArrays and Symbols"):
        blk(mx.nd.ones((2,)), mx.sym.var("b"))
    with pytest.raises(ValueError, match="there must be one NDArray or one Symbol"):
        blk(1.0, 2.0)
    blk.hybridize()
    beta = mx.gluon.Parameter("beta", shape=(2,))
    beta.initialize()
    with pytest.raises(ValueError, match="list of Symbol or NDArray"):
        blk(mx.nd.ones((2,)), beta)


def test_base_type_tuples():
    # gluon/style_transfer/net.py: from mxnet.base import numeric_types
    from plexnet.base import integer_types, numeric_types, string_types
    assert all(isinstance(v, numeric_types) for v in (1, 2.5, np.float32(1), np.int8(3)))
    assert not isinstance("1", numeric_types)
    assert isinstance(np.int64(1), integer_types) and not isinstance(np.int8(1), integer_types)
    assert string_types == (str,)


def test_dataiter_without_getlabel_yields_label_none():
    # gan/dcgan.py's RandIter defines iter_next/getdata only; MXNet's base getlabel returns None
    class RandIter(mx.io.DataIter):
        def __init__(self, batch_size, ndim):
            self.batch_size = batch_size
            self.ndim = ndim
            self.provide_data = [("rand", (batch_size, ndim, 1, 1))]
            self.provide_label = []

        def iter_next(self):
            return True

        def getdata(self):
            return [mx.random.normal(0, 1.0, shape=(self.batch_size, self.ndim, 1, 1))]

    batch = RandIter(4, 3).next()
    assert batch.label is None
    assert batch.data[0].shape == (4, 3, 1, 1)
    mod = mx.mod.Module(mx.sym.FullyConnected(mx.sym.var("rand"), num_hidden=2, name="fc"),
                        data_names=("rand",), label_names=None)
    mod.bind(data_shapes=[("rand", (4, 3, 1, 1))])
    mod.init_params()
    mod.forward(batch, is_train=False)
    assert mod.get_outputs()[0].shape == (4, 2)


class _GuidedReluOp(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], mx.nd.maximum(in_data[0], mx.nd.zeros_like(in_data[0])))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        dy = out_grad[0]
        self.assign(in_grad[0], req[0], mx.nd.maximum(dy, mx.nd.zeros_like(dy)) * out_data[0].__gt__(0))


@mx.operator.register("gv_guided_relu")
class _GuidedReluProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(True)

    def infer_shape(self, in_shapes):
        return (in_shapes[0],), (in_shapes[0],), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _GuidedReluOp()


class _CaptureConv(mx.gluon.HybridBlock):
    """cnn_visualization/gradcam.py's Conv2D: attach_grad on its output while recording."""
    captured = None
    capture = True

    def __init__(self, **kw):
        super().__init__(**kw)
        self.conv = mx.gluon.nn.Conv2D(4, kernel_size=3, padding=1)

    def hybrid_forward(self, F, x):
        out = self.conv(x)
        if _CaptureConv.capture:
            out.attach_grad()
            _CaptureConv.captured = out
        return out


class _Relu(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.Custom(x, op_type="gv_guided_relu")


def test_gradcam_guided_backprop_and_captured_gradient_match_numpy():
    # gradcam_demo.py's mechanics: a Custom op inside HybridBlocks, an intermediate output
    # with attach_grad() during record, backward(one_hot, train_mode=False)
    net = mx.gluon.nn.HybridSequential()
    net.add(_CaptureConv(), _Relu(), mx.gluon.nn.Dense(5))
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(0).randn(1, 2, 5, 5))
    head = mx.nd.one_hot(mx.nd.array([3]), 5)
    _CaptureConv.capture = True                                 # get_conv_out_grad
    with mx.autograd.record(train_mode=False):
        out = net(x)
    out.backward(head, train_mode=False)
    w = net[0].conv.weight.data().asnumpy()
    c = _CaptureConv.captured.asnumpy()[0]                      # conv output (4, 5, 5)
    r = np.maximum(c, 0)
    d_r = net[2].weight.data().asnumpy()[3].reshape(4, 5, 5)
    d_c = np.maximum(d_r, 0) * (r > 0)                          # guided ReLU backward
    np.testing.assert_allclose(_CaptureConv.captured.grad.asnumpy()[0], d_c, rtol=1e-5, atol=1e-6)
    _CaptureConv.capture = False                                # get_image_grad
    x.attach_grad()
    with mx.autograd.record(train_mode=False):
        out = net(x)
    out.backward(head, train_mode=False)
    dxp = np.zeros((2, 7, 7))
    for o in range(4):
        for i in range(5):
            for j in range(5):
                dxp[:, i:i + 3, j:j + 3] += d_c[o, i, j] * w[o]
    np.testing.assert_allclose(x.grad.asnumpy()[0], dxp[:, 1:-1, 1:-1], rtol=1e-4, atol=1e-6)
