"""Handwritten digits with Gluon: a hybridized LeNet trained with autograd + Trainer,
written the way MXNet 1.x's Gluon tutorials trained MNIST.

The data are the same UCI handwritten digits as ``plexnet demo`` (1,797 8x8 images
that scikit-learn ships, no download; the same stratified 80/20 split), and the network
is the demo's LeNet (3x3 conv 20 - tanh - maxpool - 3x3 conv 50 - tanh - maxpool -
dense 500 - tanh - dense 10) with the demo's optimizer settings (SGD, lr 0.1,
momentum 0.9, wd 1e-4, 10 epochs, batch 64), so it reaches the demo's accuracy (about
98 % on the held-out digits).

    python examples/gluon_mnist.py [--epochs N] [--no-hybridize] [--json]

The training code is ``plexnet.demo_gluon`` (also run by ``plexnet demo --gluon``);
everything there but ``load_split`` (the demo's stratified split) is MXNet 1.x Gluon code.
"""
from __future__ import annotations

import argparse
import json
import sys

from plexnet.demo_gluon import evaluate, lenet, load_split, run  # noqa: F401  (the Gluon code lives there)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--no-hybridize", action="store_true")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = ap.parse_args(argv)
    r = run(a.epochs, a.batch_size, a.lr, not a.no_hybridize)
    if a.json:
        print(json.dumps(r))
    else:
        print(f"test accuracy {100 * r['test_accuracy']:.2f} % ({r['test_samples']} held-out digits), "
              f"{r['train_seconds']:.1f} s, {r['samples_per_sec']:.0f} samples/s, "
              f"{'hybridized' if r['hybridized'] else 'imperative'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
