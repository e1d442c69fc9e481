"""Frames of the TCP data plane (``tcp_transport``): the fixed header, the JSON meta and
the raw bytes, packed for ``sendmsg`` and validated before any buffer is allocated;
plus the socket options every connection gets."""
from __future__ import annotations

import json
import os
import socket
import struct
import zlib
from typing import Any, Sequence

import numpy as np

from plexnet.kvstore.base import KVStoreError

MAGIC = b"PXKT"
VERSION = 1
#: magic, version, op, flags, request id, meta length, data length, CRC-32(header[:-4] + meta)
_HDR = struct.Struct("<4sBBHIIQI")
OP_HELLO, OP_PUSH, OP_PULL, OP_REPLY, OP_BYE = 1, 2, 3, 4, 5
_OPS = {OP_HELLO: "hello", OP_PUSH: "push", OP_PULL: "pull", OP_REPLY: "reply", OP_BYE: "bye"}
FLAG_DATA_CRC = 1
MAX_META = 16 << 20          # a JSON description of every key of a server fits easily
MAX_META_UNAUTH = 4096       # before the token was shown
MAX_DATA = 1 << 40
_POLL = 1.0                  # socket timeout: how often blocked threads look at the clock
_STAGE = 1 << 16             # staging buffer for small reads
_IOV = 512                   # views per sendmsg (below IOV_MAX)
_KINDS = "biuf"              # numeric dtypes only


#: one encoder/decoder for every frame: ``json.dumps`` with options builds a new encoder
#: per call (~10 us a small frame here), ``json.loads`` of bytes sniffs their encoding first
_encode = json.JSONEncoder(separators=(",", ":")).encode
_decode = json.JSONDecoder().decode


class FrameError(KVStoreError):
    """A malformed frame, or a peer that broke a frame off."""


def stall_timeout() -> float:
    return float(os.environ.get("PLEXNET_KVSTORE_TCP_STALL_TIMEOUT", "30"))


def _want_crc() -> bool:
    return os.environ.get("PLEXNET_KVSTORE_TCP_CHECKSUM", "") not in ("", "0")


def _bytes_of(arrays: Sequence[np.ndarray]) -> list[memoryview]:
    return [memoryview(np.ascontiguousarray(a)).cast("B") for a in arrays]


def pack_frame(op: int, req: int, meta: dict, arrays: Sequence[np.ndarray] = (), crc: bool = False) -> list[Any]:
    """The frame as a list of buffers for ``sendmsg`` (arrays are not copied)."""
    data = _bytes_of(arrays)
    flags = 0
    if crc:
        c = 0
        for d in data:
            c = zlib.crc32(d, c)
        meta = dict(meta, crc=c)
        flags |= FLAG_DATA_CRC
    m = _encode(meta).encode()
    head = _HDR.pack(MAGIC, VERSION, op, flags, req, len(m), sum(d.nbytes for d in data), 0)
    c = zlib.crc32(m, zlib.crc32(head[:-4]))
    return [head[:-4] + struct.pack("<I", c), m, *data]


def parse_header(buf: Any, peer: str, max_meta: int = MAX_META) -> tuple[int, int, int, int, int, int]:
    """``(op, flags, req, meta_len, data_len, crc)`` of a header; ``FrameError`` naming
    ``peer`` when it is not one."""
    magic, ver, op, flags, req, mlen, dlen, crc = _HDR.unpack(bytes(buf))
    if magic != MAGIC:
        raise FrameError(f"bad frame from {peer}: magic {magic!r}, expected {MAGIC!r} (not a plexnet kvstore peer, "
                         f"or the stream lost its place)")
    if ver != VERSION:
        raise FrameError(f"bad frame from {peer}: protocol version {ver}, this side speaks {VERSION}")
    if op not in _OPS:
        raise FrameError(f"bad frame from {peer}: unknown op {op}")
    if mlen > max_meta:
        raise FrameError(f"bad frame from {peer}: meta length {mlen} exceeds {max_meta}")
    if dlen > MAX_DATA:
        raise FrameError(f"bad frame from {peer}: data length {dlen} exceeds {MAX_DATA}")
    return op, flags, req, mlen, dlen, crc


def parse_meta(head: Any, meta: Any, crc: int, peer: str) -> dict:
    """The frame's JSON meta after checking the header+meta CRC."""
    if zlib.crc32(bytes(meta), zlib.crc32(bytes(head)[:-4])) != crc:
        raise FrameError(f"bad frame from {peer}: header/meta checksum mismatch")
    try:
        m = _decode(bytes(meta).decode()) if len(meta) else {}
    except ValueError as e:  # UnicodeDecodeError included
        raise FrameError(f"bad frame from {peer}: meta is not JSON ({e})") from None
    if not isinstance(m, dict):
        raise FrameError(f"bad frame from {peer}: meta is a {type(m).__name__}, not an object")
    return m


def item_specs(specs: Any, dlen: int, peer: str, what: str) -> list[tuple[np.dtype, int]]:
    """Validated ``(dtype, count)`` of a frame's arrays; their bytes must add up to ``dlen``."""
    out, total = [], 0
    try:
        for dt, n in specs:
            d = np.dtype(str(dt))
            n = int(n)
            if d.kind not in _KINDS or d.hasobject or n < 0:
                raise ValueError(f"array ({dt}, {n})")
            out.append((d, n))
            total += n * d.itemsize
    except (TypeError, ValueError) as e:
        raise FrameError(f"bad {what} frame from {peer}: bad array description ({e})") from None
    if total != dlen:
        raise FrameError(f"bad {what} frame from {peer}: its arrays hold {total} bytes but the header says {dlen}")
    return out


def _data_crc(arrays: Sequence[np.ndarray]) -> int:
    c = 0
    for a in arrays:
        c = zlib.crc32(memoryview(a).cast("B"), c)
    return c


def _tune(sock: socket.socket) -> None:
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, val in (("TCP_KEEPIDLE", 5), ("TCP_KEEPINTVL", 2), ("TCP_KEEPCNT", 3), ("TCP_USER_TIMEOUT", 15000)):
        opt = getattr(socket, name, None)
        if opt is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, opt, val)
            except OSError:
                pass
