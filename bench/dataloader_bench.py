"""DataLoader throughput over a decoded-image dataset: num_workers=0 against 2 workers.

Each sample is a JPEG (256x256 colour, made once in memory) decoded with OpenCV,
randomly cropped to 224x224, flipped, and scaled to float32 CHW; batches of 32 are
stacked by the default batchify function (in the workers when num_workers > 0, then
moved through shared memory). The configurations alternate within one process and the
figures are medians of the rounds and best-of-N (the machine is shared: best-of-N
shows what each configuration does when it gets the CPU).

    python bench/dataloader_bench.py [--rounds 5] [--images 256] [--workers 2]
"""
import argparse
import os
import statistics
import time

import cv2
import numpy as np

from plexnet.gluon.data import DataLoader, Dataset


class JpegDataset(Dataset):
    def __init__(self, n, size=256, seed=0):
        rng = np.random.RandomState(seed)
        base = cv2.resize(rng.randint(0, 255, (32, 32, 3), dtype=np.uint8), (size, size))
        self._jpegs = []
        for i in range(n):
            img = np.roll(base, i, axis=1) ^ np.uint8(i % 7)
            self._jpegs.append(cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes())

    def __len__(self):
        return len(self._jpegs)

    def __getitem__(self, idx):
        img = cv2.imdecode(np.frombuffer(self._jpegs[idx], np.uint8), cv2.IMREAD_COLOR)
        y, x = np.random.randint(0, 32, 2)
        img = img[y:y + 224, x:x + 224]
        if np.random.rand() < 0.5:
            img = img[:, ::-1]
        chw = (img.astype(np.float32) / 255.0).transpose(2, 0, 1)
        return np.ascontiguousarray(chw), idx % 10


def _cpu_of(pids):
    """CPU seconds (user + system) used so far by processes ``pids``."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def run(loader, cpu=None):
    """Images per second of one pass; ``cpu`` (a list) gets the CPU seconds per image
    of this process and of the workers."""
    pool = getattr(loader, "_worker_pool", None)
    pids = pool.pids if pool is not None else []
    c0, w0 = time.process_time(), _cpu_of(pids)
    t = time.perf_counter()
    n = 0
    for data, _label in loader:
        data.wait_to_read()
        n += data.shape[0]
    rate = n / (time.perf_counter() - t)
    if cpu is not None:
        cpu.append(((time.process_time() - c0) / n, (_cpu_of(pids) - w0) / n))
    return rate


def _pressure():
    try:
        with open("/proc/pressure/cpu") as f:
            return f.readline().split()[1]
    except OSError:
        return "n/a"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--images", type=int, default=256)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args()
    cv2.setNumThreads(1)  # one decode per core: the workers give the parallelism
    ds = JpegDataset(args.images)
    l0 = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=0)
    lw = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=args.workers)
    run(l0), run(lw)  # warm up (worker start, allocator)
    r0, rw, c0, cw = [], [], [], []
    print(f"load average {os.getloadavg()[0]:.1f}, CPU pressure {_pressure()} (before)")
    for _ in range(args.rounds):
        r0.append(run(l0, c0))
        rw.append(run(lw, cw))
    ratios = [b / a for a, b in zip(r0, rw)]
    med = statistics.median
    print(f"CPU ms per image: num_workers=0 {med(c[0] for c in c0) * 1e3:.2f}; num_workers={args.workers}: main "
          f"{med(c[0] for c in cw) * 1e3:.2f} + workers {med(c[1] for c in cw) * 1e3:.2f}")
    print(f"num_workers=0: {', '.join(f'{x:.0f}' for x in r0)} images/s (median {statistics.median(r0):.0f})")
    print(f"num_workers={args.workers}: {', '.join(f'{x:.0f}' for x in rw)} images/s "
          f"(median {statistics.median(rw):.0f})")
    print(f"ratio per round: {', '.join(f'{x:.2f}' for x in ratios)}; median {statistics.median(ratios):.2f}x; "
          f"best-of-{args.rounds} {max(rw) / max(r0):.2f}x")
    print(f"load average {os.getloadavg()[0]:.1f}, CPU pressure {_pressure()} (after)")
    lw.close()


if __name__ == "__main__":
    main()
