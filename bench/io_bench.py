"""ImageRecordIter throughput (images/s), by number of preprocess threads.

Generates a ``.rec``/``.idx`` pair of N JPEG images (224x224, quality 90) once, then times
full epochs of ``ImageRecordIter`` producing 3x224x224 float32 batches with
resize(256) + random crop(224) + random mirror + mean/std normalisation.

    python bench/io_bench.py                      # plexnet, threads 1 and 2
    python bench/io_bench.py --threads 1 2 4 --n 4000
    python bench/io_bench.py --mxnet-python /work/mxvenv/bin/python   # + Apache MXNet

Prints figures only (no asserts). Images/s counts every image of every batch (padding
included: it is decoded like the rest; MXNet also reports stale ``pad`` values after a
wrapped batch, so ``batch - pad`` would undercount it). ``--mxnet-python`` runs the same settings through
MXNet 1.x's C++ ImageRecordIter (OpenCV + OpenMP) in that interpreter, on the same file.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

SETTINGS = dict(data_shape=(3, 224, 224), resize=256, rand_crop=True, rand_mirror=True,
                mean_r=123.68, mean_g=116.28, mean_b=103.53, std_r=58.395, std_g=57.12, std_b=57.375)


def make_rec(path_rec: str, path_idx: str, n: int, size: int = 224, seed: int = 0) -> None:
    from plexnet import recordio
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size].astype(np.float32)
    w = recordio.MXIndexedRecordIO(path_idx, path_rec, "w")
    for i in range(n):
        # smooth random colour fields + a little noise: JPEG sizes like photos' thumbnails
        f = rng.uniform(0.02, 0.3, 6)
        p = rng.uniform(0, 6.3, 3)
        img = np.stack([128 + 90 * np.sin(x * f[0] + y * f[1] + p[0]),
                        128 + 90 * np.sin(x * f[2] - y * f[3] + p[1]),
                        128 + 90 * np.cos(x * f[4] + y * f[5] + p[2])], -1)
        img += rng.normal(0, 8, img.shape)
        img = np.clip(img, 0, 255).astype(np.uint8)
        w.write_idx(i, recordio.pack_img(recordio.IRHeader(0, float(i % 10), i, 0), img,
                                         quality=90, img_fmt=".jpg"))
    w.close()


def time_plexnet(rec: str, idx: str, threads: int, batch_size: int, epochs: int) -> dict:
    import plexnet as mx
    it = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, batch_size=batch_size,
                               preprocess_threads=threads, prefetch_buffer=4, shuffle=True,
                               **SETTINGS)
    for _ in it:  # warm-up epoch (page cache, pool start)
        pass
    it.reset()
    n = 0
    t0 = time.perf_counter()
    for _ in range(epochs):
        for b in it:
            b.data[0].wait_to_read()
            n += b.data[0].shape[0]
        it.reset()
    dt = time.perf_counter() - t0
    it.close()
    return {"images": n, "seconds": dt, "images_per_s": n / dt}


MXNET_SCRIPT = r"""
import json, sys, time
import mxnet as mx
rec, idx = sys.argv[1], sys.argv[2]
threads, bs, epochs = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
settings = json.loads(sys.argv[6])
settings["data_shape"] = tuple(settings["data_shape"])
it = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, batch_size=bs, preprocess_threads=threads,
                           prefetch_buffer=4, shuffle=True, **settings)
for _ in it: pass
it.reset()
n = 0
t0 = time.perf_counter()
for _ in range(epochs):
    for b in it:
        b.data[0].wait_to_read()
        n += b.data[0].shape[0]
    it.reset()
dt = time.perf_counter() - t0
print(json.dumps({"images": n, "seconds": dt, "images_per_s": n / dt}))
"""


PIXEL_SCRIPT = r"""
import sys, numpy as np
import mxnet as mx
it = mx.io.ImageRecordIter(path_imgrec=sys.argv[1], path_imgidx=sys.argv[2], batch_size=64, data_shape=(3, 224, 224),
                           resize=256, dtype="uint8", preprocess_threads=2)
