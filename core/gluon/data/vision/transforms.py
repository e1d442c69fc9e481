"""Image transforms (MXNet 1.9.1's ``gluon.data.vision.transforms``).

Most transforms are a ``HybridBlock`` around one ``image`` operator of the ops-image
plugin (``F.image.<op>`` with fixed arguments), so they hybridize and compose into one
graph. The geometric ones MXNet implements in Python (centre and random-size crops,
rotations) are ``Block``s calling ``mx.image`` and draw from Python's / numpy's global
generators as MXNet does, so seeded runs give MXNet's crops and angles.

Images are ``(H, W, C)`` (or ``(N, H, W, C)``) before ``ToTensor`` and ``(C, H, W)``
(or ``(N, C, H, W)``) float32 in [0, 1] after it.
"""
from __future__ import annotations

import random
from numbers import Number
from typing import Any

import numpy as np

from .... import image
from ...block import Block, HybridBlock
from ...nn import HybridSequential, Sequential

__all__ = ["Compose", "Cast", "ToTensor", "Normalize", "Rotate", "RandomRotation", "RandomResizedCrop",
           "CropResize", "CenterCrop", "Resize", "RandomFlipLeftRight", "RandomFlipTopBottom", "RandomBrightness",
           "RandomContrast", "RandomSaturation", "RandomHue", "RandomColorJitter", "RandomLighting", "RandomApply",
           "Block", "HybridBlock", "Sequential", "HybridSequential"]


def _pair(size: Any) -> Any:
    # an int size means a square
    return (size, size) if isinstance(size, (Number, np.generic)) else size


class Compose(Sequential):
    """Applies ``transforms`` in order. Each run of consecutive ``HybridBlock``s is
    grouped into one hybridized ``HybridSequential`` (one graph call per sample).

    Parameters
    ----------
    transforms : list of Block
        The transforms.

    Examples
    --------
    >>> t = transforms.Compose([transforms.Resize(300), transforms.CenterCrop(256), transforms.ToTensor()])
    >>> t(mx.nd.zeros((224, 224, 3), dtype="uint8")).shape
    (3, 256, 256)
    """

    def __init__(self, transforms: list[Block]) -> None:
        super().__init__()
        run: list[HybridBlock] = []
        for t in [*transforms, None]:    # None: flush the last run
            if isinstance(t, HybridBlock):
                run.append(t)
                continue
            if len(run) == 1:
                self.add(run[0])
            elif len(run) > 1:
                group = HybridSequential()
                group.add(*run)
                group.hybridize()
                self.add(group)
            run = []
            if t is not None:
                self.add(t)


class _ImageOp(HybridBlock):
    """``F.image.<_op>(x, *self._args)``."""

    _op = ""

    def __init__(self, *args: Any) -> None:
        super().__init__()
        self._args = args

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return getattr(F.image, self._op)(x, *self._args)


class Cast(HybridBlock):
    """Casts the input to ``dtype``.

    Parameters
    ----------
    dtype : str or numpy dtype, default 'float32'
        The target type.
    """

    def __init__(self, dtype: Any = "float32") -> None:
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.cast(x, self._dtype)


class ToTensor(_ImageOp):
    """uint8 ``(H, W, C)`` in [0, 255] -> float32 ``(C, H, W)`` in [0, 1] (batches
    ``(N, H, W, C)`` -> ``(N, C, H, W)``)."""

    _op = "to_tensor"

    def __init__(self) -> None:
        super().__init__()


class Normalize(_ImageOp):
    """``(x[c] - mean[c]) / std[c]`` per channel of a ``(C, H, W)`` or ``(N, C, H, W)``
    tensor; a scalar mean or std applies to every channel.

    Parameters
    ----------
    mean : float or tuple of float, default 0.0
        Channel means.
    std : float or tuple of float, default 1.0
        Channel standard deviations.
    """

    _op = "normalize"

    def __init__(self, mean: Any = 0.0, std: Any = 1.0) -> None:
        super().__init__(mean, std)


