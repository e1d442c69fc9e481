"""``nd.save`` / ``nd.load`` in Apache MXNet's NDArray list format (no pickle).

Files written here load in MXNet (``mx.nd.load``) and MXNet's ``.params`` files load
here. Layout (little endian)::

    u64 0x112 (list magic) | u64 reserved | u64 n | n x NDArray | u64 m | m x (u64 len, bytes) keys
    NDArray (V2): u32 0xF993FAC9 | i32 stype(0) | u32 ndim | ndim x i64 dims
                  | i32 dev_type | i32 dev_id | i32 type_flag | raw data
    sparse (V2):  u32 0xF993FAC9 | i32 stype (1 row_sparse, 2 csr) | storage shape | shape
                  | i32 dev_type | i32 dev_id | i32 type_flag | per aux: i32 type_flag, shape
                  | raw values | raw aux arrays (csr: indptr, indices; row_sparse: indices)
    (V3 magic 0xF993FACA is the same with numpy shape semantics; V1 0xF993FAC8 has no stype)

Every length is checked against the file size, so a truncated or corrupted file raises
``NDArrayFormatError`` saying where, instead of producing garbage.

Checksum: files written here end with a 24-byte trailer MXNet's reader never looks at
(it stops after the names)::

    8 bytes b"PXNDCRC1" | u64 length of everything before the trailer | u32 CRC-32 | u32 0

``load`` verifies it when present (MXNet's own files have none and load as before), so
a flipped bit anywhere in a plexnet file is an error, not silently wrong weights. A
name that occurs twice in one file is an error too.
"""
from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np

from ..base import PlexnetError, open_for_read
from ..fileio import atomic_write
from ..util import is_np_shape

__all__ = ["save", "load", "load_frombuffer", "NDArrayFormatError", "TYPE_FLAGS", "SparseParts"]

LIST_MAGIC = 0x112
V1, V2, V3 = 0xF993FAC8, 0xF993FAC9, 0xF993FACA
TYPE_FLAGS = {0: np.float32, 1: np.float64, 2: np.float16, 3: np.uint8, 4: np.int32, 5: np.int8,
              6: np.int64, 7: np.bool_, 8: np.int16, 9: np.uint16, 10: np.uint32, 11: np.uint64}
FLAG_OF = {np.dtype(v): k for k, v in TYPE_FLAGS.items()}
TRAILER_MAGIC = b"PXNDCRC1"
_TRAILER = struct.Struct("<8sQII")


class NDArrayFormatError(PlexnetError, ValueError):
    """The file is not an NDArray list, or it is truncated or corrupted."""


class _Reader:
    def __init__(self, buf: bytes, fname: str) -> None:
        self.buf, self.pos, self.fname = memoryview(buf), 0, fname

    def take(self, n: int, what: str) -> memoryview:
        if n < 0 or self.pos + n > len(self.buf):
            raise NDArrayFormatError(f"{self.fname}: truncated or corrupted file: need {n} bytes for {what} "
                                     f"at offset {self.pos}, file has {len(self.buf)}")
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def unpack(self, fmt: str, what: str) -> tuple:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt), what))


class SparseParts:
    """A sparse array as read from a file: storage type code (1 row_sparse, 2 csr), the
    dense shape, the values and the aux arrays in MXNet's order (csr: indptr, indices)."""

    def __init__(self, stype: int, shape: tuple, data: np.ndarray, aux: list[np.ndarray]) -> None:
        self.stype, self.shape, self.data, self.aux = stype, shape, data, aux


_NUM_AUX = {1: 1, 2: 2}  # MXNet's kRowSparseStorage, kCSRStorage


def _read_shape(r: _Reader, i: int, what: str) -> tuple:
    (ndim,) = r.unpack("I", f"array {i} {what} ndim")
    if ndim > 32:
        raise NDArrayFormatError(f"{r.fname}: array {i} claims {ndim} dimensions: corrupted file")
    shape = r.unpack(f"{ndim}q", f"array {i} {what}") if ndim else ()
    if any(d < 0 for d in shape):
        raise NDArrayFormatError(f"{r.fname}: array {i} has a negative dimension {shape}")
    return tuple(shape)