np.save(sys.argv[3], np.concatenate([b.data[0].asnumpy() for b in it]))
"""


def check_pixels(python: str, rec: str, idx: str, tmpdir: str) -> str:
    """Resize-only (deterministic) batches of both libraries on the bench file, compared."""
    import plexnet as mx
    path = os.path.join(tmpdir, "mxnet_pixels.npy")
    res = subprocess.run([python, "-c", PIXEL_SCRIPT, rec, idx, path], capture_output=True, text=True,
                         timeout=600, env={**os.environ, "OPENBLAS_CORETYPE": "SkylakeX"})
    if res.returncode != 0:
        return f"MXNet failed: {res.stderr[-300:]}"
    want = np.load(path)
    with mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, batch_size=64, data_shape=(3, 224, 224),
                               resize=256, dtype="uint8", preprocess_threads=2) as it:
        got = np.concatenate([b.data[0].asnumpy() for b in it])
    diff = np.abs(got.astype(np.int16) - want) if got.shape == want.shape else None
    if diff is None:
        return f"shapes differ: {got.shape} vs {want.shape}"
    return (f"{got.shape[0]} images, resize 256 + centre crop 224, uint8: "
            f"{'IDENTICAL' if not diff.any() else f'max diff {diff.max()}, {np.count_nonzero(diff)} values differ'}")


def time_mxnet(python: str, rec: str, idx: str, threads: int, batch_size: int, epochs: int) -> dict:
    res = subprocess.run([python, "-c", MXNET_SCRIPT, rec, idx, str(threads), str(batch_size), str(epochs),
                          json.dumps(SETTINGS)], capture_output=True, text=True, timeout=1800,
                         env={**os.environ, "OPENBLAS_CORETYPE": "SkylakeX"})  # see issue 17
    if res.returncode != 0:
        return {"error": res.stderr[-500:]}
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=640, help="images in the generated .rec")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=3, help="timed epochs (after one warm-up)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs per setting, interleaved; best and median are printed")
    ap.add_argument("--dir", help="keep the generated files here (default: a temp dir)")
    ap.add_argument("--mxnet-python", help="also time Apache MXNet's ImageRecordIter with this Python, "
                    "and compare the pixels of a resize-only pass")
    args = ap.parse_args(argv)

    tmp = None
    d = args.dir
    if d is None:
        tmp = tempfile.TemporaryDirectory()
        d = tmp.name
    os.makedirs(d, exist_ok=True)
    rec, idx = os.path.join(d, f"bench_{args.n}.rec"), os.path.join(d, f"bench_{args.n}.idx")
    if not (os.path.exists(rec) and os.path.exists(idx)):
        t0 = time.perf_counter()
        make_rec(rec, idx, args.n)
        print(f"generated {args.n} JPEGs 224x224 ({os.path.getsize(rec) / 1e6:.1f} MB) "
              f"in {time.perf_counter() - t0:.1f}s")
    print(f"ImageRecordIter -> 3x224x224 float32, resize 256, rand_crop, rand_mirror, mean/std; "
          f"batch {args.batch_size}, {args.epochs} epochs of {args.n}, cpu_count={os.cpu_count()}")
    import cv2
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, OpenCV {cv2.__version__}")
    import statistics

    def report(lib: str, t: int, runs: list[dict]) -> None:
        ok = [r for r in runs if "error" not in r]
        if not ok:
            print(f"  {lib:8s} preprocess_threads={t}: failed: {runs[0]['error']}")
            return
        rates = [r["images_per_s"] for r in ok]
        print(f"  {lib:8s} preprocess_threads={t}: best {max(rates):7.0f} images/s, median "
              f"{statistics.median(rates):7.0f} images/s ({len(ok)} runs of {ok[0]['images']} images)")

    results: dict[tuple[str, int], list[dict]] = {}
    for _ in range(args.repeat):  # interleaved, so that load from elsewhere hits all settings
        for t in args.threads:
            results.setdefault(("plexnet", t), []).append(
                time_plexnet(rec, idx, t, args.batch_size, args.epochs))
            if args.mxnet_python:
                results.setdefault(("mxnet", t), []).append(
                    time_mxnet(args.mxnet_python, rec, idx, t, args.batch_size, args.epochs))
    for (lib, t), runs in sorted(results.items(), key=lambda kv: (kv[0][0] != "plexnet", kv[0][1])):
        report(lib, t, runs)
    best = {lib: max((r["images_per_s"] for r in runs if "error" not in r), default=0.0)
            for (lib, t), runs in results.items() if t == max(args.threads)}
    if best.get("mxnet"):
        med = {lib: statistics.median([r["images_per_s"] for r in runs if "error" not in r] or [0.0])
               for (lib, t), runs in results.items() if t == max(args.threads)}
        print(f"plexnet / MXNet at preprocess_threads={max(args.threads)}: best-of-{args.repeat} "
              f"{best['plexnet'] / best['mxnet']:.2f}x, median {med['plexnet'] / med['mxnet']:.2f}x")
    if args.mxnet_python:
        print("pixels vs MXNet:", check_pixels(args.mxnet_python, rec, idx, d))
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