class Resize(_ImageOp):
    """Resizes ``(H, W, C)`` or ``(N, H, W, C)`` images to ``size``. Use before ``ToTensor``.

    Parameters
    ----------
    size : int or tuple of (W, H)
        Output size; an int is a square, or with ``keep_ratio`` the short edge.
    keep_ratio : bool, default False
        For an int ``size``: resize the short edge to it and keep the aspect ratio.
    interpolation : int, default 1
        OpenCV's interpolation (0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos).
    """

    _op = "resize"

    def __init__(self, size: Any, keep_ratio: bool = False, interpolation: int = 1) -> None:
        super().__init__(size, keep_ratio, interpolation)


class CropResize(HybridBlock):
    """Crops the ``width`` x ``height`` box at (``x``, ``y``), then resizes it to ``size``
    when one is given. Works on ``(H, W, C)`` and ``(N, H, W, C)``.

    Parameters
    ----------
    x, y : int
        Left and top edges of the box.
    width, height : int
        Size of the box.
    size : int or tuple of (W, H), optional
        Size to resize the crop to.
    interpolation : int, optional
        OpenCV's interpolation for the resize.
    """

    def __init__(self, x: int, y: int, width: int, height: int, size: Any = None,
                 interpolation: int | None = None) -> None:
        super().__init__()
        self._x = x
        self._y = y
        self._width = width
        self._height = height
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        out = F.image.crop(x, self._x, self._y, self._width, self._height)
        if self._size:
            out = F.image.resize(out, self._size, False, self._interpolation)
        return out


class RandomFlipLeftRight(_ImageOp):
    """Flips ``(H, W, C)`` images left to right with probability 0.5."""

    _op = "random_flip_left_right"

    def __init__(self) -> None:
        super().__init__()


class RandomFlipTopBottom(_ImageOp):
    """Flips ``(H, W, C)`` images top to bottom with probability 0.5."""

    _op = "random_flip_top_bottom"

    def __init__(self) -> None:
        super().__init__()


class _RandomFactor(_ImageOp):
    # scales a property by a factor drawn from [max(0, 1 - amount), 1 + amount]
    def __init__(self, amount: float) -> None:
        super().__init__(max(0, 1 - amount), 1 + amount)


class RandomBrightness(_RandomFactor):
    """Scales brightness by a factor drawn from ``[max(0, 1 - brightness), 1 + brightness]``.

    Parameters
    ----------
    brightness : float
        Jitter amount.
    """

    _op = "random_brightness"

    def __init__(self, brightness: float) -> None:
        super().__init__(brightness)


class RandomContrast(_RandomFactor):
    """Scales contrast by a factor drawn from ``[max(0, 1 - contrast), 1 + contrast]``.

    Parameters
    ----------
    contrast : float
        Jitter amount.
    """

    _op = "random_contrast"

    def __init__(self, contrast: float) -> None:
        super().__init__(contrast)


class RandomSaturation(_RandomFactor):
    """Scales saturation by a factor drawn from ``[max(0, 1 - saturation), 1 + saturation]``.

    Parameters
    ----------
    saturation : float
        Jitter amount.
    """

    _op = "random_saturation"

    def __init__(self, saturation: float) -> None:
        super().__init__(saturation)


class RandomHue(_RandomFactor):
    """Shifts hue by a factor drawn from ``[max(0, 1 - hue), 1 + hue]``.

    Parameters
    ----------
    hue : float
        Jitter amount.
    """

    _op = "random_hue"

    def __init__(self, hue: float) -> None:
        super().__init__(hue)


class RandomColorJitter(_ImageOp):
    """Random brightness, contrast, saturation and hue jitter in one operator (each amount
    as in ``RandomBrightness`` etc.; 0 leaves that property alone).

    Parameters
    ----------
    brightness, contrast, saturation, hue : float, default 0
        Jitter amounts.
    """

    _op = "random_color_jitter"

    def __init__(self, brightness: float = 0, contrast: float = 0, saturation: float = 0, hue: float = 0) -> None:
        super().__init__(brightness, contrast, saturation, hue)


class RandomLighting(_ImageOp):
    """AlexNet's PCA lighting noise of strength ``alpha``.

    Parameters
    ----------
    alpha : float
        Standard deviation of the noise.
    """

    _op = "random_lighting"

    def __init__(self, alpha: float) -> None:
        super().__init__(alpha)


