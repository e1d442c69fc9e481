"""Cutting a stream of examples into batches the way MXNet's C++ iterators do.

``BatchPlanner`` decides *which* examples make up each batch (positions ``0..n-1`` of
one part of the data set) without touching the data, so the decoding can run on worker
threads while the plan stays deterministic and cheap to rewind.

``round_batch=True`` (MXNet's default for CSVIter/ImageRecordIter): a last, short batch
is completed with examples from the start of the next pass (``pad`` says how many), and
the epoch after it continues *after* those examples instead of repeating them. A
``reset()`` in the middle of an epoch starts over from the beginning.

``round_batch=False``: the short batch is reported with ``pad = batch_size - n_real``;
its tail repeats the batch's own examples (MXNet left stale data there and reported
``pad = 0`` for ImageRecordIter, a known bug; plexnet reports the real pad).

``last_batch='discard'``: a short last batch is dropped (MNISTIter).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

__all__ = ["Plan", "BatchPlanner"]


class Plan(NamedTuple):
    """One batch to build: ``positions`` (int64, ``batch_size`` of them), ``pad``,
    ``serial`` (count of plans made so far, seeds augmentation), ``epoch``."""

    positions: np.ndarray
    pad: int
    serial: int
    epoch: int


@dataclass
class _State:
    epoch: int = 0          # how many passes over the data have started (order seed)
    pos: int = 0            # next position in the current pass's order
    overflow: int = 0       # round_batch: examples borrowed from the next pass
    serial: int = 0
    done: bool = False      # this epoch is over until reset()


class BatchPlanner:
    """Plans batches over ``n`` examples (see the module docstring for the semantics).

    ``shuffle``: each pass visits the examples in a new random order derived from
    ``(seed, pass number)``, so runs are reproducible and independent of threading.
    """

    def __init__(self, n: int, batch_size: int, *, round_batch: bool = True,
                 last_batch: str | None = None, shuffle: bool = False, seed: int = 0) -> None:
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if n < 1:
            raise ValueError("no examples to iterate over (empty data set or empty part)")
        self.n = int(n)
        self.batch_size = int(batch_size)
        if last_batch is None:
            last_batch = "round" if round_batch else "pad"
        if last_batch not in ("round", "pad", "discard"):
            raise ValueError(f"last_batch must be 'round', 'pad' or 'discard', got {last_batch!r}")
        self.last_batch = last_batch
        self.shuffle = bool(shuffle)
        self.seed = int(seed)
        self._st = _State()
        self._order = self._make_order(0)

    # -- state ----------------------------------------------------------------------------
    def state(self) -> _State:
        """A snapshot to hand back to ``restore`` (used to rewind prefetched plans)."""
        return _State(**vars(self._st))

    def restore(self, st: _State) -> None:
        if st.epoch != self._st.epoch:
            self._order = self._make_order(st.epoch)
        self._st = _State(**vars(st))

    def _make_order(self, epoch: int) -> np.ndarray:
        if not self.shuffle:
            return np.arange(self.n, dtype=np.int64)
        return np.random.default_rng([self.seed, epoch]).permutation(self.n).astype(np.int64)

    def _next_pass(self) -> None:
        self._st.epoch += 1
        self._st.pos = 0
        self._order = self._make_order(self._st.epoch)

    # -- iteration ------------------------------------------------------------------------
    def reset(self) -> None:
        """Back to the beginning (``BeforeFirst``): keeps the examples a round batch
        borrowed from the next pass consumed, as MXNet does."""
        if self.last_batch == "round" and self._st.overflow:
            self._st.overflow = 0
        elif self._st.pos != 0:  # nothing consumed yet: already at the beginning
            self._next_pass()
        self._st.done = False

    def next_plan(self) -> Plan | None:
        """The next batch's plan, or None at the end of the epoch."""
        st = self._st
        if st.done or st.overflow:
            return None
        bs = self.batch_size
        take = min(bs, self.n - st.pos)
        if take <= 0:
            st.done = True
            return None
        parts = [self._order[st.pos:st.pos + take]]
        st.pos += take
        pad = 0
        if take < bs:
            if self.last_batch == "discard":
                st.done = True
                return None
            pad = bs - take
            if self.last_batch == "round":
                need = pad
                while need:
                    self._next_pass()
                    k = min(need, self.n)
                    parts.append(self._order[:k])
                    self._st.pos = k
                    need -= k
                st = self._st
                st.overflow = pad
            else:  # 'pad': repeat this batch's own examples
                own = parts[0]
                parts.append(np.resize(own, pad))
                st.done = True
        positions = np.concatenate(parts) if len(parts) > 1 else parts[0]
        plan = Plan(positions, pad, st.serial, st.epoch)
        st.serial += 1
        return plan
