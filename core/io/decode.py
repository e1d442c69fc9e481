"""Image decoding and resizing with OpenCV, as MXNet 1.x does them.

MXNet decodes with ``cv::imdecode`` and resizes with ``cv::resize``; using the same
library gives the same pixels (Pillow's filters differ at many pixels) and OpenCV
releases the GIL inside every call, so worker threads decode in parallel.
Arrays here are OpenCV's: ``(h, w, c)`` uint8 in **BGR** order (``BGRA`` for 4 channels).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..base import MXNetError

__all__ = ["cv2", "imdecode_bgr", "inter_method", "INTER_NAMES"]

#: MXNet's ``inter_method`` codes: 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 lanczos4,
#: 9 auto (cubic to enlarge, area to shrink, bilinear otherwise), 10 random among 0-4
INTER_NAMES = {0: "nearest", 1: "bilinear", 2: "bicubic", 3: "area", 4: "lanczos4", 9: "auto", 10: "random"}

_cv2: Any = None


def cv2() -> Any:
    """The ``cv2`` module; a clear install hint when OpenCV is missing."""
    global _cv2
    if _cv2 is None:
        try:
            import cv2 as mod
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("plexnet's image pipeline needs OpenCV: pip install 'plexnet[image]' "
                              "(opencv-python-headless)") from e
        _cv2 = mod
    return _cv2


def imdecode_bgr(buf: bytes | np.ndarray, channels: int) -> np.ndarray:
    """Decode an encoded image as MXNet's record iterators do: ``channels`` 1 ->
    grayscale ``(h, w, 1)``, 3 -> BGR, 4 -> the file's own channels (must be 4)."""
    cv = cv2()
    flag = {1: cv.IMREAD_GRAYSCALE, 3: cv.IMREAD_COLOR, 4: cv.IMREAD_UNCHANGED}.get(channels)
    if flag is None:
        raise MXNetError(f"imdecode: channels must be 1, 3 or 4, got {channels}")
    arr = np.frombuffer(buf, dtype=np.uint8) if isinstance(buf, (bytes, bytearray, memoryview)) else buf
    if arr.size == 0:
        raise MXNetError("imdecode: empty buffer")
    if flag != cv.IMREAD_UNCHANGED:
        # MXNet's OpenCV 3 imdecode does not rotate by the EXIF orientation; OpenCV 4+ does
        flag |= cv.IMREAD_IGNORE_ORIENTATION
    img = cv.imdecode(arr, flag)
    if img is None:
        raise MXNetError(f"imdecode: cannot decode an image of {arr.size} bytes (not an image OpenCV reads)")
    if img.ndim == 2:
        img = img[:, :, None]
    if channels == 4 and img.shape[2] != 4:
        raise MXNetError(f"imdecode: data_shape asks for 4 channels but the image has {img.shape[2]}")
    return img


def inter_method(method: int, old_w: int, old_h: int, new_w: int, new_h: int,
                 rng: np.random.Generator | None = None) -> int:
    """OpenCV's interpolation flag for MXNet's ``inter_method`` code (9: by direction of
    the resize, 10: uniformly random among 0-4 from ``rng``)."""
    if method == 9:
        if new_w > old_w and new_h > old_h:
            return 2
        if new_w < old_w and new_h < old_h:
            return 3
        return 1
    if method == 10:
        r = rng if rng is not None else np.random.default_rng()
        return int(r.integers(0, 5))
    if method not in (0, 1, 2, 3, 4):
        raise MXNetError(f"invalid inter_method {method}: valid values are 0 (nearest), 1 (bilinear), "
                         f"2 (bicubic), 3 (area), 4 (lanczos4), 9 (auto), 10 (random)")
    return int(method)
