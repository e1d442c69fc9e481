"""Differential check of plexnet's Gluon layers and losses against Apache MXNet 1.9.1:
each ``gluon.nn`` / ``gluon.rnn`` layer in several configurations, its parameters set from
one seeded generator (in name order, so both libraries hold the same values), run forward
on fixed inputs (imperative and hybridized) and backward; each ``gluon.loss`` loss under
several options. Compares output values, parameter shapes and input gradients.

    OPENBLAS_CORETYPE=SkylakeX $MXVENV/bin/python tools/mxnet_gluon_differential.py --lib mxnet --out /tmp/mxg.pkl
    python tools/mxnet_gluon_differential.py --lib plexnet --out /tmp/pxg.pkl
    python tools/mxnet_differential.py --compare /tmp/mxg.pkl /tmp/pxg.pkl
"""
from __future__ import annotations

import argparse
import importlib
import pickle
from typing import Any

import numpy as np

#: (layer expression in ``nn`` / ``rnn``, input shape)
LAYERS = [
    ('nn.Dense(5)', (2, 3)), ('nn.Dense(5, flatten=False)', (2, 3, 4)),
    ("nn.Dense(5, use_bias=False, activation='tanh')", (2, 3)), ('nn.Conv1D(4, 3)', (2, 3, 8)),
    ('nn.Conv1D(4, 3, strides=2, padding=1, dilation=2)', (2, 3, 9)), ('nn.Conv2D(4, 3)', (2, 3, 6, 6)),
    ('nn.Conv2D(4, (3, 2), strides=(2, 1), padding=(1, 0), groups=1)', (2, 3, 7, 6)),
    ('nn.Conv2D(6, 3, groups=3, use_bias=False)', (2, 3, 6, 6)), ("nn.Conv2D(4, 3, layout='NHWC')", (2, 6, 6, 3)),
    ('nn.Conv3D(2, 2)', (1, 2, 4, 4, 4)),
    ('nn.Conv2DTranspose(4, 3, strides=2, padding=1, output_padding=1)', (2, 3, 4, 4)),
    ('nn.Conv1DTranspose(2, 3)', (2, 3, 5)), ('nn.Conv3DTranspose(2, 2, strides=2)', (1, 2, 3, 3, 3)),
    ('nn.MaxPool1D(2)', (2, 3, 8)), ('nn.MaxPool2D(3, 2, 1)', (2, 3, 7, 7)),
    ('nn.MaxPool2D(2, ceil_mode=True)', (2, 3, 7, 7)), ('nn.AvgPool2D(3, 2, 1)', (2, 3, 7, 7)),
    ('nn.AvgPool2D(3, 2, 1, count_include_pad=False)', (2, 3, 7, 7)),
    ('nn.AvgPool2D(2, ceil_mode=True)', (2, 3, 7, 7)), ('nn.AvgPool1D(3, 1, 1)', (2, 3, 8)),
    ('nn.AvgPool3D(2)', (1, 2, 4, 4, 4)), ('nn.MaxPool3D(2, 1)', (1, 2, 4, 4, 4)),
    ('nn.GlobalAvgPool2D()', (2, 3, 5, 5)), ('nn.GlobalMaxPool1D()', (2, 3, 5)),
    ('nn.GlobalAvgPool3D()', (1, 2, 3, 3, 3)), ('nn.ReflectionPad2D(2)', (1, 2, 4, 4)),
    ('nn.BatchNorm()', (4, 3, 2, 2)), ('nn.BatchNorm(axis=1, center=False, scale=False)', (4, 3)),
    ('nn.BatchNorm(axis=-1, momentum=0.5, epsilon=1e-3)', (4, 2, 3)),
    ('nn.BatchNorm(use_global_stats=True)', (4, 3, 2)), ('nn.InstanceNorm()', (2, 3, 4)),
    ('nn.InstanceNorm(center=False)', (2, 3, 4, 4)), ('nn.LayerNorm()', (2, 3, 4)),
    ('nn.LayerNorm(axis=1, epsilon=1e-3)', (2, 3, 4)), ('nn.GroupNorm(num_groups=2)', (2, 4, 3)),
    ('nn.Embedding(10, 4)', None), ('nn.Flatten()', (2, 3, 4)), ("nn.Activation('softrelu')", (2, 3)),
    ("nn.Activation('softsign')", (2, 3)), ('nn.LeakyReLU(0.2)', (2, 3)), ('nn.PReLU()', (2, 3, 4)),
    ('nn.PReLU(alpha_initializer=mx.init.Constant(0.1))', (2, 3)), ('nn.ELU(0.5)', (2, 3)), ('nn.SELU()', (2, 3)),
    ('nn.Swish(2.0)', (2, 3)), ('nn.GELU()', (2, 3)), ('nn.SiLU()', (2, 3)), ('nn.Dropout(0.5)', (2, 3)),
    ("nn.HybridLambda('tanh')", (2, 3)), ('nn.Identity()', (2, 3)), ('rnn.RNN(4)', (3, 2, 5)),
    ("rnn.RNN(4, 2, activation='tanh', layout='NTC')", (2, 3, 5)), ('rnn.LSTM(4)', (3, 2, 5)),
    ('rnn.LSTM(4, 2, bidirectional=True)', (3, 2, 5)), ('rnn.LSTM(4, projection_size=3)', (3, 2, 5)),
    ('rnn.GRU(4)', (3, 2, 5)), ("rnn.GRU(4, layout='NTC', bidirectional=True)", (2, 3, 5)),
]

