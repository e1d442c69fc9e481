"""``plexnet demo``: train LeNet on handwritten digits, end to end, in well under a minute.

The data are the UCI handwritten digits scikit-learn ships (1,797 8x8 images, no
download; ``pip install 'plexnet[demo]'``). The network is LeNet adapted to 8x8 inputs
(two 3x3 convolution + max-pooling stages, a 500-unit hidden layer, softmax), built with
the symbolic API and trained with ``Module.fit`` through a kvstore, the way MXNet 1.x
trained MNIST. At the end a table shows the held-out test accuracy, the training time,
the throughput and the peak memory::

    plexnet demo                         # 10 epochs on cpu, kvstore 'local'
    plexnet demo --epochs 3 --profile trace.json
    plexnet demo --kvstore dist_sync     # workers on this machine (plexnet-kvstore-dist)
    plexnet demo --ctx gpu               # needs a GPU backend (plexnet-device-cuda)
    plexnet demo --json > figures.json   # the figures as JSON on stdout (the table on stderr)
    plexnet demo -o figures.json         # the table on stdout, the figures into a file

Exit status as pip's: 0 done, 1 an error (a missing plugin or device: one line on
stderr saying what to install), 2 a usage error.

``run(...)`` does the same from Python and returns the figures as a dict.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from typing import Any, Sequence

__all__ = ["main", "run", "lenet", "DemoError"]

log = logging.getLogger("plexnet.demo")


class DemoError(Exception):
    """A demo option cannot be honoured here (missing plugin, no GPU ...); the message
    says what to install or change."""


def lenet(num_classes: int = 10) -> Any:
    """LeNet for 1x8x8 inputs: conv(3x3, 20) - tanh - maxpool(2) - conv(3x3, 50) - tanh -
    maxpool(2) - fc(500) - tanh - fc(num_classes) - SoftmaxOutput."""
    from . import symbol as sym
    data = sym.Variable("data")
    conv1 = sym.Convolution(data=data, kernel=(3, 3), pad=(1, 1), num_filter=20, name="conv1")
    act1 = sym.Activation(data=conv1, act_type="tanh", name="tanh1")
    pool1 = sym.Pooling(data=act1, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool1")
    conv2 = sym.Convolution(data=pool1, kernel=(3, 3), pad=(1, 1), num_filter=50, name="conv2")
    act2 = sym.Activation(data=conv2, act_type="tanh", name="tanh2")
    pool2 = sym.Pooling(data=act2, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool2")
    flat = sym.Flatten(data=pool2, name="flatten")
    fc1 = sym.FullyConnected(data=flat, num_hidden=500, name="fc1")
    act3 = sym.Activation(data=fc1, act_type="tanh", name="tanh3")
    fc2 = sym.FullyConnected(data=act3, num_hidden=num_classes, name="fc2")
    return sym.SoftmaxOutput(data=fc2, name="softmax")


# -- environment checks -------------------------------------------------------------------------
#: the operators lenet() uses
_NEEDED_OPERATORS = ("Convolution", "Activation", "Pooling", "Flatten", "FullyConnected", "SoftmaxOutput")


def _require_operators() -> None:
    """DemoError naming the distribution to install when an operator lenet() needs is missing."""
    from .operator.hints import DEFAULT_DISTRIBUTION, providing_distribution
    from .plugins import registries
    ops = registries().operators
    missing = [n for n in _NEEDED_OPERATORS if n not in ops]
    if missing:
        dists = sorted({providing_distribution(n) or DEFAULT_DISTRIBUTION for n in missing})
        raise DemoError(f"the demo needs the standard operators, and no installed plugin provides them: "
                        f"pip install {' '.join(dists)}")


def _context(kind: str) -> Any:
    from .context import cpu, gpu
    if kind == "cpu":
        return cpu(0)
    if kind != "gpu":
        raise DemoError(f"--ctx must be 'cpu' or 'gpu', got {kind!r}")
    from .backends import find_backend
    b = find_backend("gpu")
    if b is None:
        raise DemoError("--ctx gpu: no GPU backend is installed. Install the CUDA backend "
                        "(pip install plugins/device-cuda, needs CuPy and an NVIDIA GPU); "
                        "`plexnet plugins` lists the devices plexnet sees.")
    try:
        ok = bool(b.is_available()) and b.num_devices() > 0
    except Exception as e:  # noqa: BLE001
        raise DemoError(f"--ctx gpu: the GPU backend failed: {type(e).__name__}: {e}") from e
    if not ok:
        reason = getattr(b, "unavailable_reason", None) or "no GPU found"
        raise DemoError(f"--ctx gpu: the GPU backend is installed but unavailable: {reason}")
    return gpu(0)


def _dist_launcher() -> Any:
    """``plexnet_kvstore_dist.launch.main`` (the ``plexnet launch`` command), or a
    DemoError that says what to install."""
    try:
        import plexnet_kvstore_dist  # noqa: F401
    except ImportError as e:
        raise DemoError("--kvstore dist_*: the distributed kvstore plugin is not installed; install it with "
                        "`pip install plugins/kvstore-dist` (or `pip install plexnet-kvstore-dist`), "
                        "or use --kvstore local") from e
    try:
        from plexnet_kvstore_dist import launch as launch_mod  # type: ignore[import-not-found]
    except ImportError as e:
        raise DemoError(f"--kvstore dist_*: plexnet-kvstore-dist is installed but its launcher does not load "
                        f"({type(e).__name__}: {e}); is Ray installed?") from e
    fn = getattr(launch_mod, "main", None)
    if not callable(fn):
        raise DemoError("--kvstore dist_*: plexnet_kvstore_dist.launch has no main(argv); start the workers "
                        "yourself: plexnet launch -n 2 -- plexnet demo --kvstore dist_sync")
    return fn


def _in_dist_worker() -> bool:
    """True inside a worker started by ``plexnet launch`` (or any MXNet-style launcher)."""
    return bool(os.environ.get("PLEXNET_WORKER_RANK")) or os.environ.get("DMLC_ROLE") == "worker"


# -- the run ------------------------------------------------------------------------------------
def _peak_rss_bytes() -> int | None:
    try:
        import resource
        r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(r) * (1 if sys.platform == "darwin" else 1024)
    except (ImportError, OSError, ValueError):
        return None


def run(epochs: int = 10, batch_size: int = 64, kvstore: str = "local", ctx: str = "cpu", seed: int = 42,
        lr: float = 0.1, profile: str | None = None, progress: Any = None, test_fraction: float = 0.2,
        logger: Any = None) -> dict[str, Any]:
    """Train and evaluate; returns the figures (``test_accuracy``, ``train_seconds``,
    ``samples_per_sec``, ``peak_storage_bytes``, ``peak_rss_bytes`` ...)."""
    import numpy as np

    from . import datasets
    from . import initializer as init
    from . import io as mxio
    from . import kvstore as kvs
    from . import metric, profiler
    from . import random as mxrandom
    from . import storage
    from .module import Module

    context = _context(ctx)
    split = datasets.load_digits(test_fraction=test_fraction, seed=seed)
    train_x, train_y = split.train_data, split.train_label
    # a KVStore object (not a name): Module then uses it even on one device (with a name,
    # MXNet's rule skips the kvstore for a single device), so the demo goes through the
    # kvstore: gradients are pushed, the store's optimizer updates, weights are pulled
    kv = kvs.create(kvstore)
    rank, nworkers = kv.rank, kv.num_workers
    if nworkers > 1:
        train_x, train_y = train_x[rank::nworkers], train_y[rank::nworkers]
    np.random.seed(seed)
    mxrandom.seed(seed)

    train_iter = mxio.NDArrayIter(train_x, train_y, batch_size, shuffle=True)
    val_iter = mxio.NDArrayIter(split.test_data, split.test_label, batch_size)
    mod = Module(lenet(), context=context, logger=logger or log)
    saved_env: dict[str, str | None] = {}
    if profile:
        # one trace event per operator: executors bound from here on do not bulk
        # consecutive operators into one engine operation (as MXNet advises for profiling)
        for k in ("PLEXNET_EXEC_BULK_EXEC_TRAIN", "PLEXNET_EXEC_BULK_EXEC_INFERENCE"):
            saved_env[k] = os.environ.get(k)
            os.environ.setdefault(k, "0")
        profiler.set_config(filename=profile, profile_all=True)
        profiler.set_state("run")
    t0 = time.time()
    try:
        mod.fit(train_iter, eval_data=val_iter, eval_metric="acc", kvstore=kv, optimizer="sgd",
                optimizer_params={"learning_rate": lr, "momentum": 0.9, "wd": 1e-4},
                initializer=init.Xavier(), num_epoch=epochs, progress=progress)
        from . import nd
        nd.waitall()
    finally:
        if profile:
            profiler.set_state("stop")
            for k, v in saved_env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    train_seconds = time.time() - t0
    stats = dict(mod.last_fit_stats)

    # exact held-out accuracy: predict() drops the padding of the last batch
    prob = mod.predict(mxio.NDArrayIter(split.test_data, None, batch_size)).asnumpy()
    acc = metric.Accuracy()
    acc.update([split.test_label], [prob])
    test_acc = float(acc.get()[1])
    if profile:
        profiler.dump()
    st = storage.get().stats(context)
    return {
        "test_accuracy": test_acc,
        "test_samples": int(len(split.test_label)),
        "train_samples": int(len(train_y)),
        "epochs": epochs,
        "batch_size": batch_size,
        "kvstore": kvstore,
        "workers": nworkers,
        "update_on_kvstore": bool(mod._update_on_kvstore),
        "context": str(context),
        "train_seconds": train_seconds,
        "fit_seconds": stats.get("seconds", train_seconds),
        "samples_per_sec": stats.get("samples_per_sec", 0.0),
        "final_train_accuracy": (stats.get("epochs") or [{}])[-1].get("train", {}).get("accuracy"),
        "peak_storage_bytes": int(st.peak),
        "peak_rss_bytes": _peak_rss_bytes(),
        "profile": profile,
        "per_epoch": stats.get("epochs", []),
    }


def _mib(n: int | None) -> str:
    return "n/a" if n is None else f"{n / (1 << 20):.1f} MiB"


def format_table(r: dict[str, Any]) -> str:
    rows = [
        ("test accuracy", f"{100 * r['test_accuracy']:.2f} %  ({r['test_samples']} held-out digits)"),
        ("train time", f"{r['train_seconds']:.1f} s  ({r['epochs']} epochs, batch {r['batch_size']})"),
        ("throughput", f"{r['samples_per_sec']:.0f} samples/s  ({r['train_samples']} training digits/epoch)"),
        ("peak memory", f"{_mib(r['peak_storage_bytes'])} plexnet storage on {r['context']}, "
                        f"{_mib(r['peak_rss_bytes'])} process peak RSS"),
        ("kvstore / device", f"{r['kvstore']} / {r['context']}"
                             + (f"  ({r['workers']} workers, figures of worker 0)" if r.get("workers", 1) > 1 else "")),
    ]
    if r.get("profile"):
        rows.append(("profile", f"{r['profile']} (open in https://ui.perfetto.dev or chrome://tracing)"))
    w = max(len(k) for k, _ in rows)
    v = max(len(x) for _, x in rows)
    line = "+" + "-" * (w + 2) + "+" + "-" * (v + 2) + "+"
    out = [line] + [f"| {k.ljust(w)} | {x.ljust(v)} |" for k, x in rows] + [line]
    return "\n".join(out)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="plexnet demo",
        description="Train LeNet on the UCI handwritten digits (scikit-learn's load_digits, no download) "
                    "with the symbolic API, Module.fit and a kvstore; print accuracy, time, throughput "
                    "and memory.")
    p.add_argument("--epochs", type=int, default=10, help="training epochs (default 10)")
    p.add_argument("--batch-size", type=int, default=64, help="batch size (default 64)")
    p.add_argument("--lr", type=float, default=0.1, help="SGD learning rate (default 0.1, momentum 0.9)")
    p.add_argument("--seed", type=int, default=42, help="random seed (data split, init, shuffling)")
    p.add_argument("--kvstore", default="local", choices=["local", "device", "dist_sync", "dist_async"],
                   help="kvstore type (dist_*: workers on this machine through plexnet-kvstore-dist)")
    p.add_argument("--num-workers", type=int, default=2, help="workers for --kvstore dist_* (default 2)")
    p.add_argument("--ctx", default="cpu", choices=["cpu", "gpu"], help="device (gpu needs plexnet-device-cuda)")
    p.add_argument("--profile", metavar="TRACE.json", help="write a Chrome trace of the training here")
    p.add_argument("--json", action="store_true",
                   help="print the figures as JSON on stdout (the table goes to stderr)")
    p.add_argument("-o", "--output", metavar="FILE", help="also write the figures as JSON into FILE")
    p.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="always show the progress bar (default: when stderr is a terminal)")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    p.add_argument("-q", "--quiet", action="store_true", help="only the final table")
    p.add_argument("--gluon", action="store_true",
                   help="train the same LeNet with Gluon (autograd + Trainer, hybridized) instead of Module")
    return p


def _run_gluon(args: argparse.Namespace, quiet: bool) -> dict[str, Any]:
    """The Gluon variant of the demo (``plexnet.demo_gluon``), with the table's figures."""
    from . import demo_gluon, storage
    context = _context(args.ctx)
    r = demo_gluon.run(epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, seed=args.seed,
                       ctx=context, verbose=not quiet)
    st = storage.get().stats(context)
    r.update({"context": str(context), "kvstore": "gluon.Trainer", "peak_storage_bytes": int(st.peak),
              "peak_rss_bytes": _peak_rss_bytes()})
    return r


