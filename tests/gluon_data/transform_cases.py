"""Vision transform cases run the same way under MXNet (fixture generator) and plexnet
(tests): ``CASES[name](T)`` builds the transform from a ``transforms`` module,
``INPUT[name]`` says which input it gets; ``SEEDED`` cases reseed Python's and
numpy's generators first (the only randomness they use)."""
from __future__ import annotations

import numpy as np


def image() -> np.ndarray:
    rng = np.random.RandomState(3)
    return rng.randint(0, 256, (13, 17, 3)).astype(np.uint8)


CASES = {
    "to_tensor": lambda T: T.ToTensor(),
    "normalize": lambda T: T.Normalize(mean=(0.2, 0.4, 0.6), std=(0.5, 0.25, 0.2)),
    "normalize_scalar": lambda T: T.Normalize(0.3, 0.7),
    "cast": lambda T: T.Cast("float16"),
    "resize_int": lambda T: T.Resize(9),
    "resize_tuple": lambda T: T.Resize((11, 7)),
    "resize_keep": lambda T: T.Resize(8, keep_ratio=True),
    "resize_nearest": lambda T: T.Resize((20, 30), interpolation=0),
    "resize_bicubic": lambda T: T.Resize((20, 30), interpolation=2),
    "resize_area": lambda T: T.Resize((6, 5), interpolation=3),
    "center_crop": lambda T: T.CenterCrop(9),
    "center_crop_big": lambda T: T.CenterCrop((20, 16)),
    "crop_resize": lambda T: T.CropResize(2, 3, 10, 8),
    "crop_resize_size": lambda T: T.CropResize(2, 3, 10, 8, size=(5, 6), interpolation=1),
    "rotate": lambda T: T.Rotate(30),
    "rotate_zoom_in": lambda T: T.Rotate(-45, zoom_in=True),
    "rotate_zoom_out": lambda T: T.Rotate(60, zoom_out=True),
    "random_rotation": lambda T: T.RandomRotation((-40, 40), rotate_with_proba=1.0),
    "random_resized_crop": lambda T: T.RandomResizedCrop(7),
    "random_resized_crop_ratio": lambda T: T.RandomResizedCrop((8, 6), scale=(0.3, 0.9), ratio=(0.5, 2.0)),
    "compose": lambda T: T.Compose([T.Resize(12), T.CenterCrop(10), T.ToTensor(),
                                    T.Normalize((0.5, 0.5, 0.5), (0.2, 0.2, 0.2))]),
}
# the input each case takes: "img" uint8 HWC, "chw" float32 CHW in [0, 1], "chw_batch" (2, C, H, W)
INPUT = {"normalize": "chw", "normalize_scalar": "chw", "rotate": "chw", "rotate_zoom_in": "chw_batch",
         "rotate_zoom_out": "chw", "random_rotation": "chw"}
SEEDED = {"random_rotation", "random_resized_crop", "random_resized_crop_ratio"}


# the hybrid transforms whose traced graphs (operators and attributes) are compared
HYBRID = {
    "to_tensor": lambda T: T.ToTensor(),
    "normalize": lambda T: T.Normalize((0.2, 0.4, 0.6), (0.5, 0.25, 0.2)),
    "cast": lambda T: T.Cast("float16"),
    "resize": lambda T: T.Resize((11, 7), True, 2),
    "crop_resize": lambda T: T.CropResize(2, 3, 10, 8, size=(5, 6), interpolation=1),
    "crop_only": lambda T: T.CropResize(2, 3, 10, 8),
    "flip_lr": lambda T: T.RandomFlipLeftRight(),
    "flip_tb": lambda T: T.RandomFlipTopBottom(),
    "brightness": lambda T: T.RandomBrightness(0.3),
    "contrast": lambda T: T.RandomContrast(1.5),
    "saturation": lambda T: T.RandomSaturation(0.2),
    "hue": lambda T: T.RandomHue(0.1),
    "jitter": lambda T: T.RandomColorJitter(0.1, 0.2, 0.3, 0.4),
    "lighting": lambda T: T.RandomLighting(0.1),
}


def structure(T, mx) -> dict:
    """How the transforms are built: the traced graph of each HYBRID case (operators and
    attributes; node names left out) and the child tree of a Compose (class, whether
    hybridized) and of a RandomApply."""
    import json

    def tree(b):
        return [type(b).__name__, getattr(b, "_active", None), [tree(c) for c in b._children.values()]]

    out = {}
    for name, make in HYBRID.items():
        g = json.loads(make(T)(mx.sym.var("data")).tojson())
        out[name] = [[n["op"], n.get("attrs", {})] for n in g["nodes"]]
    out["compose"] = tree(T.Compose([T.Resize(12), T.CenterCrop(10), T.ToTensor(), T.Normalize((0.5,) * 3, (0.2,) * 3),
                                     T.Cast("float16"), T.RandomApply(T.ToTensor(), 0.3), T.RandomFlipLeftRight()]))
    out["random_apply"] = tree(T.RandomApply(T.Compose([T.ToTensor()]), 0.2))
    return out


def make_input(kind: str, nd):
    img = image()
    if kind == "img":
        return nd.array(img, dtype="uint8")
    chw = img.transpose(2, 0, 1).astype(np.float32) / 255
    if kind == "chw":
        return nd.array(chw)
    return nd.array(np.stack([chw, chw[:, ::-1, :]]))