def _read_raw(r: _Reader, i: int, flag: int, shape: tuple, what: str) -> np.ndarray:
    if flag not in TYPE_FLAGS:
        raise NDArrayFormatError(f"{r.fname}: array {i} has unknown type flag {flag} ({what})")
    dt = np.dtype(TYPE_FLAGS[flag])
    n = dt.itemsize
    for d in shape:
        n *= d
    if n > len(r.buf) - r.pos:
        raise NDArrayFormatError(f"{r.fname}: array {i} {what} {shape} ({dt}) needs {n} bytes at offset {r.pos}, "
                                 f"file has {len(r.buf) - r.pos} left: corrupted file")
    return np.frombuffer(r.take(n, f"array {i} {what}"), dtype=dt).reshape(shape).copy()


def _read_sparse(r: _Reader, i: int, stype: int) -> SparseParts:
    """MXNet's sparse layout: storage shape, shape, context, type flag, per aux (type flag,
    shape), the values, then each aux array."""
    if stype not in _NUM_AUX:
        raise NDArrayFormatError(f"{r.fname}: array {i} has unknown storage type {stype}")
    sshape = _read_shape(r, i, "storage shape")
    shape = _read_shape(r, i, "shape")
    r.unpack("ii", f"array {i} context")
    (flag,) = r.unpack("i", f"array {i} dtype")
    aux_meta = []
    for k in range(_NUM_AUX[stype]):
        (aflag,) = r.unpack("i", f"array {i} aux {k} dtype")
        aux_meta.append((aflag, _read_shape(r, i, f"aux {k} shape")))
    data = _read_raw(r, i, flag, sshape, "values")
    aux = [_read_raw(r, i, f, s, f"aux {k}") for k, (f, s) in enumerate(aux_meta)]
    return SparseParts(stype, shape, data, aux)


def _check_semantics(magic: int, fname: str) -> None:
    # MXNet's NDArray::Load: V3 (saved under np_shape) loads only under np_shape, the others only outside
    if magic == V3 and not is_np_shape():
        raise NDArrayFormatError(f"{fname}: ndarray was saved in np shape semantics, must be loaded in the same "
                                 f"semantics (use `with mx.np_shape(True)`)")
    if magic != V3 and is_np_shape():
        raise NDArrayFormatError(f"{fname}: ndarray was not saved in np shape semantics, but being loaded in np "
                                 f"shape semantics (use `with mx.np_shape(False)`)")


def _read_array(r: _Reader, i: int) -> Any:
    (magic,) = r.unpack("I", f"array {i} header")
    _check_semantics(magic, r.fname)
    if magic in (V2, V3):
        (stype,) = r.unpack("i", f"array {i} storage type")
        if stype != 0:
            return _read_sparse(r, i, stype)
        (ndim,) = r.unpack("I", f"array {i} ndim")
        if ndim > 32:
            raise NDArrayFormatError(f"{r.fname}: array {i} claims {ndim} dimensions: corrupted file")
        shape = r.unpack(f"{ndim}q", f"array {i} shape") if ndim else ()
        if magic == V2 and ndim == 0:
            return np.zeros((0,), np.float32)  # MXNet V2: ndim 0 means "none"
    elif magic == V1:
        (ndim,) = r.unpack("I", f"array {i} ndim")
        shape = r.unpack(f"{ndim}q", f"array {i} shape") if ndim else ()
        if ndim == 0:
            return np.zeros((0,), np.float32)
    else:
        # legacy V0: the magic word is ndim, dims are u32
        ndim = magic
        if ndim > 32:
            raise NDArrayFormatError(f"{r.fname}: bad magic {magic:#x} for array {i}: not an NDArray file")
        shape = r.unpack(f"{ndim}I", f"array {i} shape")
        if ndim == 0:
            return np.zeros((0,), np.float32)
    if any(d < 0 for d in shape):
        raise NDArrayFormatError(f"{r.fname}: array {i} has a negative dimension {shape}")
    r.unpack("ii", f"array {i} context")
    (flag,) = r.unpack("i", f"array {i} dtype")
    if flag not in TYPE_FLAGS:
        raise NDArrayFormatError(f"{r.fname}: array {i} has unknown type flag {flag}")
    dt = np.dtype(TYPE_FLAGS[flag])
    n = dt.itemsize
    for d in shape:  # Python ints: a forged shape cannot wrap around int64 to a small size
        n *= d
    if n > len(r.buf) - r.pos:
        raise NDArrayFormatError(f"{r.fname}: array {i} shape {tuple(shape)} ({dt}) needs {n} bytes of data "
                                 f"at offset {r.pos}, file has {len(r.buf) - r.pos} left: corrupted file")
    data = r.take(n, f"array {i} data ({n} bytes)")
    try:
        return np.frombuffer(data, dtype=dt).reshape(shape).copy()
    except ValueError as e:  # e.g. a zero-size array with a dimension beyond numpy's range
        raise NDArrayFormatError(f"{r.fname}: array {i} has an impossible shape {tuple(shape)}: {e}") from None


