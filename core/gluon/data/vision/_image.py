"""The ``mxnet.image`` helpers that Gluon's vision transforms and datasets use
(decode, resize, fixed/center/random-size crop, rotate), on plexnet's operators:
decoding with OpenCV (``io/decode.py``, as MXNet), resizing with the ops-image
plugin's ``image.resize`` and rotation with ``BilinearSampler``, as MXNet 1.9.1."""
from __future__ import annotations

import random
from numbers import Number
from typing import Any

import numpy as np

from .... import ndarray as nd
from ....io.decode import imdecode_bgr
from ....ndarray import NDArray

__all__ = ["imdecode", "imresize", "scale_down", "fixed_crop", "center_crop", "random_size_crop", "imrotate",
           "random_rotate"]


def imdecode(buf: Any, flag: int = 1, to_rgb: bool = True) -> NDArray:
    """Decode an encoded image into an ``(h, w, c)`` uint8 NDArray: ``flag=1`` colour
    (RGB unless ``to_rgb=False``), ``flag=0`` grayscale ``(h, w, 1)``."""
    if isinstance(buf, NDArray):
        buf = buf.asnumpy().astype(np.uint8)
    if not isinstance(buf, (bytes, bytearray, np.ndarray)):
        raise ValueError("buf must be of type bytes, bytearray or numpy.ndarray, if you would like to input type str, "
                         "please convert to bytes")
    img = imdecode_bgr(bytes(buf) if isinstance(buf, bytearray) else buf, 3 if flag else 1)
    if flag and to_rgb:
        img = img[:, :, ::-1]
    return nd.array(np.ascontiguousarray(img), dtype=np.uint8)


def imresize(src: NDArray, w: int, h: int, interp: int = 1) -> NDArray:
    """Resize an ``(h, w, c)`` image to ``(h, w)`` given as ``w, h`` (OpenCV's kernels)."""
    return nd.image.resize(src, size=(int(w), int(h)), interp=interp)


