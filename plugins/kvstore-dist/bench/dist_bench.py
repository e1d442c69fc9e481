"""plexnet's side of /work/shared/bench/dist_kvbench.py (same workload, same output).

2 workers, 1 server on one host: a round is 8 keys x 4 MiB pushed and pulled by each
worker with SGD on the server; then the latency of a 1-element push+pull.

    python plugins/kvstore-dist/bench/dist_bench.py            # launches itself
    plexnet launch -n 2 -s 1 -- python dist_bench.py           # the same, by hand

MXNet's side: MXVENV=/work/mxvenv /work/shared/bench/run_mxnet_dist.sh
"""
import os
import sys
import time

if "PLEXNET_KV_JOB" not in os.environ:
    from plexnet_kvstore_dist.launch import main
    nw = os.environ.get("WORKERS", "2")
    ns = os.environ.get("SERVERS", "1")
    sys.exit(main(["-n", nw, "-s", ns, "--quiet", "--", sys.executable, os.path.abspath(__file__)]))

import plexnet as mx  # noqa: E402

kv = mx.kv.create(os.environ.get("KVTYPE", "dist_sync"))
shape = (1024, 1024)
keys = list(range(8))
kv.init(keys, [mx.nd.zeros(shape) for _ in keys])
kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.01))
g = [mx.nd.ones(shape) for _ in keys]
out = [mx.nd.zeros(shape) for _ in keys]
for _ in range(3):
    kv.push(keys, g)
    kv.pull(keys, out=out)
mx.nd.waitall()
R = int(os.environ.get("ROUNDS", "20"))
t = time.perf_counter()
for _ in range(R):
    kv.push(keys, g)
    kv.pull(keys, out=out)
mx.nd.waitall()
dt = (time.perf_counter() - t) / R
small = mx.nd.ones((1,))
kv.init(100, small)
so = mx.nd.zeros((1,))
N = int(os.environ.get("SMALL", "200"))
for _ in range(10):
    kv.push(100, small)
    kv.pull(100, out=so)
    so.wait_to_read()
t = time.perf_counter()
for _ in range(N):
    kv.push(100, small)
    kv.pull(100, out=so)
    so.wait_to_read()
lat = (time.perf_counter() - t) / N
print(f"rank {kv.rank}/{kv.num_workers} round_ms {dt*1e3:.2f} GBps {len(keys)*2*4*2**20/dt/1e9:.3f} "
      f"small_us {lat*1e6:.0f} w0 {out[0].asnumpy()[0,0]:.4f}", flush=True)
kv.close()
