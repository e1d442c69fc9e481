"""How fast can a ResNet-18 CIFAR training step (batch 32) be on this machine?

    python bench/resnet18_floor.py [--repeats 8]

Prints, for the network of ``../shared/bench/anchor_bench.py --only resnet18``:

* its arithmetic: multiply-adds of every convolution, and the FLOPs of a training step
  (forward + data gradient + weight gradient = 3x the forward);
* the float32 GEMM rate numpy (OpenBLAS) reaches here on a large square matmul, and the
  step time that rate would give if every FLOP ran at it (a lower bound for any
  GEMM-based convolution: im2col, oneDNN's direct kernels);
* the same step in plain PyTorch (oneDNN; NCHW and channels-last), when torch is
  installed: what the best-kept CPU library does with the same arithmetic.

issue 17 asks for <= 0.8x MXNet's step; comparing that time with these floors says
whether a GEMM-class implementation can get there (docs/performance.md, "ResNet-18:
the floor").
"""
from __future__ import annotations

import argparse
import time

import numpy as np

# (in_channels, out_channels, kernel, stride, spatial size of the output) for each conv
STAGES = [(64, 1), (128, 2), (256, 2), (512, 2)]


def conv_layers() -> list[tuple[int, int, int, int, int]]:
    """The convolutions of anchor_bench's resnet18_cifar (3x3 stem, 4 stages of 2 blocks)."""
    layers = [(3, 64, 3, 1, 32)]
    cin, size = 64, 32
    for cout, stride in STAGES:
        size //= stride
        layers.append((cin, cout, 3, stride, size))          # block 1, conv 1
        layers.append((cout, cout, 3, 1, size))              # block 1, conv 2
        if stride != 1 or cin != cout:
            layers.append((cin, cout, 1, stride, size))      # projection shortcut
        layers += [(cout, cout, 3, 1, size)] * 2             # block 2
        cin = cout
    return layers


def step_gflop(batch: int) -> float:
    macs = sum(ci * co * k * k * s * s for ci, co, k, _, s in conv_layers()) * batch
    return 3 * 2 * macs / 1e9


def best(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def numpy_gemm_gflops(n: int = 2048, repeats: int = 5) -> float:
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    out = np.empty((n, n), np.float32)
    # the first second of GEMMs in a process runs at about half speed here (threads and
    # clocks ramping up): warm up, then take the best of two rounds
    t_end = time.perf_counter() + 1.0
    while time.perf_counter() < t_end:
        np.matmul(a, b, out=out)
    return max(2 * n ** 3 / best(lambda: np.matmul(a, b, out=out), repeats) / 1e9 for _ in range(2))


def torch_step_ms(repeats: int, channels_last: bool) -> float | None:
    try:
        import torch
        import torch.nn as tnn
        import torch.nn.functional as F
    except ImportError:
        return None
    torch.manual_seed(0)

    def conv_bn(ci, co, k, s):
        return tnn.Sequential(tnn.Conv2d(ci, co, k, s, k // 2, bias=False), tnn.BatchNorm2d(co))

    class Block(tnn.Module):
        def __init__(self, ci, co, s):
            super().__init__()
            self.a, self.b = conv_bn(ci, co, 3, s), conv_bn(co, co, 3, 1)
            self.short = conv_bn(ci, co, 1, s) if (s != 1 or ci != co) else None

        def forward(self, x):
            y = self.b(F.relu(self.a(x)))
            return F.relu(y + (x if self.short is None else self.short(x)))

    blocks, cin = [], 64
    for cout, stride in STAGES:
        blocks += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    net = tnn.Sequential(conv_bn(3, 64, 3, 1), tnn.ReLU(), *blocks,
                         tnn.AdaptiveAvgPool2d(1), tnn.Flatten(), tnn.Linear(512, 10))
    x, y = torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))
    if channels_last:
        net = net.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()

    return best(step, repeats) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=8)
    args = ap.parse_args()
    gflop = step_gflop(32)
    rate = numpy_gemm_gflops(repeats=max(10, args.repeats))
    print(f"resnet18 CIFAR b32 training step: {gflop:.1f} GFLOP in convolutions "
          f"({len(conv_layers())} conv layers)")
    print(f"numpy float32 GEMM 2048^3: {rate:.0f} GFLOP/s -> {gflop / rate * 1e3:.0f} ms "
          "if every conv FLOP ran at that rate")
    for cl in (False, True):
        ms = torch_step_ms(args.repeats, cl)
        name = "channels-last" if cl else "NCHW"
        print(f"plain PyTorch step ({name}): " + ("torch not installed" if ms is None else
              f"{ms:.0f} ms ({gflop / ms * 1e3:.0f} GFLOP/s effective)"))


if __name__ == "__main__":
    main()