def scale_down(src_size: tuple, size: tuple) -> tuple[int, int]:
    """Shrink the crop ``size`` (w, h) to fit ``src_size`` (w, h), keeping its ratio."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def _get_interp_method(interp: int, sizes: tuple = ()) -> int:
    if interp == 9:
        if sizes:
            oh, ow, nh, nw = sizes
            if nh > oh and nw > ow:
                return 2
            if nh < oh and nw < ow:
                return 3
            return 1
        return 2
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError(f"Unknown interp method {interp}")
    return interp


def fixed_crop(src: NDArray, x0: int, y0: int, w: int, h: int, size: tuple | None = None,
               interp: int = 2) -> NDArray:
    """The window ``(x0, y0, w, h)`` of an ``(h, w, c)`` image, resized to ``size`` (w, h)."""
    out = nd.slice(src, begin=(y0, x0, 0), end=(y0 + h, x0 + w, int(src.shape[2])))
    if size is not None and (w, h) != tuple(size):
        out = imresize(out, size[0], size[1], interp=_get_interp_method(interp, (h, w, size[1], size[0])))
    return out


def center_crop(src: NDArray, size: tuple, interp: int = 2) -> tuple[NDArray, tuple]:
    """The centred crop of ``size`` (w, h), scaled down to fit and resized back to ``size``."""
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0 = int((w - new_w) / 2)
    y0 = int((h - new_h) / 2)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def random_size_crop(src: NDArray, size: tuple, area: Any, ratio: tuple, interp: int = 2) -> tuple[NDArray, tuple]:
    """A crop of random area fraction and aspect ratio resized to ``size``; ten tries,
    then the centre crop (MXNet's algorithm and random stream: Python's ``random``)."""
    h, w, _ = src.shape
    src_area = h * w
    if isinstance(area, Number):
        area = (area, 1.0)
    for _ in range(10):
        target_area = random.uniform(area[0], area[1]) * src_area
        log_ratio = (np.log(ratio[0]), np.log(ratio[1]))
        new_ratio = np.exp(random.uniform(*log_ratio))
        new_w = int(round(np.sqrt(target_area * new_ratio)))
        new_h = int(round(np.sqrt(target_area / new_ratio)))
        if new_w <= w and new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


def imrotate(src: NDArray, rotation_degrees: Any, zoom_in: bool = False, zoom_out: bool = False) -> NDArray:
    """Rotate float32 ``(c, h, w)`` / ``(n, c, h, w)`` images about their centre
    (bilinear sampling, zeros outside); ``zoom_in`` hides the padding, ``zoom_out``
    keeps the whole image."""
    if zoom_in and zoom_out:
        raise ValueError("`zoom_in` and `zoom_out` cannot be both True")
    if src.dtype is not np.float32:
        raise TypeError("Only `float32` images are supported by this function")
    expanded = False
    if src.ndim == 3:
        expanded = True
        src = src.expand_dims(axis=0)
        if not isinstance(rotation_degrees, Number):
            raise TypeError("When a single image is passed the rotation angle is required to be a scalar.")
    elif src.ndim != 4:
        raise ValueError("Only 3D and 4D are supported by this function")
    if isinstance(rotation_degrees, Number):
        rotation_degrees = nd.array([rotation_degrees] * len(src), ctx=src.context)
    if len(src) != len(rotation_degrees):
        raise ValueError("The number of images must be equal to the number of rotation angles")
    rotation_degrees = rotation_degrees.as_in_context(src.context)
    rotation_rad = np.pi * rotation_degrees / 180
    rotation_rad = rotation_rad.expand_dims(axis=1).expand_dims(axis=2)
    _, _, h, w = src.shape
    hscale = float(h - 1) / 2
    wscale = float(w - 1) / 2
    h_matrix = (nd.repeat(nd.arange(h, ctx=src.context).astype("float32").reshape(h, 1), w, axis=1)
                - hscale).expand_dims(axis=0)
    w_matrix = (nd.repeat(nd.arange(w, ctx=src.context).astype("float32").reshape(1, w), h, axis=0)
                - wscale).expand_dims(axis=0)
    c_alpha = nd.cos(rotation_rad)
    s_alpha = nd.sin(rotation_rad)
    w_matrix_rot = (w_matrix * c_alpha - h_matrix * s_alpha) / wscale
    h_matrix_rot = (w_matrix * s_alpha + h_matrix * c_alpha) / hscale
    hh, ww = nd.array([h], ctx=src.context), nd.array([w], ctx=src.context)
    globalscale: Any = 1
    if zoom_in or zoom_out:
        rho_corner = nd.sqrt(hh * hh + ww * ww)
        ang_corner = nd.arctan(hh / ww)
        corner1_x = nd.abs(rho_corner * nd.cos(ang_corner + nd.abs(rotation_rad)))
        corner1_y = nd.abs(rho_corner * nd.sin(ang_corner + nd.abs(rotation_rad)))
        corner2_x = nd.abs(rho_corner * nd.cos(ang_corner - nd.abs(rotation_rad)))
        corner2_y = nd.abs(rho_corner * nd.sin(ang_corner - nd.abs(rotation_rad)))
        max_x = nd.maximum(corner1_x, corner2_x)
        max_y = nd.maximum(corner1_y, corner2_y)
        if zoom_out:
            globalscale = nd.maximum(max_x / ww, max_y / hh)
        else:
            globalscale = nd.minimum(ww / max_x, hh / max_y)
        globalscale = globalscale.expand_dims(axis=3)
    grid = nd.concat(w_matrix_rot.expand_dims(axis=1), h_matrix_rot.expand_dims(axis=1), dim=1)
    grid = grid * globalscale
    rot_img = nd.BilinearSampler(src, grid)
    return rot_img[0] if expanded else rot_img


def random_rotate(src: NDArray, angle_limits: tuple, zoom_in: bool = False, zoom_out: bool = False) -> NDArray:
    """``imrotate`` by an angle drawn uniformly from ``angle_limits`` (numpy's stream)."""
    if src.ndim == 3:
        rotation_degrees: Any = np.random.uniform(angle_limits[0], angle_limits[1])
    else:
        rotation_degrees = nd.array(np.random.uniform(angle_limits[0], angle_limits[1], size=src.shape[0]))
    return imrotate(src, rotation_degrees, zoom_in=zoom_in, zoom_out=zoom_out)
