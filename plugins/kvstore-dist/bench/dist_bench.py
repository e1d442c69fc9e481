"""plexnet's side of /work/shared/bench/dist_kvbench.py (same workload, same output).

2 workers, 1 server on one host: a round is 8 keys x 4 MiB pushed and pulled by each
worker with SGD on the server; then the latency of a 1-element push+pull.

    python plugins/kvstore-dist/bench/dist_bench.py            # launches itself
    plexnet launch -n 2 -s 1 -- python dist_bench.py           # the same, by hand

MXNet's side: MXVENV=/work/mxvenv /work/shared/bench/run_mxnet_dist.sh
"""
import os
import sys

if "PLEXNET_KV_JOB" not in os.environ:
    from plexnet_kvstore_dist.launch import main
    nw = os.environ.get("WORKERS", "2")
    ns = os.environ.get("SERVERS", "1")
    sys.exit(main(["-n", nw, "-s", ns, "--quiet", "--", sys.executable, os.path.abspath(__file__)]))

import plexnet as mx  # noqa: E402
from dist_workload import line, workload  # noqa: E402  (this script's folder is on sys.path)

print(line(workload(mx, os.environ.get("KVTYPE", "dist_sync"), int(os.environ.get("ROUNDS", "20")),
                    int(os.environ.get("SMALL", "200")))), flush=True)
