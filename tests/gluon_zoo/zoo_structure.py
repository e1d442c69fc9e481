"""What a freshly built model-zoo network must share with MXNet 1.9.1's, recorded by
the fixture generator (with mxnet) and checked by the tests (with plexnet): the full
parameter names in `collect_params()` order with their declared shapes (before any
inference), initializers, grad_req and dtype, and the graph traced from a Symbol
input (operators, node names, inputs, attributes)."""
from __future__ import annotations

import inspect
import json
from typing import Any


def _wrapped(vision: Any, mx: Any, make: Any) -> Any:
    # a residual unit creates its layers in the enclosing scope (MXNet's global names
    # otherwise, which depend on what the process built before)
    seq = mx.gluon.nn.HybridSequential(prefix="t_")
    with seq.name_scope():
        seq.add(make(vision))
    return seq


# non-default arguments and the building blocks on their own: label -> builder(vision, mx)
EXTRA_CASES: dict[str, Any] = {
    "resnet18_v1_thumbnail": lambda v, mx: v.get_resnet(1, 18, thumbnail=True, classes=10),
    "resnet50_v2_thumbnail": lambda v, mx: v.get_resnet(2, 50, thumbnail=True, classes=10),
    "resnetv1_custom": lambda v, mx: v.ResNetV1(v.BottleneckV1, [1, 2], [16, 64, 128], classes=3),
    "resnetv2_custom": lambda v, mx: v.ResNetV2(v.BasicBlockV2, [2, 1, 1], [8, 8, 16, 32], classes=3),
    "basicblockv1": lambda v, mx: _wrapped(v, mx, lambda v: v.BasicBlockV1(64, 2, True, in_channels=32)),
    "basicblockv2": lambda v, mx: _wrapped(v, mx, lambda v: v.BasicBlockV2(64, 1, False)),
    "bottleneckv1": lambda v, mx: _wrapped(v, mx, lambda v: v.BottleneckV1(256, 2, True, in_channels=64)),
    "bottleneckv2": lambda v, mx: _wrapped(v, mx, lambda v: v.BottleneckV2(256, 2, True, in_channels=64)),
    "densenet_dropout": lambda v, mx: v.DenseNet(16, 8, [2, 3], bn_size=2, dropout=0.2, classes=5),
    "vgg_custom": lambda v, mx: v.VGG([1, 2], [8, 16], classes=4, batch_norm=True),
    "vgg16_bn_forced": lambda v, mx: v.vgg16_bn(batch_norm=False, classes=7),
    "mobilenet_0.6": lambda v, mx: v.MobileNet(0.6, classes=5),
    "mobilenetv2_1.5": lambda v, mx: v.get_mobilenet_v2(1.5, classes=5),
    "squeezenet1.0_classes": lambda v, mx: v.squeezenet1_0(classes=10, prefix="sq_"),
}


def _strip(name: str, prefix: str) -> str:
    return name[len(prefix):] if name.startswith(prefix) else name


def _init(init: Any) -> str | None:
    if init is None or isinstance(init, str):
        return init
    return init.dumps()


def structure(net: Any, mx: Any) -> dict:
    """The network's structure with its own prefix removed from every name."""
    pre = net.prefix
    params = net.collect_params()
    graph = json.loads(net(mx.sym.var("data")).tojson())
    nodes = []
    for node in graph["nodes"]:
        attrs = dict(node.get("attrs", {}))
        attrs.pop("__storage_type__", None)    # plexnet has dense storage only
        nodes.append([node["op"], _strip(node["name"], pre), [i[0] for i in node["inputs"]], attrs])
    return {
        "params": [[_strip(k, pre), list(p.shape), _init(p.init), p.grad_req, str(p.dtype)]
                   for k, p in params.items()],
        "nodes": nodes,
        "heads": [h[0] for h in graph["heads"]],
    }


def signatures(vision: Any, names: list[str] | None = None) -> dict:
    """Parameter names, kinds and defaults of ``names`` (default: every public callable)
    of ``vision``; ``root``'s default depends on $MXNET_HOME and is left out."""
    if names is None:
        names = [n for n in dir(vision) if not n.startswith("_") and callable(getattr(vision, n))]
    out = {}
    for name in sorted(names):
        obj = getattr(vision, name)
        sig = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj)
        out[name] = [[p.name, p.kind.name, None if p.name == "root" or p.default is p.empty else repr(p.default)]
                     for p in sig.parameters.values()]
    return out
