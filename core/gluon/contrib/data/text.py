"""``gluon.contrib.data.text``: the WikiText-2 / WikiText-103 language-model datasets
(MXNet 1.9.1).

plexnet cannot download, so, like ``gluon.data.vision``'s datasets, these read the files
MXNet would have downloaded from ``root``: ``wiki.train.tokens`` / ``wiki.valid.tokens`` /
``wiki.test.tokens``, or the archive (``wikitext-2-v1.zip`` / ``wikitext-103-v1.zip``) in
``root``, whose members are extracted flat into ``root`` as MXNet does. The files are not
checked against MXNet's SHA-1 hashes (MXNet would re-download on a mismatch; here the
local file is what there is). Samples are MXNet's: ``(data, label)`` int32 NDArrays of
``seq_len`` token indices, the label shifted by one token.
"""
from __future__ import annotations

import os
import shutil
import zipfile
from collections import Counter
from typing import Any

import numpy as np

from .... import ndarray as nd
from ....base import PlexnetError
from ....contrib import text
from ...data import dataset
from ...model_zoo.model_store import data_dir

__all__ = ["WikiText2", "WikiText103"]

EOS_TOKEN = "<eos>"


class _WikiText(dataset.Dataset):
    """Token file of one segment -> ``(n, seq_len)`` data and label arrays."""

    _archive = ""
    _files = {"train": "wiki.train.tokens", "validation": "wiki.valid.tokens", "test": "wiki.test.tokens"}

    def __init__(self, root: str, segment: str, vocab: Any, seq_len: int) -> None:
        if segment not in self._files:
            raise ValueError(f"{type(self).__name__}: segment must be one of {sorted(self._files)}, got {segment!r}")
        self._root = os.path.expanduser(root)
        os.makedirs(self._root, exist_ok=True)
        self._segment = segment
        self._seq_len = seq_len
        self._vocab = vocab
        self._counter: Counter | None = None
        self._get_data()

    @property
    def vocabulary(self) -> Any:
        """The ``contrib.text.vocab.Vocabulary`` indexing the tokens (built from this
        segment's counts when none was given)."""
        return self._vocab

    @property
    def frequencies(self) -> Counter | None:
        """Token counts of this segment."""
        return self._counter

    def _path(self) -> str:
        name = self._files[self._segment]
        path = os.path.join(self._root, name)
        archive = os.path.join(self._root, self._archive)
        if not os.path.exists(path) and os.path.exists(archive):
            with zipfile.ZipFile(archive, "r") as zf:
                for member in zf.namelist():
                    base = os.path.basename(member)
                    if base:
                        with zf.open(member) as src, open(os.path.join(self._root, base), "wb") as dst:
                            shutil.copyfileobj(src, dst)
        if not os.path.exists(path):
            raise PlexnetError(f"{type(self).__name__}: {name} not found in {self._root!r} (nor {self._archive}). "
                               f"plexnet cannot download it; copy it there (e.g. from MXNet's "
                               f"~/.mxnet/datasets) or pass root=<directory holding it>.")
        return path

    def _get_data(self) -> None:
        with open(self._path(), "r", encoding="utf8") as fin:
            content = fin.read()
        self._counter = text.utils.count_tokens_from_str(content)
        if not self._vocab:
            self._vocab = text.vocab.Vocabulary(counter=self._counter, reserved_tokens=[EOS_TOKEN])
        lines = [line + [EOS_TOKEN] for line in (x.strip().split() for x in content.splitlines()) if line]
        ids = np.array(self._vocab.to_indices([tok for line in lines for tok in line]), dtype=np.int32)
        data, label = ids[:-1], ids[1:]
        # MXNet 1.9.1 drops the tail that does not fill a whole sequence
        keep = len(data) // self._seq_len * self._seq_len
        self._data = nd.array(data[:keep], dtype=np.int32).reshape((-1, self._seq_len))
        self._label = nd.array(label[:keep], dtype=np.int32).reshape((-1, self._seq_len))

    def __getitem__(self, idx: int) -> Any:
        return self._data[idx], self._label[idx]

    def __len__(self) -> int:
        return len(self._label)


class WikiText2(_WikiText):
    """WikiText-2 word-level language-model dataset (Salesforce research; CC BY-SA).

    Parameters
    ----------
    root : str, default ``$MXNET_HOME/datasets/wikitext-2``
        Folder holding ``wiki.{train,valid,test}.tokens`` or ``wikitext-2-v1.zip``.
    segment : str, default 'train'
        'train', 'validation' or 'test'.
    vocab : contrib.text.vocab.Vocabulary or None
        Indexes the tokens; None builds one from this segment (``<unk>`` 0, ``<eos>`` 1,
        then by frequency).
    seq_len : int, default 35
        Length of every sample, regardless of sentence boundaries.
    """

    _archive = "wikitext-2-v1.zip"

    def __init__(self, root: str = os.path.join(data_dir(), "datasets", "wikitext-2"), segment: str = "train",
                 vocab: Any = None, seq_len: int = 35) -> None:
        super().__init__(root, segment, vocab, seq_len)


class WikiText103(_WikiText):
    """WikiText-103 word-level language-model dataset; as :class:`WikiText2` with
    ``root`` default ``$MXNET_HOME/datasets/wikitext-103`` and archive ``wikitext-103-v1.zip``."""

    _archive = "wikitext-103-v1.zip"

    def __init__(self, root: str = os.path.join(data_dir(), "datasets", "wikitext-103"), segment: str = "train",
                 vocab: Any = None, seq_len: int = 35) -> None:
        super().__init__(root, segment, vocab, seq_len)
