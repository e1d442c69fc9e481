"""``rec2idx``: the index file (``key\\toffset`` lines) of a RecordIO ``.rec`` file.

MXNet 1.9.1's ``tools/rec2idx.py``, with the same arguments and output::

    python -m plexnet.tools.rec2idx data/train.rec data/train.idx     # or: plexnet rec2idx ...

Keys are the record numbers 0, 1, 2, ... (``key_type`` converts them), so the index opens
the file with ``MXIndexedRecordIO`` / ``ImageRecordIter(path_imgidx=...)``. MXNet's script
asks its C library for the read position (``_LIB.MXRecordIOReaderTell``); plexnet's
``MXRecordIO.tell()`` gives it in Python, so scripts that subclass ``MXRecordIO`` port by
calling ``self.tell()``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Callable, Sequence

from plexnet.recordio import MXRecordIO  # absolute: the file also runs as a script

__all__ = ["IndexCreator", "parse_args", "main"]


class IndexCreator(MXRecordIO):
    """Reads a ``.rec`` file and writes its index file ``idx_path`` (overwritten).

    >>> creator = IndexCreator('data/test.rec', 'data/test.idx')
    >>> creator.create_index()
    >>> creator.close()
    """

    def __init__(self, uri: str | os.PathLike, idx_path: str | os.PathLike,
                 key_type: Callable[[int], Any] = int) -> None:
        self.key_type = key_type
        self.fidx: Any = None
        self.idx_path = idx_path
        super().__init__(uri, "r")

    def open(self) -> None:
        super().open()
        self.fidx = open(self.idx_path, "w")

    def close(self) -> None:
        """Closes the record and index files."""
        if not getattr(self, "is_open", False):
            return
        super().close()
        if self.fidx is not None:
            self.fidx.close()

    def create_index(self) -> int:
        """Write one ``key\\toffset`` line per record from the start of the file; returns
        the number of records."""
        self.reset()
        counter = 0
        pre_time = time.time()
        while True:
            if counter % 1000 == 0:
                cur_time = time.time()
                print("time:", cur_time - pre_time, " count:", counter)
            pos = self.tell()
            if self.read() is None:
                break
            self.fidx.write("%s\t%d\n" % (str(self.key_type(counter)), pos))
            counter += 1
        self.fidx.flush()
        return counter


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """``record`` and ``index`` paths, made absolute."""
    parser = argparse.ArgumentParser(prog="rec2idx", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                                     description="Create an index file from .rec file")
    parser.add_argument("record", help="path to .rec file.")
    parser.add_argument("index", help="path to index file.")
    args = parser.parse_args(argv)
    args.record = os.path.abspath(args.record)
    args.index = os.path.abspath(args.index)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``rec2idx`` with ``argv`` (default ``sys.argv[1:]``)."""
    args = parse_args(argv)
    creator = IndexCreator(args.record, args.index)
    try:
        creator.create_index()
    finally:
        creator.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