def main(argv: Sequence[str] | None = None) -> int:
    """``plexnet demo [options]``; returns the exit status."""
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.epochs < 1 or args.batch_size < 1 or args.num_workers < 1:
        sys.stderr.write("plexnet demo: --epochs, --batch-size and --num-workers must be >= 1\n")
        return 2
    if args.gluon and (args.kvstore != "local" or args.profile):
        sys.stderr.write("plexnet demo: --gluon trains in one process without a profile; drop --kvstore/--profile\n")
        return 2
    worker_rank = int(os.environ.get("PLEXNET_WORKER_RANK", os.environ.get("DMLC_WORKER_ID", "0")) or 0)
    quiet = args.quiet or worker_rank != 0  # in a distributed run only worker 0 reports
    if not quiet and not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(message)s")
    if not quiet:
        log.setLevel(logging.INFO)
    silent = logging.getLogger("plexnet.demo.quiet")
    silent.setLevel(logging.WARNING)
    try:
        _require_operators()
        from . import datasets
        datasets.require_sklearn()
        if args.kvstore.startswith("dist") and not _in_dist_worker():
            launch_main = _dist_launcher()
            worker_cmd = [sys.executable, "-m", "plexnet.demo"] + list(sys.argv[1:] if argv is None else argv)
            launch_argv = ["-n", str(args.num_workers), "-s", "1"] + (["--quiet"] if args.quiet else [])
            return int(launch_main(launch_argv + ["--"] + worker_cmd) or 0)
        lead = worker_rank == 0
        if args.gluon:
            r = _run_gluon(args, quiet)
        else:
            r = run(epochs=args.epochs, batch_size=args.batch_size, kvstore=args.kvstore, ctx=args.ctx,
                    seed=args.seed, lr=args.lr, profile=args.profile if lead else None,
                    progress=False if quiet else args.progress,
                    logger=log if not quiet else silent)
    except (DemoError, ImportError) as e:
        sys.stderr.write(f"plexnet demo: {e}\n")
        return 1
    if not lead:
        return 0
    print(format_table(r), file=sys.stderr if args.json else sys.stdout)
    text = json.dumps(r, indent=1, default=str)
    if args.json:
        print(text)
    if args.output:
        from .model import atomic_write
        atomic_write(args.output, text + "\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