def _check_float32(x: Any) -> None:
    if np.dtype(x.dtype) != np.float32:
        raise TypeError(f"This transformation only supports float32 (got {np.dtype(x.dtype).name}). "
                        "Consider calling it after ToTensor")


class Rotate(Block):
    """Rotates float32 ``(C, H, W)`` or ``(N, C, H, W)`` images by ``rotation_degrees``,
    keeping their shape.

    Parameters
    ----------
    rotation_degrees : float
        Angle, counter-clockwise.
    zoom_in : bool, default False
        Zoom in so that no padding shows.
    zoom_out : bool, default False
        Zoom out so that the whole image shows.
    """

    def __init__(self, rotation_degrees: float, zoom_in: bool = False, zoom_out: bool = False) -> None:
        super().__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x: Any) -> Any:
        _check_float32(x)
        return image.imrotate(x, *self._args)


class RandomRotation(Block):
    """With probability ``rotate_with_proba``, rotates float32 ``(C, H, W)`` or
    ``(N, C, H, W)`` images by an angle drawn from ``angle_limits``.

    Parameters
    ----------
    angle_limits : tuple of (float, float)
        Lower and upper angle, in degrees.
    zoom_in, zoom_out : bool, default False
        As in ``Rotate``.
    rotate_with_proba : float, default 1.0
        Probability of rotating.
    """

    def __init__(self, angle_limits: tuple[float, float], zoom_in: bool = False, zoom_out: bool = False,
                 rotate_with_proba: float = 1.0) -> None:
        super().__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise ValueError("`angle_limits` must be an ordered tuple")
        if not 0 <= rotate_with_proba <= 1:
            raise ValueError("Probability of rotating the image should be between 0 and 1")
        self._args = (angle_limits, zoom_in, zoom_out)
        self._rotate_with_proba = rotate_with_proba

    def forward(self, x: Any) -> Any:
        # one numpy draw per call, even at probability 1: MXNet's random stream
        if np.random.random() > self._rotate_with_proba:
            return x
        _check_float32(x)
        return image.random_rotate(x, *self._args)


class RandomResizedCrop(Block):
    """Crops a random area (a ``scale`` fraction of the image, aspect ratio in ``ratio``)
    of an ``(H, W, C)`` image and resizes it to ``size``.

    Parameters
    ----------
    size : int or tuple of (W, H)
        Output size.
    scale : tuple of (float, float), default (0.08, 1.0)
        Range of the crop's area, as a fraction of the image's.
    ratio : tuple of (float, float), default (3/4, 4/3)
        Range of the crop's aspect ratio (width / height).
    interpolation : int, default 1
        OpenCV's interpolation for the resize.
    """

    def __init__(self, size: Any, scale: tuple[float, float] = (0.08, 1.0),
                 ratio: tuple[float, float] = (3.0 / 4.0, 4.0 / 3.0), interpolation: int = 1) -> None:
        super().__init__()
        self._args = (_pair(size), scale, ratio, interpolation)

    def forward(self, x: Any) -> Any:
        return image.random_size_crop(x, *self._args)[0]


class CenterCrop(Block):
    """Crops the centre of an ``(H, W, C)`` image to ``size`` (upsampling an image smaller
    than that).

    Parameters
    ----------
    size : int or tuple of (W, H)
        Output size.
    interpolation : int, default 1
        OpenCV's interpolation, when resizing is needed.

    Examples
    --------
    >>> transforms.CenterCrop((1000, 500))(mx.nd.zeros((2321, 3482, 3), dtype="uint8")).shape
    (500, 1000, 3)
    """

    def __init__(self, size: Any, interpolation: int = 1) -> None:
        super().__init__()
        self._args = (_pair(size), interpolation)

    def forward(self, x: Any) -> Any:
        return image.center_crop(x, *self._args)[0]


class RandomApply(Sequential):
    """Applies ``transforms`` with probability ``p`` (Python's ``random``).

    Parameters
    ----------
    transforms : Block
        The transform (e.g. a ``Compose``).
    p : float, default 0.5
        Probability of applying it.
    """

    def __init__(self, transforms: Any, p: float = 0.5) -> None:
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x: Any) -> Any:
        if self.p < random.random():
            return x
        return self.transforms(x)