def load_buffer(buf: bytes, fname: str = "<buffer>") -> list[np.ndarray] | dict[str, np.ndarray]:
    """Parse an NDArray list file's bytes into numpy arrays (list, or dict when named),
    verifying plexnet's checksum trailer when the file has one."""
    buf = bytes(buf) if not isinstance(buf, bytes) else buf
    t = _TRAILER.size
    if len(buf) >= t + 24 and buf[-t:-t + 8] == TRAILER_MAGIC:
        _magic, length, crc, res = _TRAILER.unpack(buf[-t:])
        if length == len(buf) - t and res == 0:
            if zlib.crc32(memoryview(buf)[:length]) == crc:
                return _parse(buf[:length], fname)
            try:  # an MXNet file whose last bytes merely look like a trailer
                return _parse(buf, fname)
            except NDArrayFormatError:
                pass
            raise NDArrayFormatError(f"{fname}: checksum mismatch (CRC-32 of {length} bytes is "
                                     f"{zlib.crc32(memoryview(buf)[:length]):#010x}, the file says {crc:#010x}): "
                                     f"the file is corrupted")
    return _parse(buf, fname)


def _parse(buf: bytes, fname: str) -> list[np.ndarray] | dict[str, np.ndarray]:
    r = _Reader(buf, fname)
    magic, _res = r.unpack("QQ", "file header")
    if magic != LIST_MAGIC:
        raise NDArrayFormatError(f"{fname}: not an NDArray file (magic {magic:#x}, expected {LIST_MAGIC:#x})")
    (n,) = r.unpack("Q", "array count")
    if n > len(buf):
        raise NDArrayFormatError(f"{fname}: claims {n} arrays: corrupted file")
    arrays = [_read_array(r, i) for i in range(n)]
    (m,) = r.unpack("Q", "key count")
    if m not in (0, n):
        raise NDArrayFormatError(f"{fname}: {m} names for {n} arrays: corrupted file")
    keys = []
    for i in range(m):
        (ln,) = r.unpack("Q", f"name {i} length")
        try:
            keys.append(bytes(r.take(ln, f"name {i}")).decode("utf-8"))
        except UnicodeDecodeError:
            raise NDArrayFormatError(f"{fname}: name {i} is not UTF-8: corrupted file") from None
    if len(set(keys)) != len(keys):
        seen: set[str] = set()
        dup = next(k for k in keys if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise NDArrayFormatError(f"{fname}: name {dup!r} occurs more than once: corrupted or forged file")
    if r.pos != len(r.buf):
        raise NDArrayFormatError(f"{fname}: {len(r.buf) - r.pos} unexpected trailing bytes: corrupted file")
    return dict(zip(keys, arrays)) if m else arrays


def dump_buffer(data: Any) -> bytes:
    """Serialise a list or dict of arrays (NDArray or numpy) to MXNet's format."""
    if isinstance(data, dict):
        keys, vals = list(data.keys()), list(data.values())
    elif isinstance(data, (list, tuple)):
        keys, vals = [], list(data)
    else:
        keys, vals = [], [data]
    parts = [struct.pack("<QQQ", LIST_MAGIC, 0, len(vals))]
    for i, v in enumerate(vals):
        if getattr(v, "stype", "default") != "default":
            parts.append(_dump_sparse(v, keys[i] if keys else i))
            continue
        # np.require, not ascontiguousarray (which makes a 0-d array 1-d: np_shape scalars stay ())
        a = np.require(v.asnumpy() if hasattr(v, "asnumpy") else np.asarray(v), requirements="C")
        if a.dtype not in FLAG_OF:
            raise TypeError(f"save: array {keys[i] if keys else i} has unsupported dtype {a.dtype}")
        parts.append(struct.pack("<IiI", V3 if is_np_shape() else V2, 0, a.ndim))  # as MXNet's NDArray::Save
        parts.append(struct.pack(f"<{a.ndim}q", *a.shape))
        parts.append(struct.pack("<iii", 1, 0, FLAG_OF[a.dtype]))
        parts.append(a.tobytes())
    parts.append(struct.pack("<Q", len(keys)))
    for k in keys:
        if not isinstance(k, str):
            raise TypeError(f"save: dict keys must be strings, got {k!r}")
        kb = k.encode("utf-8")
        parts.append(struct.pack("<Q", len(kb)) + kb)
    body = b"".join(parts)
    return body + _TRAILER.pack(TRAILER_MAGIC, len(body), zlib.crc32(body), 0)


def _shape_bytes(shape: tuple) -> bytes:
    return struct.pack(f"<I{len(shape)}q", len(shape), *shape)


def _dump_sparse(v: Any, name: Any) -> bytes:
    """A CSRNDArray / RowSparseNDArray in MXNet's sparse layout (see _read_sparse)."""
    data = np.ascontiguousarray(v.data.asnumpy())
    aux = [np.ascontiguousarray(v.indptr.asnumpy()), np.ascontiguousarray(v.indices.asnumpy())] \
        if v.stype == "csr" else [np.ascontiguousarray(v.indices.asnumpy())]
    for a in (data, *aux):
        if a.dtype not in FLAG_OF:
            raise TypeError(f"save: array {name} has unsupported dtype {a.dtype}")
    out = [struct.pack("<Ii", V2, 2 if v.stype == "csr" else 1), _shape_bytes(data.shape),
           _shape_bytes(tuple(v.shape)), struct.pack("<iii", 1, 0, FLAG_OF[data.dtype])]
    out += [struct.pack("<i", FLAG_OF[a.dtype]) + _shape_bytes(a.shape) for a in aux]
    out += [data.tobytes()] + [a.tobytes() for a in aux]
    return b"".join(out)


def _to_nd(v: Any, ctx: Any) -> Any:
    from .ndarray import array
    if isinstance(v, SparseParts):
        from . import sparse
        if v.stype == 2:
            return sparse.csr_matrix((v.data, v.aux[1], v.aux[0]), shape=v.shape, ctx=ctx, dtype=v.data.dtype)
        return sparse.row_sparse_array((v.data, v.aux[0]), shape=v.shape, ctx=ctx, dtype=v.data.dtype)
    return array(v, ctx=ctx, dtype=v.dtype)


def load_raw(buf: bytes) -> tuple[Any, tuple[int, int]]:
    """One array in MXNet's raw single-array layout (``NDArray::Save``: the ``'handle'`` bytes of
    MXNet's pickles) -> (numpy array or sparse parts, (dev_type, dev_id) it was saved from)."""
    r = _Reader(bytes(buf), "<pickled NDArray>")
    dev = (1, 0)
    if len(buf) >= 12 and struct.unpack_from("<I", buf)[0] in (V2, V3) and struct.unpack_from("<i", buf, 4)[0] == 0:
        ndim = struct.unpack_from("<I", buf, 8)[0]
        if ndim and len(buf) >= 20 + 8 * ndim:
            dev = struct.unpack_from("<ii", buf, 12 + 8 * ndim)
    return _read_array(r, 0), dev


def save(fname: str, data: Any) -> None:
    """Save an NDArray, a list or a str->NDArray dict. Written atomically (temp file +
    rename), so a crash never leaves a half-written file behind."""
    atomic_write(fname, dump_buffer(data))


def load(fname: str, ctx: Any = None) -> Any:
    """Load a list or dict of NDArrays saved by ``save`` (or by MXNet)."""
    with open_for_read(fname, "rb") as f:
        buf = f.read()
    res = load_buffer(buf, fname)
    if isinstance(res, dict):
        return {k: _to_nd(v, ctx) for k, v in res.items()}
    return [_to_nd(v, ctx) for v in res]


def load_frombuffer(buf: bytes, ctx: Any = None) -> Any:
    """Load a list or dict of NDArrays from the bytes of a saved file (MXNet's
    ``nd.load_frombuffer``); a truncated or corrupted buffer raises ``NDArrayFormatError``."""
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError(f"load_frombuffer: buf must be bytes, got {type(buf).__name__}")
    res = load_buffer(bytes(buf), "<buffer>")
    if isinstance(res, dict):
        return {k: _to_nd(v, ctx) for k, v in res.items()}
    return [_to_nd(v, ctx) for v in res]


# NDArray.__setstate__ reads MXNet's pickle state with load_raw; the array module cannot import
# this one (it would close an import cycle through the sparse package), so plug it in
from .ndarray import plug_sparse as _plug  # noqa: E402

_plug(load_raw=load_raw)
