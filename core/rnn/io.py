"""Text data for RNNs (``mx.rnn``): ``encode_sentences`` (words to integer ids) and
``BucketSentenceIter`` (batches of sentences padded to the nearest bucket length, with
each batch's ``bucket_key``, for ``BucketingModule``)."""
from __future__ import annotations

import bisect
import random
from typing import Any, Sequence

import numpy as np

from .. import ndarray
from ..io import DataBatch, DataDesc, DataIter

__all__ = ["encode_sentences", "BucketSentenceIter"]


def encode_sentences(sentences: Sequence[Sequence[str]], vocab: dict | None = None, invalid_label: int = -1,
                     invalid_key: str = "\n", start_label: int = 0,
                     unknown_token: str | None = None) -> tuple[list[list[int]], dict]:
    """``(coded sentences, vocab)``: each word's id (new words get the next id, skipping
    ``invalid_label``); with a given ``vocab`` unknown words map to ``unknown_token``
    (or raise when there is none)."""
    idx = start_label
    if vocab is None:
        vocab = {invalid_key: invalid_label}
        new_vocab = True
    else:
        new_vocab = False
    res = []
    for sent in sentences:
        coded = []
        for word in sent:
            if word not in vocab:
                if not (new_vocab or unknown_token):
                    raise KeyError(f"Unknown token {word}")
                if idx == invalid_label:
                    idx += 1
                if unknown_token:
                    word = unknown_token
                vocab[word] = idx
                idx += 1
            coded.append(vocab[word])
        res.append(coded)
    return res, vocab


class BucketSentenceIter(DataIter):
    """Batches of (padded) sentences; the label is the sentence shifted by one (the
    next word), ``invalid_label`` at the end and in the padding. ``buckets`` default to
    every length with at least ``batch_size`` sentences; longer sentences are dropped.
    ``layout``: ``'NT'`` (batch major) or ``'TN'``."""

    def __init__(self, sentences: Sequence[Sequence[int]], batch_size: int, buckets: list[int] | None = None,
                 invalid_label: int = -1, data_name: str = "data", label_name: str = "softmax_label",
                 dtype: str = "float32", layout: str = "NT") -> None:
        super().__init__(batch_size)
        if not buckets:
            buckets = [i for i, j in enumerate(np.bincount([len(s) for s in sentences])) if j >= batch_size]
        buckets = sorted(buckets)
        if not buckets:
            raise ValueError(f"BucketSentenceIter: no bucket holds batch_size={batch_size} sentences")
        ndiscard = 0
        data: list[list[np.ndarray]] = [[] for _ in buckets]
        valid = [0] * len(buckets)
        for sent in sentences:
            buck = bisect.bisect_left(buckets, len(sent))
            if buck == len(buckets):
                ndiscard += 1
                continue
            valid[buck] = 1
            buff = np.full((buckets[buck],), invalid_label, dtype=dtype)
            buff[:len(sent)] = sent
            data[buck].append(buff)
        buckets = [b for i, b in enumerate(buckets) if valid[i]]
        self.data = [np.asarray(d, dtype=dtype) for d in data if d]
        # MXNet 1.9.1 prints this to stdout on every construction, 0 included
        print("WARNING: discarded %d sentences longer than the largest bucket." % ndiscard)
        self.batch_size = batch_size
        self.buckets = buckets
        self.data_name = data_name
        self.label_name = label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.nddata: list[Any] = []
        self.ndlabel: list[Any] = []
        self.major_axis = layout.find("N")
        self.layout = layout
        self.default_bucket_key = max(buckets)
        if self.major_axis == 0:
            shape = (batch_size, self.default_bucket_key)
        elif self.major_axis == 1:
            shape = (self.default_bucket_key, batch_size)
        else:
            raise ValueError(f"Invalid layout {layout}: Must by NT (batch major) or TN (time major)")
        self.provide_data = [DataDesc(name=data_name, shape=shape, layout=layout)]
        self.provide_label = [DataDesc(name=label_name, shape=shape, layout=layout)]
        self.idx: list[tuple[int, int]] = []
        for i, buck in enumerate(self.data):
            self.idx.extend([(i, j) for j in range(0, len(buck) - batch_size + 1, batch_size)])
        self.curr_idx = 0
        self.reset()

    def reset(self) -> None:
        """Shuffle the batches and the sentences within each bucket (Python's and numpy's
        global generators, as MXNet)."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for buck in self.data:
            np.random.shuffle(buck)
        self.nddata, self.ndlabel = [], []
        for buck in self.data:
            label = np.empty_like(buck)
            label[:, :-1] = buck[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(ndarray.array(buck, dtype=self.dtype))
            self.ndlabel.append(ndarray.array(label, dtype=self.dtype))

    def next(self) -> DataBatch:
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j:j + self.batch_size]
        label = self.ndlabel[i][j:j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[i],
                         provide_data=[DataDesc(name=self.data_name, shape=data.shape, layout=self.layout)],
                         provide_label=[DataDesc(name=self.label_name, shape=label.shape, layout=self.layout)])
