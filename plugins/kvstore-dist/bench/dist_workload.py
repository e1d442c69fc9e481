"""The dist benchmark's workload (the one of /work/shared/bench/dist_kvbench.py), shared by
``dist_bench.py`` (processes under ``plexnet launch``) and ``dist_bench_3node.py`` (Ray
actors on 3 Ray nodes)."""
import time


def workload(mx, kvtype="dist_sync", rounds=20, small_iters=200):
    """2 workers x 8 keys x 4 MiB pushed and pulled a round, SGD on the server, then the
    latency of a 1-element push+pull; returns the figures of this worker."""
    kv = mx.kv.create(kvtype)
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
    t = time.perf_counter()
    for _ in range(rounds):
        kv.push(keys, g)
        kv.pull(keys, out=out)
    mx.nd.waitall()
    dt = (time.perf_counter() - t) / rounds
    small = mx.nd.ones((1,))
    kv.init(100, small)
    so = mx.nd.zeros((1,))
    for _ in range(10):
        kv.push(100, small)
        kv.pull(100, out=so)
        so.wait_to_read()
    t = time.perf_counter()
    for _ in range(small_iters):
        kv.push(100, small)
        kv.pull(100, out=so)
        so.wait_to_read()
    lat = (time.perf_counter() - t) / small_iters
    res = {"rank": kv.rank, "num_workers": kv.num_workers, "round_ms": dt * 1e3,
           "GBps": len(keys) * 2 * 4 * 2 ** 20 / dt / 1e9, "small_us": lat * 1e6, "w0": float(out[0].asnumpy()[0, 0]),
           "plane": getattr(kv._transport, "plane", "?")}
    kv.close()
    return res


def line(r):
    return (f"rank {r['rank']}/{r['num_workers']} round_ms {r['round_ms']:.2f} GBps {r['GBps']:.3f} "
            f"small_us {r['small_us']:.0f} w0 {r['w0']:.4f} plane {r['plane']}")
