"""Read and write MXNet's RecordIO format (``mx.recordio``), in pure Python.

The binary format is dmlc-core's ``RecordIOWriter``/``RecordIOReader``, byte for byte,
so ``.rec``/``.idx`` files move freely between Apache MXNet 1.x and plexnet:

* every record starts with two little-endian ``uint32``: the magic ``0xced7230a`` and
  ``lrecord = cflag << 29 | length``; ``length`` bytes of payload follow, then zero
  bytes up to the next multiple of 4;
* a payload may itself contain the magic number at a 4-byte aligned offset. The writer
  then cuts the payload there and drops those 4 bytes: the parts are written as
  consecutive records with ``cflag`` 1 (first), 2 (middle) and 3 (last), and the reader
  glues them back together with the magic in between. ``cflag`` 0 is a whole record.
  A payload is limited to ``2**29 - 1`` bytes (29 bits of length), as in dmlc;
* an index file (``.idx``) is text, one ``key<TAB>byte-offset`` line per record.

On top of that, an image record is ``IRHeader`` (``struct 'IfQQ'``: flag, label, id,
id2; 24 bytes) + ``flag`` float32 labels when ``flag > 0`` + the encoded image.
``pack_img``/``unpack_img`` use Pillow instead of OpenCV; like OpenCV they take and
return colour images in **BGR** order (pass ``channel_order='RGB'`` to skip the swap).
"""
from __future__ import annotations

import io
import numbers
import os
import struct
from collections import namedtuple
from multiprocessing import current_process
from typing import Any

import numpy as np

from .base import MXNetError, file_open_error, open_for_read
from .fileio import AtomicFile

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img",
           "unpack_img", "RecordIOError", "RecordFileReader", "scan_offsets", "encode_record",
           "decode_image", "encode_image", "parse_idx_line", "MAGIC"]

#: dmlc::RecordIOWriter::kMagic
MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", MAGIC)
_HEAD = struct.Struct("<II")
_LEN_BITS = 29
_LEN_MASK = (1 << _LEN_BITS) - 1
#: largest payload of one record (29 bits of length)
MAX_RECORD_BYTES = _LEN_MASK


class RecordIOError(MXNetError, ValueError):
    """A ``.rec`` file is malformed, or a record cannot be written."""


def _lrec(cflag: int, length: int) -> int:
    return (cflag << _LEN_BITS) | length


def encode_record(buf: bytes | bytearray | memoryview) -> bytes:
    """The bytes dmlc's ``RecordIOWriter::WriteRecord`` writes for one payload."""
    mv = memoryview(buf).cast("B")
    n = mv.nbytes
    if n > MAX_RECORD_BYTES:
        raise RecordIOError(f"RecordIO records are limited to {MAX_RECORD_BYTES} bytes "
                            f"(29-bit length field, as in dmlc/MXNet); got {n}")
    lower = n & ~3
    hits: Any = ()
    if lower and mv[:lower].tobytes().find(_MAGIC_BYTES) >= 0:
        words = np.frombuffer(mv[:lower], dtype="<u4")
        hits = (np.flatnonzero(words == MAGIC) * 4).tolist()
    out = []
    dptr = 0
    for i in hits:  # escape aligned magic numbers: split the record there
        out.append(_MAGIC_BYTES)
        out.append(struct.pack("<I", _lrec(1 if dptr == 0 else 2, i - dptr)))
        out.append(mv[dptr:i].tobytes())
        dptr = i + 4
    out.append(_MAGIC_BYTES)
    out.append(struct.pack("<I", _lrec(3 if dptr else 0, n - dptr)))
    out.append(mv[dptr:].tobytes())
    pad = (-n) & 3
    if pad:
        out.append(b"\0" * pad)
    return b"".join(out)


