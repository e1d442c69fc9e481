"""foreach RNN cell (T=20, batch 32, 64 -> 64, tanh): bind once, then best of 5 of
forward (and forward+backward) plus a read of the result.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python plugins/ops-contrib/bench/control_flow_bench.py px
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_CORETYPE=SkylakeX /work/mxvenv/bin/python \\
        plugins/ops-contrib/bench/control_flow_bench.py mx
"""
import sys
import time

import numpy as np

if sys.argv[1:] == ["mx"]:
    import mxnet as mx
else:
    import plexnet as mx

T, N, D, H = 20, 32, 64, 64


def main() -> None:
    x, h0, wx, wh = mx.sym.var("x"), mx.sym.var("h0"), mx.sym.var("wx"), mx.sym.var("wh")

    def body(xt, st):
        h = mx.sym.tanh(mx.sym.FullyConnected(xt, wx, num_hidden=H, no_bias=True)
                        + mx.sym.FullyConnected(st[0], wh, num_hidden=H, no_bias=True))
        return h, [h]

    o, s = mx.sym.contrib.foreach(body, x, [h0])
    sym = mx.sym.Group([o, s[0]])
    rng = np.random.default_rng(0)
    args = {"x": mx.nd.array(rng.normal(size=(T, N, D))), "h0": mx.nd.zeros((N, H)),
            "wx": mx.nd.array(rng.normal(size=(H, D)) * 0.1), "wh": mx.nd.array(rng.normal(size=(H, H)) * 0.1)}
    ex = sym.bind(mx.cpu(), args, args_grad={k: mx.nd.zeros(v.shape) for k, v in args.items()})
    hg = [mx.nd.ones((T, N, H)), mx.nd.ones((N, H))]

    def step(train: bool) -> float:
        t0 = time.perf_counter()
        ex.forward(is_train=train)
        if train:
            ex.backward(hg)
            ex.grad_dict["wx"].asnumpy()
        else:
            ex.outputs[0].asnumpy()
        return time.perf_counter() - t0

    for train in (False, True):
        step(train)
        best = min(step(train) for _ in range(5))
        print(sys.argv[1:] or ["px"], "fwd+bwd" if train else "fwd", f"{best * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
