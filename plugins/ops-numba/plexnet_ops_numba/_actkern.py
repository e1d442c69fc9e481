"""numba kernels of Activation (``activation.py``): relu forward, and the relu / tanh /
sigmoid gradients from the output, each one pass over flat (1-D) arrays.

numpy needs two passes for relu's gradient (the ``y > 0`` mask, then the product) and three
for tanh's and sigmoid's; here one loop reads ``y`` and ``dy`` once and LLVM vectorises it.
An in-place kernel (``dx`` is ``dy``, ``y`` is ``x``) takes the shared array once: with two
names for one buffer LLVM's run-time alias check fails and the loop runs scalar.

Same arithmetic as ops-basic, in the same order (bit-equal): relu maps NaN to 0 (``fmax``);
its gradient multiplies ``dy`` by 1 or 0 (a NaN ``dy`` stays NaN); tanh's is
``(1 - y * y) * dy``, sigmoid's ``((1 - y) * y) * dy``."""
from __future__ import annotations

import numba

_jit = numba.njit(nogil=True, cache=True)


@_jit
def relu(x, y):  # pragma: no cover - compiled
    zero = x.dtype.type(0)
    for i in range(x.size):
        v = x[i]
        y[i] = v if v > zero else zero


@_jit
def relu_inplace(a):  # pragma: no cover - compiled
    zero = a.dtype.type(0)
    for i in range(a.size):
        v = a[i]
        a[i] = v if v > zero else zero


@_jit
def relu_grad(dy, y, dx, add):  # pragma: no cover - compiled
    one, zero = y.dtype.type(1), y.dtype.type(0)
    if add:
        for i in range(dy.size):
            dx[i] += dy[i] * (one if y[i] > zero else zero)
    else:
        for i in range(dy.size):
            dx[i] = dy[i] * (one if y[i] > zero else zero)


@_jit
def relu_grad_inplace(g, y):  # pragma: no cover - compiled
    one, zero = y.dtype.type(1), y.dtype.type(0)
    for i in range(g.size):
        g[i] = g[i] * (one if y[i] > zero else zero)


@_jit
def tanh_grad(dy, y, dx, add):  # pragma: no cover - compiled
    one = y.dtype.type(1)
    if add:
        for i in range(dy.size):
            v = y[i]
            dx[i] += (one - v * v) * dy[i]
    else:
        for i in range(dy.size):
            v = y[i]
            dx[i] = (one - v * v) * dy[i]


@_jit
def tanh_grad_inplace(g, y):  # pragma: no cover - compiled
    one = y.dtype.type(1)
    for i in range(g.size):
        v = y[i]
        g[i] = (one - v * v) * g[i]


@_jit
def sigmoid_grad(dy, y, dx, add):  # pragma: no cover - compiled
    one = y.dtype.type(1)
    if add:
        for i in range(dy.size):
            v = y[i]
            dx[i] += ((one - v) * v) * dy[i]
    else:
        for i in range(dy.size):
            v = y[i]
            dx[i] = ((one - v) * v) * dy[i]


@_jit
def sigmoid_grad_inplace(g, y):  # pragma: no cover - compiled
    one = y.dtype.type(1)
    for i in range(g.size):
        v = y[i]
        g[i] = ((one - v) * v) * g[i]
