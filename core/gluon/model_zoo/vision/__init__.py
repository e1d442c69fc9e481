"""``gluon.model_zoo.vision``: MXNet 1.9.1's image classification networks.

Each family module holds a table of its variants (depths, widths, versions) and builds
them all from it; ``get_model`` looks a network up by MXNet's name::

    from plexnet.gluon.model_zoo import vision
    net = vision.get_model("resnet50_v2", classes=10)
    net = vision.resnet18_v1(pretrained=True, root="/path/to/weights")

Parameter names equal MXNet's, so MXNet's ``.params`` files (and its pretrained weights,
``<name>-<sha1[:8]>.params`` under ``root``, default ``$MXNET_HOME/models``) load.
The pretrained networks expect RGB inputs of at least 224x224 (299x299 for
Inception V3) scaled to [0, 1] and normalised with mean (0.485, 0.456, 0.406) and std
(0.229, 0.224, 0.225), e.g. by ``transforms.Normalize`` or ``mx.image.color_normalize``.
"""
from __future__ import annotations

from typing import Any

from ...block import HybridBlock
from . import alexnet as _alexnet
from . import densenet as _densenet
from . import inception as _inception
from . import mobilenet as _mobilenet
from . import resnet as _resnet
from . import squeezenet as _squeezenet
from . import vgg as _vgg
from .alexnet import AlexNet, alexnet
from .densenet import DenseNet, densenet121, densenet161, densenet169, densenet201
from .inception import Inception3, inception_v3
from .mobilenet import (MobileNet, MobileNetV2, get_mobilenet, get_mobilenet_v2, mobilenet0_5, mobilenet0_25,
                        mobilenet0_75, mobilenet1_0, mobilenet_v2_0_5, mobilenet_v2_0_25, mobilenet_v2_0_75,
                        mobilenet_v2_1_0)
from .resnet import (BasicBlockV1, BasicBlockV2, BottleneckV1, BottleneckV2, ResNetV1, ResNetV2, get_resnet,
                     resnet18_v1, resnet18_v2, resnet34_v1, resnet34_v2, resnet50_v1, resnet50_v2, resnet101_v1,
                     resnet101_v2, resnet152_v1, resnet152_v2)
from .squeezenet import SqueezeNet, squeezenet1_0, squeezenet1_1
from .vgg import VGG, get_vgg, vgg11, vgg11_bn, vgg13, vgg13_bn, vgg16, vgg16_bn, vgg19, vgg19_bn

__all__ = ["AlexNet", "alexnet", "DenseNet", "densenet121", "densenet161", "densenet169", "densenet201", "Inception3",
           "inception_v3", "ResNetV1", "ResNetV2", "BasicBlockV1", "BasicBlockV2", "BottleneckV1",
           "BottleneckV2", "resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1", "resnet152_v1",
           "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2", "resnet152_v2", "get_resnet",
           "SqueezeNet", "squeezenet1_0", "squeezenet1_1", "VGG", "vgg11", "vgg13", "vgg16", "vgg19",
           "vgg11_bn", "vgg13_bn", "vgg16_bn", "vgg19_bn", "get_vgg", "MobileNet", "MobileNetV2",
           "mobilenet1_0", "mobilenet_v2_1_0", "mobilenet0_75", "mobilenet_v2_0_75", "mobilenet0_5",
           "mobilenet_v2_0_5", "mobilenet0_25", "mobilenet_v2_0_25", "get_mobilenet", "get_mobilenet_v2",
           "get_model"]

# MXNet's get_model names -> constructors, from each family's table
_MODELS = {name: make for family in (_resnet, _vgg, _alexnet, _densenet, _squeezenet, _inception, _mobilenet)
           for name, make in family.MODELS.items()}


def get_model(name: str, **kwargs: Any) -> HybridBlock:
    """The network called ``name`` (case-insensitive; e.g. 'resnet50_v1', 'vgg16_bn',
    'mobilenetv2_0.25', 'squeezenet1.1', 'inceptionv3').

    Parameters
    ----------
    name : str
        MXNet's model name.
    pretrained : bool, default False
        Load MXNet's pretrained weights from ``root``.
    classes : int
        Number of classes of the output layer.
    ctx : Context, default CPU
        The context the pretrained weights are loaded to.
    root : str, default '$MXNET_HOME/models'
        Directory holding the pretrained weights.

    Returns
    -------
    HybridBlock
        The network.
    """
    key = name.lower()
    if key not in _MODELS:
        raise ValueError("Model %s is not supported. Available options are\n\t%s"
                         % (key, "\n\t".join(sorted(_MODELS))))
    return _MODELS[key](**kwargs)
