"""Per-call cost of nd's generic operator path (and, for reference, the element-wise fast path).

    python bench/nd_invoke_bench.py [--lib plexnet|mxnet] [--n 2000] [--rounds 7]

Small arrays so that the kernels cost little and the figure is the front end's:
FullyConnected (8x16 @ 16->8), Convolution (1x1x6x6, 2 filters 3x3), Pooling (max 2x2
stride 2 on 1x2x6x6), BatchNorm (1x2x6x6; inference statistics outside ``--record``,
batch statistics inside), softmax (8x8),
Activation relu (8x8), and ``x * y`` (8x8, the SimpleOp fast path); for plexnet also an
operator whose forward does nothing (two 8x8 inputs: the generic path alone). Best of ``rounds``
blocks of ``n`` calls each (the machine is shared: best-of-N), microseconds per call,
with ``wait_to_read`` only at the end of each block: ``[wall, calling thread's CPU]``
(the second is the front end's own cost; the kernels run on engine workers).
``--backward``: each call is ``record(); y = op(...); y.backward()`` with the inputs'
gradients attached (forward, tape and backward per call), for the operators with a gradient.
"""
from __future__ import annotations

import argparse
import json
import time


def costs(lib: str, n: int, rounds: int, record: bool = False, backward: bool = False) -> dict:
    if lib == "mxnet":
        import mxnet as mx
    else:
        import plexnet as mx
    nd = mx.nd
    x = nd.ones((8, 16))
    w = nd.ones((8, 16))
    b = nd.zeros((8,))
    img = nd.ones((1, 1, 6, 6))
    cw = nd.ones((2, 1, 3, 3))
    cb = nd.zeros((2,))
    s = nd.ones((8, 8))
    pim = nd.ones((1, 2, 6, 6))
    gamma, beta, mmean, mvar = nd.ones((2,)), nd.zeros((2,)), nd.zeros((2,)), nd.ones((2,))
    cases = {
        "FullyConnected": lambda: nd.FullyConnected(x, w, b, num_hidden=8),
        "Convolution": lambda: nd.Convolution(img, cw, cb, kernel=(3, 3), num_filter=2),
        "Pooling": lambda: nd.Pooling(pim, kernel=(2, 2), stride=(2, 2), pool_type="max"),
        "BatchNorm": lambda: nd.BatchNorm(pim, gamma, beta, mmean, mvar),
        "softmax": lambda: nd.softmax(s, axis=-1),
        "Activation": lambda: nd.Activation(s, act_type="relu"),
        "elementwise x*y": lambda: s * s,
    }
    if lib == "plexnet":
        cases["no-op operator"] = _noop(mx, s)
    if backward:
        cases = {k: _fwd_bwd(mx, f) for k, f in cases.items()
                 if k in ("FullyConnected", "Convolution", "Pooling", "BatchNorm", "softmax", "Activation")}
    if record or backward:
        for a in (x, w, b, img, cw, cb, s, pim, gamma, beta):
            a.attach_grad()
    res = {}
    for k, f in cases.items():
        best = bestc = float("inf")
        for _ in range(rounds):
            t, c = time.perf_counter(), time.thread_time()
            if record:
                with mx.autograd.record():
                    for _ in range(n):
                        r = f()
            else:
                for _ in range(n):
                    r = f()
            dt, dc = time.perf_counter() - t, time.thread_time() - c
            r.wait_to_read()
            best, bestc = min(best, dt / n * 1e6), min(bestc, dc / n * 1e6)
        res[k] = (round(best, 2), round(bestc, 2))
    nd.waitall()
    return res


def _fwd_bwd(mx, f):
    def call():
        with mx.autograd.record():
            r = f()
        r.backward()
        return r
    return call


def _noop(mx, s):
    """A registered operator with an empty forward: what the generic path itself costs."""
    from plexnet.operator import Operator, OperatorProperty
    from plexnet.plugins import get_manager

    class NoopProp(OperatorProperty):
        """Does nothing."""

        def list_arguments(self):
            return ["data", "weight"]

    class Noop(Operator):
        def forward(self, ctx, in_data, req, out_data, aux_states):
            pass

    class Plugin:
        @mx.hookimpl
        def plexnet_register_operators(self, registry):
            registry.register_property("_bench_noop", NoopProp)
            registry.register_impl("_bench_noop", "*", lambda prop, ctx: Noop())

    get_manager().add_plugin(Plugin(), "bench-noop")
    f = mx.nd._bench_noop
    return lambda: f(s, s)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", choices=["plexnet", "mxnet"], default="plexnet")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--record", action="store_true", help="inside autograd.record() with inputs attached")
    ap.add_argument("--backward", action="store_true", help="forward + backward per call (see above)")
    a = ap.parse_args()
    print(json.dumps(costs(a.lib, a.n, a.rounds, a.record, a.backward)))


if __name__ == "__main__":
    main()
