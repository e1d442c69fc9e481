"""The dist benchmark on 3 Ray nodes on loopback: 1 server and 2 workers, each on its own
Ray node (own raylet and object store; the head is this process's ``ray.init`` on
127.0.0.1, no dashboard, private temp dir, and two nodes join it), against MXNet 1.9.1's ps-lite in the same
sitting.

    python plugins/kvstore-dist/bench/dist_bench_3node.py --reps 3 --transports tcp,ray \\
        --mxnet /work/shared/bench/run_mxnet_dist.sh

Workers are Ray actors pinned to nodes 0 and 2 by custom resources; the server actor is
pinned to node 1 (which advertises 127.0.0.1, so that the data goes over loopback).
Each repetition runs every transport once (a fresh job: new server,
same worker processes) and then ps-lite, alternating, so that the machine's load is
shared evenly. Prints every run and the best-of-N per transport and ratios to ps-lite.
The processes share one host, so ``auto`` picks shared memory here; ``tcp`` forces what
runs between hosts.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import ray  # noqa: E402
from ray._private.node import Node  # noqa: E402
from ray._private.parameter import RayParams  # noqa: E402

import dist_workload  # noqa: E402
from plexnet_kvstore_dist import config, ray_transport as rt  # noqa: E402

ray.cloudpickle.register_pickle_by_value(dist_workload)


@ray.remote(num_cpus=0, max_restarts=0)
class BenchWorker:
    """A worker of the benchmark job, living on its own Ray node."""

    def node(self) -> str:
        return ray.get_runtime_context().get_node_id()

    def run(self, env: dict, rounds: int, small: int) -> dict:
        os.environ.update(env)
        import plexnet as mx
        return dist_workload.workload(mx, "dist_sync", rounds, small)


def start_cluster(temp: str) -> list:
    """A head node (this process's ``ray.init`` on 127.0.0.1) and two nodes joining it,
    each with its raylet, object store and a resource ``pxnode<i>`` to pin actors to it.
    (``ray.cluster_utils.Cluster`` made its head advertise an address its driver could
    not reach here, and writes the shared /tmp/ray/ray_current_cluster.)"""
    ctx = ray.init(_node_ip_address="127.0.0.1", include_dashboard=False, _temp_dir=temp, num_cpus=1,
                   resources={"pxnode0": 1}, object_store_memory=400 << 20, log_to_driver=False,
                   namespace="pxbench", configure_logging=True, logging_level="WARNING")
    nodes = []
    for i in (1, 2):
        p = RayParams(gcs_address=ctx.address_info["gcs_address"], node_ip_address="127.0.0.1", num_cpus=1,
                      num_gpus=0, resources={f"pxnode{i}": 1}, object_store_memory=400 << 20, temp_dir=temp,
                      include_log_monitor=False, node_manager_port=0, min_worker_port=0, max_worker_port=0)
        p.dashboard_agent_listen_port = None
        nodes.append(Node(p, head=False, shutdown_at_exit=True, spawn_reaper=True))
    end = time.monotonic() + 60
    while sum(n["Alive"] for n in ray.nodes()) < 3:
        if time.monotonic() > end:
            raise RuntimeError("the two extra Ray nodes did not come up within 60 s")
        time.sleep(0.5)
    return nodes


def run_job(workers: list, transport: str, rounds: int, small: int) -> list[dict]:
    job = "b3-" + uuid.uuid4().hex[:8]
    os.environ["PLEXNET_KVSTORE_TRANSPORT"] = transport
    job_dir = rt.make_job_dir(job)
    servers = rt.start_servers(job, 1, 2, "sync", namespace="pxbench", shm_dir=job_dir,
                               actor_options=[{"resources": {"pxnode1": 0.01}}], **config.server_settings())
    try:
        env = {"PLEXNET_KV_JOB": job, "PLEXNET_RAY_NAMESPACE": "pxbench", "PLEXNET_NUM_WORKERS": "2",
               "PLEXNET_NUM_SERVERS": "1", "PLEXNET_KVSTORE_TRANSPORT": transport}
        return ray.get([w.run.remote(dict(env, PLEXNET_WORKER_RANK=str(r)), rounds, small)
                        for r, w in enumerate(workers)], timeout=300)
    finally:
        for s in servers:
            ray.kill(s)
        rt.remove_job_dir(job_dir)


def run_mxnet(script: str, mxvenv: str) -> list[dict]:
    import random
    env = dict(os.environ, MXVENV=mxvenv, OPENBLAS_CORETYPE="SkylakeX", PORT=str(random.randint(20000, 40000)))
    out = subprocess.run(["bash", script], env=env, capture_output=True, text=True, timeout=300).stdout
    res = []
    # the two workers may print on one line: match each record on its own
    for m in re.finditer(r"round_ms ([\d.]+) GBps [\d.]+ small_us (\d+)", out):
        res.append({"round_ms": float(m.group(1)), "small_us": float(m.group(2))})
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--small", type=int, default=200)
    ap.add_argument("--transports", default="tcp,ray")
    ap.add_argument("--mxnet", default="", help="run_mxnet_dist.sh, run alternately in the same sitting")
    ap.add_argument("--mxvenv", default=os.environ.get("MXVENV", "/work/mxvenv"))
    a = ap.parse_args(argv)
    outer = tempfile.mkdtemp(prefix="pxray-", dir="/tmp")
    nodes = start_cluster(os.path.join(outer, "r"))
    try:
        workers = [BenchWorker.options(resources={f"pxnode{i}": 0.01}).remote() for i in (0, 2)]
        wnodes = ray.get([w.node.remote() for w in workers], timeout=120)
        print(f"Ray nodes: {[(n['NodeID'][:8], n['NodeManagerAddress']) for n in ray.nodes()]}; workers on "
              f"{[n[:8] for n in wnodes]}", flush=True)
        best: dict[str, dict] = {}
        for rep in range(a.reps):
            for tr in a.transports.split(","):
                res = run_job(workers, tr, a.rounds, a.small)
                rnd = max(r["round_ms"] for r in res)
                sm = max(r["small_us"] for r in res)
                print(f"rep {rep} {tr:4s} plane {res[0]['plane']:4s} round_ms {rnd:7.2f} small_us {sm:6.0f} "
                      f"w0 {res[0]['w0']:.4f}", flush=True)
                b = best.setdefault(tr, {"round_ms": 1e9, "small_us": 1e9})
                b["round_ms"], b["small_us"] = min(b["round_ms"], rnd), min(b["small_us"], sm)
            if a.mxnet:
                res = run_mxnet(a.mxnet, a.mxvenv)
                if len(res) == 2:
                    rnd, sm = max(r["round_ms"] for r in res), max(r["small_us"] for r in res)
                    print(f"rep {rep} ps-lite round_ms {rnd:7.2f} small_us {sm:6.0f}", flush=True)
                    b = best.setdefault("ps-lite", {"round_ms": 1e9, "small_us": 1e9})
                    b["round_ms"], b["small_us"] = min(b["round_ms"], rnd), min(b["small_us"], sm)
                else:
                    print(f"rep {rep} ps-lite: no result", flush=True)
            time.sleep(0.5)
        print("best of", a.reps, flush=True)
        ref = best.get("ps-lite")
        for tr, b in best.items():
            ratio = (f"  ratio to ps-lite: round {b['round_ms'] / ref['round_ms']:.2f}x, small "
                     f"{b['small_us'] / ref['small_us']:.2f}x") if ref and tr != "ps-lite" else ""
            print(f"  {tr:8s} round_ms {b['round_ms']:7.2f} small_us {b['small_us']:6.0f}{ratio}", flush=True)
    finally:
        ray.shutdown()
        for n in nodes:
            n.kill_all_processes(check_alive=False, allow_graceful=True)
        shutil.rmtree(outer, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
