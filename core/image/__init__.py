"""``plexnet.image`` (``mx.image``, ``mx.img``): MXNet 1.x's image API on OpenCV.

Functions (``imread``, ``imdecode``, ``imresize``, ``resize_short``, crops,
``color_normalize``, ``copyMakeBorder``, ``imrotate`` ...), the ``*Aug`` augmenters and
``CreateAugmenter``, ``ImageIter``; the detection augmenters, ``CreateDetAugmenter`` and
``ImageDetIter`` (also as ``mx.image.det``). See docs/io.md.
"""
from __future__ import annotations

from . import detection, image
from . import detection as det
from .detection import *  # noqa: F403
from .detection import __all__ as _det_all
from .image import *  # noqa: F403
from .image import __all__ as _img_all
from .image_iter import ImageIter

__all__ = list(_img_all) + list(_det_all) + ["ImageIter", "image", "detection", "det"]