#: (loss expression in ``loss``, prediction shape, label kind, extra keyword arguments of the call)
LOSSES = [
    ('L2Loss()', (3, 4), 'same', {}), ('L2Loss(weight=2.0)', (3, 4), 'same', {'sw': (3, 1)}),
    ('L1Loss()', (3, 4), 'same', {}), ('L1Loss(batch_axis=1)', (3, 4), 'same', {}),
    ('SigmoidBinaryCrossEntropyLoss()', (3, 4), 'binary', {}),
    ('SigmoidBinaryCrossEntropyLoss(from_sigmoid=True)', (3, 4), 'prob', {}),
    ('SigmoidBinaryCrossEntropyLoss()', (3, 4), 'binary', {'pos_weight': (1, 4)}),
    ('SoftmaxCrossEntropyLoss()', (3, 4), 'class', {}), ('SoftmaxCrossEntropyLoss(axis=0)', (4, 3), 'class0', {}),
    ('SoftmaxCrossEntropyLoss(sparse_label=False)', (3, 4), 'onehot', {}),
    ('SoftmaxCrossEntropyLoss(from_logits=True)', (3, 4), 'class', {}),
    ('SoftmaxCrossEntropyLoss()', (3, 4), 'class', {'sw': (3, 1)}), ('KLDivLoss()', (3, 4), 'prob', {}),
    ('KLDivLoss(from_logits=False)', (3, 4), 'prob', {}), ('HuberLoss()', (3, 4), 'same', {}),
    ('HuberLoss(rho=0.5)', (3, 4), 'same', {}), ('HingeLoss()', (3, 4), 'sign', {}),
    ('HingeLoss(margin=2)', (3, 4), 'sign', {}), ('SquaredHingeLoss()', (3, 4), 'sign', {}),
    ('LogisticLoss()', (3, 4), 'sign', {}), ("LogisticLoss(label_format='binary')", (3, 4), 'binary', {}),
    ('TripletLoss()', (3, 4), 'triplet', {}), ('PoissonNLLLoss()', (3, 4), 'count', {}),
    ('PoissonNLLLoss(from_logits=False, compute_full=True)', (3, 4), 'count', {}),
    ('CosineEmbeddingLoss()', (3, 4), 'cosine', {}), ('CosineEmbeddingLoss(margin=0.3)', (3, 4), 'cosine', {}),
    ('CTCLoss()', (2, 5, 4), 'ctc', {}), ("CTCLoss(layout='TNC')", (5, 2, 4), 'ctc', {}),
]


def _set_params(block: Any, rng: np.random.RandomState, mx: Any) -> list:
    shapes = []
    for name, p in sorted(block.collect_params().items(), key=lambda kv: kv[0].split("_", 1)[-1]):
        v = rng.uniform(-0.5, 0.5, p.shape).astype("f4")
        if "var" in name:
            v = np.abs(v) + 0.5
        p.set_data(mx.nd.array(v))
        shapes.append((name.split("_", 1)[-1], tuple(p.shape)))
    return shapes