def _read_record(f: Any, where: str) -> bytes | None:
    """Read one (possibly multi-part) record from binary file ``f``; None at EOF."""
    parts: list[bytes] = []
    while True:
        pos = f.tell() if not parts else None
        head = f.read(8)
        if not head:
            if parts:
                raise RecordIOError(f"{where}: file ends inside a multi-part record")
            return None
        if len(head) != 8:
            raise RecordIOError(f"{where}: truncated record header at the end of the file")
        magic, lrec = _HEAD.unpack(head)
        if magic != MAGIC:
            at = f" at byte {pos}" if pos is not None else ""
            raise RecordIOError(f"{where}: invalid RecordIO file: bad magic 0x{magic:08x}{at} "
                                f"(expected 0x{MAGIC:08x}); wrong file or wrong offset")
        cflag, length = lrec >> _LEN_BITS, lrec & _LEN_MASK
        if parts and cflag in (0, 1):
            raise RecordIOError(f"{where}: a new record starts inside a multi-part record")
        if not parts and cflag in (2, 3):
            raise RecordIOError(f"{where}: offset {pos} points inside a multi-part record")
        upper = (length + 3) & ~3
        data = f.read(upper)
        if len(data) != upper:
            raise RecordIOError(f"{where}: truncated record: {len(data)} of {upper} bytes")
        parts.append(data[:length] if upper != length else data)
        if cflag in (0, 3):
            break
    return parts[0] if len(parts) == 1 else _MAGIC_BYTES.join(parts)


