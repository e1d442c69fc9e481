"""Run-ahead of an imperative Gluon LeNet loop: how long the main thread takes to push
20 steps, and the step time, with a given number of warm-up steps (which primes the
storage pool). Engine backpressure is ``PLEXNET_ENGINE_MAX_PENDING`` (0: off).

    python bench/gluon_runahead.py i 3              # imperative, 3 warm-up steps
    python bench/gluon_runahead.py i 25             # pool primed by 25 warm-up steps
    PLEXNET_ENGINE_MAX_PENDING=0 python bench/gluon_runahead.py i 3
    python bench/gluon_runahead.py h 3              # hybridized
"""
import sys
import time

import numpy as np

import plexnet as mx
from plexnet import gluon, autograd, nd
nn = gluon.nn
h = sys.argv[1] == "h"
net = nn.HybridSequential()
net.add(nn.Conv2D(20, 5, activation="tanh"), nn.MaxPool2D(2, 2),
        nn.Conv2D(50, 5, activation="tanh"), nn.MaxPool2D(2, 2),
        nn.Flatten(), nn.Dense(500, activation="tanh"), nn.Dense(10))
net.initialize(mx.init.Uniform(0.07))
if h:
    net.hybridize()
rng = np.random.RandomState(0)
X = nd.array(rng.rand(64, 1, 28, 28).astype("f4"))
Y = nd.array(rng.randint(0, 10, 64).astype("f4"))
L = gluon.loss.SoftmaxCrossEntropyLoss()
tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})


def step():
    with autograd.record():
        loss = L(net(X), Y)
    loss.backward()
    tr.step(64)


for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 3):
    step()
nd.waitall()
t = time.perf_counter()
c = time.thread_time()
marks = []
for _ in range(20):
    step()
    marks.append((time.perf_counter() - t) * 1e3)
tpush = time.perf_counter() - t
nd.waitall()
el = (time.perf_counter() - t) / 20 * 1e3
print("step %.2f ms; main-thread CPU %.1f ms over %.1f ms of pushing (total %.0f ms)"
      % (el, (time.thread_time() - c) * 1e3, tpush * 1e3, el * 20))
print("push marks", [round(m) for m in marks[:6]], "...", round(marks[-1]))
