"""GPU training-step benchmark: plexnet vs PyTorch, in one run on one machine.

Workloads (float32, synthetic data resident on the GPU, plain SGD without momentum):

- ``resnet18``: CIFAR-style ResNet-18 (3x3 stem, four stages of two basic blocks,
  global average pooling, 10 classes), batch 128, 3x32x32;
- ``lenet``: LeNet (conv 5x5/20, tanh, max-pool, conv 5x5/50, tanh, max-pool, fc 500,
  tanh, fc 10), batch 128, 1x28x28.

plexnet: ``mx.sym`` network, ``simple_bind`` on ``mx.gpu(0)``, ``forward(is_train=True)``,
``backward()``, then ``nd.sgd_update(w, g, lr=lr, out=w)`` per parameter (MXNet's fused update); measured
once with the registry's choice (cuDNN where available) and once with ops-basic's
``xp`` implementations forced (``--impls``). PyTorch: the same network in ``torch.nn``,
``torch.backends.cudnn.benchmark = True``, ``torch.optim.SGD``. Each step is timed to
completion (``mx.nd.waitall()`` / ``torch.cuda.synchronize()``); the median of the timed
steps is reported, and the ratio plexnet / PyTorch.

Prints ``SKIP ...`` and exits 0 where there is no GPU. ``--ctx cpu --batch 4 --steps 2``
runs the plexnet side on the CPU (a smoke test of the script itself).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import plexnet as mx

sym = mx.sym
CUDNN_OPS = ("Convolution", "Pooling", "BatchNorm", "Activation", "softmax", "SoftmaxActivation")


# -- networks ------------------------------------------------------------------------------------------
def resnet18_sym(num_classes: int = 10) -> "mx.sym.Symbol":
    data = sym.Variable("data")

    def conv_bn(x, nf, k, s, p, name, act=True):
        x = sym.Convolution(x, kernel=(k, k), stride=(s, s), pad=(p, p), num_filter=nf, no_bias=True,
                            name=name + "_conv")
        x = sym.BatchNorm(x, fix_gamma=False, eps=1e-5, momentum=0.9, name=name + "_bn")
        return sym.Activation(x, act_type="relu", name=name + "_relu") if act else x

    x = conv_bn(data, 64, 3, 1, 1, "stem")
    cin = 64
    for stage, nf in enumerate((64, 128, 256, 512)):
        for b in range(2):
            s = 2 if (stage > 0 and b == 0) else 1
            name = f"s{stage}b{b}"
            y = conv_bn(x, nf, 3, s, 1, name + "a")
            y = conv_bn(y, nf, 3, 1, 1, name + "b", act=False)
            sc = x if (s == 1 and cin == nf) else conv_bn(x, nf, 1, s, 0, name + "sc", act=False)
            x = sym.Activation(y + sc, act_type="relu", name=name + "_out")
            cin = nf
    x = sym.Pooling(x, global_pool=True, pool_type="avg", kernel=(4, 4), name="gap")
    x = sym.Flatten(x)
    x = sym.FullyConnected(x, num_hidden=num_classes, name="fc")
    return sym.SoftmaxOutput(x, name="softmax")


def lenet_sym() -> "mx.sym.Symbol":
    data = sym.Variable("data")
    h = sym.Convolution(data, kernel=(5, 5), num_filter=20, name="conv1")
    h = sym.Activation(h, act_type="tanh")
    h = sym.Pooling(h, pool_type="max", kernel=(2, 2), stride=(2, 2))
    h = sym.Convolution(h, kernel=(5, 5), num_filter=50, name="conv2")
    h = sym.Activation(h, act_type="tanh")
    h = sym.Pooling(h, pool_type="max", kernel=(2, 2), stride=(2, 2))
    h = sym.Flatten(h)
    h = sym.FullyConnected(h, num_hidden=500, name="fc1")
    h = sym.Activation(h, act_type="tanh")
    h = sym.FullyConnected(h, num_hidden=10, name="fc2")
    return sym.SoftmaxOutput(h, name="softmax")


def torch_models():
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout, eps=1e-5, momentum=0.1)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout, eps=1e-5, momentum=0.1)
            self.sc = None
            if stride != 1 or cin != cout:
                self.sc = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, 0, bias=False), nn.BatchNorm2d(cout))
            self.relu = nn.ReLU()

        def forward(self, x):
            y = self.relu(self.b1(self.c1(x)))
            y = self.b2(self.c2(y))
            return self.relu(y + (x if self.sc is None else self.sc(x)))

    class ResNet18(nn.Module):
        def __init__(self, num_classes=10):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
            layers, cin = [], 64
            for stage, nf in enumerate((64, 128, 256, 512)):
                for b in range(2):
                    layers.append(Block(cin, nf, 2 if (stage > 0 and b == 0) else 1))
                    cin = nf
            self.layers = nn.Sequential(*layers)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(512, num_classes)

        def forward(self, x):
            return self.fc(self.pool(self.layers(self.stem(x))).flatten(1))

    def lenet():
        return nn.Sequential(nn.Conv2d(1, 20, 5), nn.Tanh(), nn.MaxPool2d(2, 2), nn.Conv2d(20, 50, 5), nn.Tanh(),
                             nn.MaxPool2d(2, 2), nn.Flatten(), nn.Linear(50 * 4 * 4, 500), nn.Tanh(),
                             nn.Linear(500, 10))

    return {"resnet18": ResNet18, "lenet": lenet}


WORKLOADS = {"resnet18": (resnet18_sym, (3, 32, 32)), "lenet": (lenet_sym, (1, 28, 28))}


# -- timing ----------------------------------------------------------------------------------------------
def timed(step, sync, warmup: int, steps: int, budget_s: float) -> tuple[float, int]:
    for _ in range(max(1, warmup)):
        step()
    sync()
    t0 = time.perf_counter()
    step()
    sync()
    first = time.perf_counter() - t0
    n = max(3, min(steps, int(budget_s / max(first, 1e-6))))
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3, n


def bench_plexnet(name: str, ctx, batch: int, args) -> tuple[float, int]:
    make, shape = WORKLOADS[name]
    net = make()
    dshape = (batch,) + shape
    exe = net.simple_bind(ctx=ctx, data=dshape, grad_req="write")
    rng = np.random.default_rng(0)
    params = [n for n in exe.arg_dict if n not in ("data", "softmax_label")]
    for n in params:
        arr = exe.arg_dict[n]
        if n.endswith("_gamma"):
            arr[:] = 1.0
        elif n.endswith(("_beta", "_bias")):
            arr[:] = 0.0
        else:
            fan_in = int(np.prod(arr.shape[1:])) if len(arr.shape) > 1 else arr.shape[0]
            b = 1.0 / np.sqrt(max(fan_in, 1))
            arr[:] = rng.uniform(-b, b, arr.shape).astype(np.float32)
    for n, arr in exe.aux_dict.items():
        arr[:] = 1.0 if n.endswith("_var") else 0.0
    exe.arg_dict["data"][:] = rng.standard_normal(dshape).astype(np.float32)
    exe.arg_dict["softmax_label"][:] = rng.integers(0, 10, batch).astype(np.float32)
    lr = args.lr
    grads = [(exe.arg_dict[n], exe.grad_dict[n]) for n in params]

    def step():
        exe.forward(is_train=True)
        exe.backward()
        for w, g in grads:  # MXNet's fused update: one operation per parameter
            mx.nd.sgd_update(w, g, lr=lr, wd=0.0, out=w)

    return timed(step, mx.nd.waitall, args.warmup, args.steps, args.budget)


def bench_torch(name: str, batch: int, args) -> tuple[float, int]:
    import torch
    import torch.nn.functional as F
    torch.backends.cudnn.benchmark = True
    model = torch_models()[name]().cuda()
    _, shape = WORKLOADS[name]
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn((batch,) + shape, device="cuda", generator=g)
    y = torch.randint(0, 10, (batch,), device="cuda", generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    model.train()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    return timed(step, torch.cuda.synchronize, args.warmup, args.steps, args.budget)


def force_xp(on: bool) -> None:
    reg = mx.plugins.registries().operators
    for op in CUDNN_OPS:
        try:
            reg.force_impl(op, "gpu", "xp" if on else None)
        except Exception:  # noqa: BLE001 - operator not installed
            pass


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="resnet18,lenet")
    ap.add_argument("--impls", default="default,xp", help="plexnet variants: default (registry choice), xp")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--budget", type=float, default=60.0, help="seconds of timed steps per measurement at most")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--ctx", default="gpu", choices=("gpu", "cpu"))
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args()

    if args.ctx == "gpu" and mx.num_gpus() < 1:
        from plexnet.backends import find_backend
        b = find_backend("gpu")
        why = getattr(b, "unavailable_reason", None) if b is not None else "plexnet-device-cuda is not installed"
        print(f"SKIP gpu_bench: no GPU ({why})")
        return 0
    ctx = mx.gpu(0) if args.ctx == "gpu" else mx.cpu()
    info = [f"plexnet {mx.__version__}", f"ctx {ctx}"]
    try:
        import plexnet_ops_cudnn
        st = plexnet_ops_cudnn.status()
        info.append(f"ops-cudnn available={st['available']} cudnn={st.get('cudnn_version')} "
                    f"frontend={st.get('frontend_version')}" + (f" ({st['reason']})" if st["reason"] else ""))
    except ImportError:
        plexnet_ops_cudnn = None
        info.append("plexnet-ops-cudnn not installed")
    have_torch = False
    if args.ctx == "gpu" and not args.no_torch:
        try:
            import torch
            have_torch = torch.cuda.is_available()
            info.append(f"torch {torch.__version__} on {torch.cuda.get_device_name(0) if have_torch else 'no GPU'}")
        except ImportError:
            info.append("torch not installed")
    print("# " + "; ".join(info), flush=True)

    impls = [s for s in args.impls.split(",") if s]
    rows = []
    for name in [s for s in args.only.split(",") if s]:
        res = {}
        for impl in impls:
            label = "plexnet" if impl == "default" else f"plexnet-{impl}"
            force_xp(impl == "xp")
            try:
                ms, n = bench_plexnet(name, ctx, args.batch, args)
                res[label] = ms
                print(f"{name}_b{args.batch} {label} {ms:.2f} ms/step (median of {n})", flush=True)
            except Exception as e:  # noqa: BLE001 - report and go on
                print(f"{name}_b{args.batch} {label} FAILED {type(e).__name__}: {e}", flush=True)
            finally:
                force_xp(False)
                mx.nd.waitall()
        if have_torch:
            try:
                ms, n = bench_torch(name, args.batch, args)
                res["torch"] = ms
                print(f"{name}_b{args.batch} torch {ms:.2f} ms/step (median of {n})", flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"{name}_b{args.batch} torch FAILED {type(e).__name__}: {e}", flush=True)
        if "torch" in res:
            for k, v in res.items():
                if k != "torch":
                    print(f"{name}_b{args.batch} ratio {k}/torch = {v / res['torch']:.2f}x", flush=True)
        rows.append((name, res))
    if plexnet_ops_cudnn is not None:
        st = plexnet_ops_cudnn.stats()
        print("# ops-cudnn counters: " + ", ".join(f"{k}={v}" for k, v in sorted(st.items())))
        for k, v in plexnet_ops_cudnn.fallback_reasons().items():
            print(f"# fallback {k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