def scan_offsets(uri: str) -> list[int]:
    """Byte offsets of every (logical) record in ``uri``, by walking the headers only."""
    offsets = []
    with open_for_read(uri, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        pos = 0
        in_multi = False
        while pos < size:
            f.seek(pos)
            head = f.read(8)
            if len(head) != 8:
                raise RecordIOError(f"{uri}: truncated record header at byte {pos}")
            magic, lrec = _HEAD.unpack(head)
            if magic != MAGIC:
                raise RecordIOError(f"{uri}: invalid RecordIO file: bad magic 0x{magic:08x} at "
                                    f"byte {pos}")
            cflag, length = lrec >> _LEN_BITS, lrec & _LEN_MASK
            if not in_multi:
                offsets.append(pos)
            in_multi = cflag in (1, 2)
            pos += 8 + ((length + 3) & ~3)
        if in_multi:
            raise RecordIOError(f"{uri}: file ends inside a multi-part record")
    return offsets


def parse_idx_line(line: str, where: str, key_type: type = int) -> tuple[Any, int]:
    """``(key, offset)`` from one ``key<TAB>offset`` line of a ``.idx`` file; a missing
    field, a key ``key_type`` refuses, or an offset that is not a non-negative integer
    raise ``RecordIOError`` naming ``where`` (file:line)."""
    fields = line.split("\t")
    if len(fields) < 2:
        raise RecordIOError(f"{where}: expected 'key<TAB>offset', got {line[:80]!r}")
    try:
        key = key_type(fields[0])
    except (TypeError, ValueError):
        raise RecordIOError(f"{where}: key {fields[0][:40]!r} is not a valid {key_type.__name__}") from None
    try:
        off = int(fields[1])
    except ValueError:
        raise RecordIOError(f"{where}: offset {fields[1][:40]!r} is not an integer") from None
    if off < 0:
        raise RecordIOError(f"{where}: negative offset {off}: corrupted index")
    return key, off


class RecordFileReader:
    """Thread-safe random access to the records of a ``.rec`` file by byte offset.

    Uses ``os.pread`` (no shared file position) where available, else a lock around
    seek + read. Many threads may call ``read_at`` at once.
    """

    def __init__(self, uri: str | os.PathLike) -> None:
        import threading
        self.uri = os.fspath(uri)
        try:
            self._fd: int | None = os.open(self.uri, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except FileNotFoundError as e:
            raise file_open_error(self.uri, e) from e
        self.size = os.fstat(self._fd).st_size
        self._lock = threading.Lock()
        self._pread = getattr(os, "pread", None)

    def _read(self, n: int, off: int) -> bytes:
        fd = self._fd
        if fd is None:
            raise RecordIOError(f"{self.uri}: reader is closed")
        if self._pread is not None:
            out = self._pread(fd, n, off)
            while len(out) < n:  # pread may return less near a signal; retry the rest
                more = self._pread(fd, n - len(out), off + len(out))
                if not more:
                    break
                out += more
            return out
        with self._lock:
            os.lseek(fd, off, os.SEEK_SET)
            return os.read(fd, n)

    def read_at(self, offset: int) -> bytes:
        """The (logical) record starting at byte ``offset``."""
        parts: list[bytes] = []
        pos = int(offset)
        if pos < 0:
            raise RecordIOError(f"{self.uri}: negative record offset {pos} (corrupted index?)")
        while True:
            head = self._read(8, pos)
            if len(head) != 8:
                raise RecordIOError(f"{self.uri}: no record header at byte {pos} (file has "
                                    f"{self.size} bytes)")
            magic, lrec = _HEAD.unpack(head)
            if magic != MAGIC:
                raise RecordIOError(f"{self.uri}: invalid RecordIO file: bad magic 0x{magic:08x} at "
                                    f"byte {pos}; wrong file or wrong index offset")
            cflag, length = lrec >> _LEN_BITS, lrec & _LEN_MASK
            if parts and cflag in (0, 1) or not parts and cflag in (2, 3):
                raise RecordIOError(f"{self.uri}: offset {offset} is not the start of a record")
            data = self._read(length, pos + 8) if length else b""
            if len(data) != length:
                raise RecordIOError(f"{self.uri}: truncated record at byte {pos}")
            parts.append(data)
            pos += 8 + ((length + 3) & ~3)
            if cflag in (0, 3):
                break
        return parts[0] if len(parts) == 1 else _MAGIC_BYTES.join(parts)

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> "RecordFileReader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass


class MXRecordIO:
    """Reads/writes a RecordIO file sequentially (``mx.recordio.MXRecordIO``).

    Parameters
    ----------
    uri : str
        Path to the record file.
    flag : str
        ``'w'`` to write (truncates), ``'r'`` to read.

    ``read()`` returns the next record as ``bytes`` or ``None`` at the end. Also a
    context manager, and picklable (it reopens, at the start, in the new process).

    A writer writes to a temp file beside ``uri`` and renames it over ``uri`` on
    ``close()`` (see ``plexnet.fileio``): a killed job leaves the old file, never a half one.
    """

    def __init__(self, uri: str | os.PathLike, flag: str) -> None:
        self.uri = os.fspath(uri)
        self.flag = flag
        self.pid: int | None = None
        self.is_open = False
        self.writable = False
        self._f: Any = None
        self._af: AtomicFile | None = None
        self.open()

    def open(self) -> None:
        """Opens the record file."""
        if self.flag == "w":
            self._af = AtomicFile(self.uri)
            self._f = self._af.file
            self.writable = True
        elif self.flag == "r":
            self._f = open_for_read(self.uri, "rb")
            self.writable = False
        else:
            raise ValueError(f"Invalid flag {self.flag!r}: use 'r' or 'w'")
        self.pid = current_process().pid
        self.is_open = True

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - never raise from GC
            pass

    def __enter__(self) -> "MXRecordIO":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        is_open = self.is_open
        self.close()
        d = dict(self.__dict__)
        d["is_open"] = is_open
        d["_f"] = d["_af"] = None
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__ = d
        is_open = d["is_open"]
        self.is_open = False
        if is_open:
            self.open()

    def _check_pid(self, allow_reset: bool = False) -> None:
        """A handle must not be shared across processes (reopen in the child instead)."""
        if self.pid != current_process().pid:
            if allow_reset:
                self.reset()
            else:
                raise RuntimeError("Forbidden operation in multiple processes")

    def close(self) -> None:
        """Closes the record file."""
        if not self.is_open:
            return
        f, self._f = self._f, None
        af, self._af = self._af, None
        self.is_open = False
        self.pid = None
        if af is not None:
            af.commit()
        elif f is not None:
            f.close()

    def reset(self) -> None:
        """Back to the first record; for a writer this truncates the file."""
        self.close()
        self.open()

    def _require_open(self) -> None:
        if not self.is_open:
            raise RecordIOError(f"{self.uri}: record file is closed")

    def write(self, buf: bytes | bytearray | memoryview | str) -> None:
        """Append one record."""
        if not self.writable:
            raise RecordIOError(f"{self.uri}: opened for reading ('r'), cannot write")
        self._require_open()
        self._check_pid(allow_reset=False)
        if isinstance(buf, str):
            buf = buf.encode("utf-8")
        self._f.write(encode_record(buf))

    def read(self) -> bytes | None:
        """The next record, or ``None`` at the end of the file."""
        if self.writable:
            raise RecordIOError(f"{self.uri}: opened for writing ('w'), cannot read")
        self._require_open()
        self._check_pid(allow_reset=False)
        return _read_record(self._f, self.uri)

    def tell(self) -> int:
        """Current byte position (of the next record to read or write)."""
        self._require_open()
        return self._f.tell()

    def __iter__(self):
        while True:
            rec = self.read()
            if rec is None:
                return
            yield rec


class MXIndexedRecordIO(MXRecordIO):
    """RecordIO with random access through an index file (``mx.recordio.MXIndexedRecordIO``).

    Parameters
    ----------
    idx_path : str
        Path to the index file (``key<TAB>offset`` lines).
    uri : str
        Path to the record file.
    flag : str
        ``'w'`` or ``'r'``.
    key_type : type
        Type of the keys (``int`` by default).
    """

    def __init__(self, idx_path: str | os.PathLike, uri: str | os.PathLike, flag: str,
                 key_type: type = int) -> None:
        self.idx_path = os.fspath(idx_path)
        self.idx: dict[Any, int] = {}
        self.keys: list[Any] = []
        self.key_type = key_type
        self.fidx: Any = None
        super().__init__(uri, flag)

    def open(self) -> None:
        super().open()
        self.idx = {}
        self.keys = []
        self._afidx = AtomicFile(self.idx_path) if self.writable else None
        self.fidx = self._afidx.file if self._afidx is not None else open_for_read(self.idx_path, "r")
        if not self.writable:
            for lineno, line in enumerate(self.fidx, 1):
                line = line.strip()
                if not line:
                    continue
                key, off = parse_idx_line(line, f"{self.idx_path}:{lineno}", self.key_type)
                self.idx[key] = off
                self.keys.append(key)

    def close(self) -> None:
        if not self.is_open:
            return
        afidx, self._afidx = getattr(self, "_afidx", None), None
        try:
            super().close()  # the .rec first: an index never points past its record file
        except BaseException:
            if afidx is not None:
                afidx.abort()
            self.fidx = None
            raise
        if afidx is not None:
            afidx.commit()
        elif self.fidx is not None:
            self.fidx.close()
        self.fidx = None

    def __getstate__(self) -> dict[str, Any]:
        d = super().__getstate__()
        d["fidx"] = d["_afidx"] = None
        return d

    def seek(self, idx: Any) -> None:
        """Move the read position to the record with key ``idx``."""
        if self.writable:
            raise RecordIOError(f"{self.uri}: opened for writing ('w'), cannot seek")
        self._check_pid(allow_reset=True)
        try:
            pos = self.idx[idx]
        except KeyError:
            raise KeyError(f"{self.idx_path}: no record with key {idx!r}") from None
        self._f.seek(pos)

    def tell(self) -> int:
        """Current position of the write head."""
        return super().tell()

    def read_idx(self, idx: Any) -> bytes:
        """The record with key ``idx``."""
        self.seek(idx)
        rec = self.read()
        if rec is None:
            raise RecordIOError(f"{self.uri}: index entry {idx!r} points past the end of the file")
        return rec

    def write_idx(self, idx: Any, buf: bytes | bytearray | memoryview | str) -> None:
        """Append a record under key ``idx`` and note its offset in the index."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write(f"{key}\t{pos}\n".encode())
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])  # type: ignore[name-match]  # MXNet's name
IRHeader.__doc__ = """Header of an image record: ``flag`` (number of float labels that
follow the header, 0 for a scalar label), ``label`` (float, or an array of floats),
``id`` and ``id2`` (64-bit record ids)."""
_IR_FORMAT = "<IfQQ"
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header: Any, s: bytes) -> bytes:
    """Pack bytes ``s`` into an image record with header ``header`` (an ``IRHeader``).

    ``header.label`` may be a number (stored in the header, ``flag`` set to 0) or an
    array (``flag`` set to its length, the float32 values prefixed to ``s``).
    """
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + bytes(s)
    return struct.pack(_IR_FORMAT, int(header.flag), float(header.label), int(header.id),
                       int(header.id2)) + bytes(s)


def unpack(s: bytes) -> tuple[Any, bytes]:
    """Split an image record into ``(IRHeader, payload bytes)``."""
    if len(s) < _IR_SIZE:
        raise RecordIOError(f"image record too short for its {_IR_SIZE}-byte header: {len(s)} bytes")
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        if len(s) < header.flag * 4:
            raise RecordIOError(f"image record declares {header.flag} labels but holds "
                                f"{len(s)} bytes after the header")
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


def _pil() -> Any:
    try:
        from PIL import Image
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "plexnet.recordio image functions and ImageRecordIter need Pillow: "
            "pip install 'plexnet[image]' (or pip install Pillow)") from e
    return Image


def _swap_rb(img: np.ndarray) -> np.ndarray:
    if img.ndim == 3 and img.shape[2] in (3, 4):
        img = img.copy()
        img[..., [0, 2]] = img[..., [2, 0]]
    return img


def decode_image(buf: bytes, iscolor: int = -1, channel_order: str = "BGR") -> np.ndarray:
    """Decode an encoded image like ``cv2.imdecode(buf, iscolor)`` (with Pillow).

    ``iscolor``: ``1`` -> 3 channels, ``0`` -> grayscale ``HxW``, ``-1`` -> as stored
    (``HxW`` gray, ``HxWx3`` or ``HxWx4`` with alpha). Colour comes back in
    ``channel_order`` (``'BGR'`` like OpenCV, or ``'RGB'``).
    """
    Image = _pil()
    try:
        im = Image.open(io.BytesIO(buf))
        if iscolor == 0 and im.format == "JPEG":
            im.draft("L", im.size)  # libjpeg's own grayscale output, as OpenCV does
        im.load()
    except Exception as e:  # noqa: BLE001
        raise RecordIOError(f"cannot decode image ({len(buf)} bytes): {e}") from e
    if iscolor == 0:
        im = im.convert("L") if im.mode != "L" else im
    elif iscolor == 1 or iscolor > 0:
        im = im.convert("RGB") if im.mode != "RGB" else im
    else:
        if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
            im = im.convert("RGBA")
        elif im.mode not in ("L", "RGB"):
            im = im.convert("L" if im.mode in ("1", "I", "I;16", "F") else "RGB")
    arr = np.asarray(im, dtype=np.uint8)
    if channel_order.upper() == "BGR":
        arr = _swap_rb(arr)
    return arr


def encode_image(img: np.ndarray, quality: int = 95, img_fmt: str = ".jpg",
                 channel_order: str = "BGR") -> bytes:
    """Encode ``img`` (``HxW``, ``HxWx1``, ``HxWx3`` or ``HxWx4`` uint8) like ``cv2.imencode``."""
    Image = _pil()
    img = np.asarray(img)
    if img.dtype != np.uint8:
        raise TypeError(f"encode_image: expects a uint8 image, got {img.dtype}")
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[:, :, 0]
    if img.ndim == 3 and img.shape[2] not in (3, 4) or img.ndim not in (2, 3):
        raise ValueError(f"encode_image: expects HxW, HxWx3 or HxWx4, got shape {img.shape}")
    if channel_order.upper() == "BGR":
        img = _swap_rb(img)
    im = Image.fromarray(np.ascontiguousarray(img))
    fmt = img_fmt.upper().lstrip(".")
    out = io.BytesIO()
    if fmt in ("JPG", "JPEG"):
        if im.mode == "RGBA":
            raise ValueError("JPEG cannot store an alpha channel; use img_fmt='.png'")
        im.save(out, format="JPEG", quality=int(quality))
    elif fmt == "PNG":
        # OpenCV's IMWRITE_PNG_COMPRESSION is 0-9; MXNet passes `quality` through.
        im.save(out, format="PNG", compress_level=max(0, min(9, int(quality))))
    else:
        im.save(out, format=fmt)
    return out.getvalue()


def unpack_img(s: bytes, iscolor: int = -1, channel_order: str = "BGR") -> tuple[Any, np.ndarray]:
    """Unpack an image record into ``(IRHeader, image array)``.

    ``iscolor`` as in ``cv2.imdecode``; colour images come back in BGR order like in
    MXNet (OpenCV) unless ``channel_order='RGB'``.
    """
    header, s = unpack(s)
    return header, decode_image(s, iscolor, channel_order)


def pack_img(header: Any, img: np.ndarray, quality: int = 95, img_fmt: str = ".jpg",
             channel_order: str = "BGR") -> bytes:
    """Encode an image (BGR like OpenCV, unless ``channel_order='RGB'``) and pack it.

    ``quality``: JPEG quality 1-100, or PNG compression level 0-9.
    """
    return pack(header, encode_image(img, quality, img_fmt, channel_order))


def __getattr__(name: str) -> Any:
    # MXNet's recordio imports OpenCV at its top (``mx.recordio.cv2``, None without it);
    # plexnet decodes without it, so it is imported only when a script asks for it
    if name == "cv2":
        found: Any
        try:
            import cv2 as found
        except ImportError:
            found = None
        globals()["cv2"] = found
        return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