def run(mx: Any) -> dict:
    nn, rnn, loss = mx.gluon.nn, mx.gluon.rnn, mx.gluon.loss
    env = {"nn": nn, "rnn": rnn, "mx": mx, "loss": loss}
    out: dict = {}
    for i, (expr, shape) in enumerate(LAYERS):
        for hybrid in (False, True):
            key = ("layer", expr, hybrid)
            try:
                rng = np.random.RandomState(i)
                x = rng.randint(0, 10, (2, 3)).astype("f4") if shape is None else rng.uniform(-1, 1, shape).astype("f4")
                net = eval(expr, env)
                net.initialize()
                if hybrid:
                    net.hybridize()
                xin = mx.nd.array(x)
                net(xin)   # deferred shapes
                shapes = _set_params(net, rng, mx)
                xin.attach_grad()
                with mx.autograd.record(train_mode=False):
                    y = net(xin)
                    y = y[0] if isinstance(y, (list, tuple)) else y
                head = np.linspace(0.5, 1.5, y.size).astype("f4").reshape(y.shape)
                y.backward(mx.nd.array(head))
                out[key + ("out",)] = (y.asnumpy(), str(y.dtype))
                out[key + ("grad",)] = (xin.grad.asnumpy(), "f4")
                out[key + ("params",)] = ("desc", repr(shapes))
                with mx.autograd.record(train_mode=True):   # training mode (BatchNorm batch statistics)
                    yt = net(xin)
                    yt = yt[0] if isinstance(yt, (list, tuple)) else yt
                if "Dropout" not in expr:
                    out[key + ("train",)] = (yt.asnumpy(), str(yt.dtype))
            except Exception as e:  # noqa: BLE001
                out[key + ("out",)] = "ERR " + type(e).__name__ + ": " + str(e).splitlines()[0][:80]
    for i, (expr, shape, kind, extra) in enumerate(LOSSES):
        key = ("loss", expr, str(extra))
        try:
            rng = np.random.RandomState(100 + i)
            pred = rng.uniform(-1, 1, shape).astype("f4")
            args = _loss_args(kind, pred, rng)
            kw = {k: mx.nd.array(rng.uniform(0.5, 1.5, s).astype("f4")) for k, s in extra.items()}
            sw = kw.pop("sw", None)
            fn = eval(expr, env)
            p = mx.nd.array(args[0])
            p.attach_grad()
            with mx.autograd.record():
                call = [p] + [mx.nd.array(a) for a in args[1:]] + ([sw] if sw is not None else [])
                val = fn(*call, **kw)
            val.backward()
            out[key + ("out",)] = (val.asnumpy(), str(val.dtype))
            out[key + ("grad",)] = (p.grad.asnumpy(), "f4")
        except Exception as e:  # noqa: BLE001
            out[key + ("out",)] = "ERR " + type(e).__name__ + ": " + str(e).splitlines()[0][:80]
    return out


def _loss_args(kind: str, pred: np.ndarray, rng: np.random.RandomState) -> list:
    n = pred.shape[0]
    if kind == "same":
        return [pred, rng.uniform(-1, 1, pred.shape).astype("f4")]
    if kind == "binary":
        return [pred, rng.randint(0, 2, pred.shape).astype("f4")]
    if kind == "prob":
        p = np.abs(pred) + 0.05
        return [p / p.sum(-1, keepdims=True), rng.dirichlet(np.ones(pred.shape[-1]), n).astype("f4")]
    if kind == "class":
        return [pred, rng.randint(0, pred.shape[-1], n).astype("f4")]
    if kind == "class0":
        return [pred, rng.randint(0, pred.shape[0], pred.shape[1]).astype("f4")]
    if kind == "onehot":
        return [pred, np.eye(pred.shape[-1], dtype="f4")[rng.randint(0, pred.shape[-1], n)]]
    if kind == "sign":
        return [pred, rng.choice([-1.0, 1.0], pred.shape).astype("f4")]
    if kind == "triplet":
        return [pred, rng.uniform(-1, 1, pred.shape).astype("f4"), rng.uniform(-1, 1, pred.shape).astype("f4")]
    if kind == "count":
        return [pred, rng.randint(0, 4, pred.shape).astype("f4")]
    if kind == "cosine":
        return [pred, rng.uniform(-1, 1, pred.shape).astype("f4"), rng.choice([-1.0, 1.0], (n, 1)).astype("f4")]
    if kind == "ctc":
        return [pred, np.array([[1, 2, 0], [3, 3, 1]], "f4")]
    raise ValueError(kind)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", choices=["mxnet", "plexnet"], required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    mx = importlib.import_module(args.lib)
    res = run(mx)
    with open(args.out, "wb") as f:
        pickle.dump(res, f)
    print(len(res), "results")


if __name__ == "__main__":
    main()
