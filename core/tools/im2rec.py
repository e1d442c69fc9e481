"""``im2rec``: image lists (``.lst``) and RecordIO image databases (``.rec`` + ``.idx``).

The command of MXNet 1.9.1's ``tools/im2rec.py`` (``mxnet.tools.im2rec`` in its wheel), with
the same arguments and the same output files::

    python -m plexnet.tools.im2rec --list --recursive --train-ratio 0.9 PREFIX ROOT
    python -m plexnet.tools.im2rec --resize 256 --quality 90 --num-thread 4 PREFIX ROOT

(``plexnet im2rec ...`` is the same command.) With ``--list`` it walks ROOT and writes
``PREFIX[_<chunk>][_train|_val|_test].lst`` (``index\\tlabel...\\trelative path`` lines,
labels as ``%f``; shuffled with ``random.seed(100)`` as MXNet does, so the lists are the
same). Without it, every ``PREFIX*.lst`` file is packed into ``.rec``/``.idx`` files beside
it: images are read with OpenCV, optionally centre-cropped and resized (shorter edge), and
encoded with ``recordio.pack_img``; the record key is the list's index. With MXNet's
OpenCV version the ``.rec`` files are byte-identical to MXNet's.

Differences from MXNet's script, on purpose: ``--num-thread N`` uses N worker processes
started with ``spawn`` (safe after threads were started) and keeps the list's order (as
MXNet's writer process does); an image that cannot be read is reported and skipped in
every mode (MXNet's single-process path fails on it); the ``.rec``/``.idx`` files are
closed before the command returns.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

from plexnet import recordio  # absolute: the file also runs as a script (test_utils.get_im2rec_path)
from plexnet.io.decode import cv2

__all__ = ["list_image", "write_list", "make_list", "read_list", "EncodeOptions", "image_encode",
           "pack_list", "parse_args", "main"]

#: one ``.lst`` line: ``[index, relative path, label, ...]`` (the order MXNet's script uses)
Item = list


def list_image(root: str, recursive: bool, exts: Sequence[str]) -> Iterator[tuple]:
    """``(index, path relative to root, label)`` for every image under ``root``.

    ``recursive``: each folder that holds an image gets the next label, folders and files
    walked in sorted order (the folder-to-label table is printed at the end, as MXNet
    does); otherwise only ``root``'s own files, all with label 0. ``exts`` are lower-case
    suffixes with the dot.
    """
    i = 0
    if recursive:
        cat: dict[str, int] = {}
        for path, dirs, files in os.walk(root, followlinks=True):
            dirs.sort()
            files.sort()
            for fname in files:
                fpath = os.path.join(path, fname)
                if os.path.isfile(fpath) and os.path.splitext(fname)[1].lower() in exts:
                    label = cat.setdefault(path, len(cat))
                    yield (i, os.path.relpath(fpath, root), label)
                    i += 1
        for k, v in sorted(cat.items(), key=lambda kv: kv[1]):
            print(os.path.relpath(k, root), v)
    else:
        for fname in sorted(os.listdir(root)):
            fpath = os.path.join(root, fname)
            if os.path.isfile(fpath) and os.path.splitext(fname)[1].lower() in exts:
                yield (i, os.path.relpath(fpath, root), 0)
                i += 1


def write_list(path_out: str, image_list: Sequence[Sequence]) -> None:
    """Write ``.lst`` lines ``index\\tlabel\\t...\\tpath`` (labels with ``%f``)."""
    with open(path_out, "w") as fout:
        for item in image_list:
            labels = "".join("%f\t" % j for j in item[2:])
            fout.write("%d\t%s%s\n" % (item[0], labels, item[1]))


def make_list(args: argparse.Namespace) -> list[str]:
    """Write the ``.lst`` files for ``args`` (``--list`` mode); returns their paths.

    The split is MXNet's: per chunk, the first ``test_ratio`` part is ``_test``, the next
    ``train_ratio`` part ``_train`` and the rest ``_val``; ``train_ratio == 1`` writes one
    ``PREFIX[_chunk].lst``.
    """
    image_list = list(list_image(args.root, args.recursive, args.exts))
    if args.shuffle:
        random.seed(100)  # MXNet's seed: the same folder gives the same lists
        random.shuffle(image_list)
    chunk_size = (len(image_list) + args.chunks - 1) // args.chunks
    written = []

    def out(path: str, items: Sequence) -> None:
        write_list(path, items)
        written.append(path)

    for i in range(args.chunks):
        chunk = image_list[i * chunk_size:(i + 1) * chunk_size]
        base = args.prefix + ("_%d" % i if args.chunks > 1 else "")
        sep = int(chunk_size * args.train_ratio)
        sep_test = int(chunk_size * args.test_ratio)
        if args.train_ratio == 1.0:
            out(base + ".lst", chunk)
            continue
        if args.test_ratio:
            out(base + "_test.lst", chunk[:sep_test])
        if args.train_ratio + args.test_ratio < 1.0:
            out(base + "_val.lst", chunk[sep_test + sep:])
        out(base + "_train.lst", chunk[sep_test:sep_test + sep])
    return written


def read_list(path_in: str) -> Iterator[Item]:
    """Items ``[index, path, label, ...]`` of a ``.lst`` file; malformed lines are reported
    and skipped (as MXNet does)."""
    with open(path_in) as fin:
        for raw in fin:
            line = [p.strip() for p in raw.strip().split("\t")]
            if len(line) < 3:
                print("lst should have at least has three parts, but only has %s parts for %s" % (len(line), line))
                continue
            try:
                item = [int(line[0])] + [line[-1]] + [float(p) for p in line[1:-1]]
            except ValueError as e:
                print("Parsing lst met error for %s, detail: %s" % (line, e))
                continue
            yield item


@dataclass(frozen=True)
class EncodeOptions:
    """How each image is turned into a record (the ``Options for creating database``)."""

    root: str
    pass_through: bool = False
    resize: int = 0
    center_crop: bool = False
    quality: int = 95
    color: int = 1
    encoding: str = ".jpg"
    pack_label: bool = False


def image_encode(opts: EncodeOptions, item: Item) -> bytes | None:
    """The packed record of one list item, or ``None`` (reported) when the image cannot be
    read or encoded."""
    fullpath = os.path.join(opts.root, item[1])
    label = item[2:] if len(item) > 3 and opts.pack_label else item[2]
    header = recordio.IRHeader(0, label, item[0], 0)
    if opts.pass_through:
        try:
            with open(fullpath, "rb") as fin:
                return recordio.pack(header, fin.read())
        except OSError as e:
            print("pack_img error:", item[1], e)
            return None
    cv = cv2()
    img = cv.imread(fullpath, opts.color)
    if img is None:
        print("imread read blank (None) image for file: %s" % fullpath)
        return None
    h, w = img.shape[:2]
    if opts.center_crop:
        if h > w:
            margin = (h - w) // 2
            img = img[margin:margin + w, :]
        else:
            margin = (w - h) // 2
            img = img[:, margin:margin + h]
        h, w = img.shape[:2]
    if opts.resize:
        newsize = (opts.resize, h * opts.resize // w) if h > w else (w * opts.resize // h, opts.resize)
        img = cv.resize(img, newsize)  # (width, height), bilinear: MXNet's call
    try:
        return recordio.pack_img(header, img, quality=opts.quality, img_fmt=opts.encoding)
    except Exception as e:  # noqa: BLE001 - one bad image is reported, the rest are packed
        traceback.print_exc()
        print("pack_img error on file: %s" % fullpath, e)
        return None


def _encode_indexed(job: tuple[EncodeOptions, Item]) -> bytes | None:
    return image_encode(*job)


def pack_list(opts: EncodeOptions, lst_path: str, working_dir: str, num_thread: int = 1) -> int:
    """Pack the images of ``lst_path`` into ``<name>.rec`` / ``<name>.idx`` in
    ``working_dir``, in list order; returns the number of records written."""
    stem = os.path.splitext(os.path.basename(lst_path))[0]
    record = recordio.MXIndexedRecordIO(os.path.join(working_dir, stem + ".idx"),
                                        os.path.join(working_dir, stem + ".rec"), "w")
    items = list(read_list(lst_path))
    pool = None
    records: Iterable[bytes | None]
    if num_thread > 1:
        pool = multiprocessing.get_context("spawn").Pool(num_thread)
        records = pool.imap(_encode_indexed, ((opts, item) for item in items), chunksize=16)
    else:
        records = (image_encode(opts, item) for item in items)
    count, pre_time = 0, time.time()
    try:
        for item, s in zip(items, records):  # the key is the list's own index
            if count % 1000 == 0:
                cur_time = time.time()
                print("time:", cur_time - pre_time, " count:", count)
                pre_time = cur_time
            count += 1
            if s is not None:
                record.write_idx(item[0], s)
    finally:
        record.close()
        if pool is not None:
            pool.close()
            pool.join()
    return count


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """MXNet 1.9.1's ``im2rec.py`` arguments; ``prefix`` and ``root`` made absolute."""
    parser = argparse.ArgumentParser(
        prog="im2rec", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description="Create an image list or make a record database by reading from an image list")
    parser.add_argument("prefix", help="prefix of input/output lst and rec files.")
    parser.add_argument("root", help="path to folder containing images.")
    cgroup = parser.add_argument_group("Options for creating image lists")
    cgroup.add_argument("--list", action="store_true",
                        help="create image list(s) by traversing root and write <prefix>.lst; otherwise "
                             "read <prefix>*.lst and create databases <prefix>*.rec")
    cgroup.add_argument("--exts", nargs="+", default=[".jpeg", ".jpg", ".png"],
                        help="list of acceptable image extensions.")
    cgroup.add_argument("--chunks", type=int, default=1, help="number of chunks.")
    cgroup.add_argument("--train-ratio", type=float, default=1.0, help="Ratio of images to use for training.")
    cgroup.add_argument("--test-ratio", type=float, default=0, help="Ratio of images to use for testing.")
    cgroup.add_argument("--recursive", action="store_true",
                        help="walk subfolders and give each folder its own label; otherwise only the "
                             "images of root, with label 0")
    cgroup.add_argument("--no-shuffle", dest="shuffle", action="store_false",
                        help="keep the image order in the list (shuffled by default)")
    rgroup = parser.add_argument_group("Options for creating database")
    rgroup.add_argument("--pass-through", action="store_true",
                        help="whether to skip transformation and save image as is")
    rgroup.add_argument("--resize", type=int, default=0,
                        help="resize the shorter edge of image to the newsize (0: keep the size)")
    rgroup.add_argument("--center-crop", action="store_true",
                        help="specify whether to crop the center image to make it rectangular.")
    rgroup.add_argument("--quality", type=int, default=95,
                        help="JPEG quality for encoding, 1-100; or PNG compression for encoding, 1-9")
    rgroup.add_argument("--num-thread", type=int, default=1,
                        help="number of worker processes for encoding (the list order is kept)")
    rgroup.add_argument("--color", type=int, default=1, choices=[-1, 0, 1],
                        help="1: colour (alpha dropped), 0: grayscale, -1: as stored (alpha kept)")
    rgroup.add_argument("--encoding", type=str, default=".jpg", choices=[".jpg", ".png"],
                        help="specify the encoding of the images.")
    rgroup.add_argument("--pack-label", action="store_true",
                        help="Whether to also pack multi dimensional label in the record file")
    args = parser.parse_args(argv)
    args.prefix = os.path.abspath(args.prefix)
    args.root = os.path.abspath(args.root)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``im2rec`` with ``argv`` (default ``sys.argv[1:]``); exit status 0, or 1 when no
    list file matched the prefix."""
    args = parse_args(argv)
    if args.list:
        make_list(args)
        return 0
    working_dir = args.prefix if os.path.isdir(args.prefix) else os.path.dirname(args.prefix)
    opts = EncodeOptions(args.root, args.pass_through, args.resize, args.center_crop, args.quality,
                         args.color, args.encoding, args.pack_label)
    count = 0
    for fname in sorted(os.listdir(working_dir)):
        path = os.path.join(working_dir, fname)
        if os.path.isfile(path) and path.startswith(args.prefix) and path.endswith(".lst"):
            print("Creating .rec file from", path, "in", working_dir)
            count += 1
            pack_list(opts, path, working_dir, args.num_thread)
    if not count:
        print("Did not find and list file with prefix %s" % args.prefix)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
