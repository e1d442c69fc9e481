"""Parameter structs and shape checks shared by Convolution and Deconvolution."""
from __future__ import annotations

from typing import Any

from plexnet.operator import Field, ParamError, Params, Shape

LAYOUTS = ("NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC")
CUDNN_TUNE = ("off", "limited_workspace", "fastest")


class ConvParamBase(Params):
    kernel = Field(Shape, doc="convolution kernel size: (w,), (h, w) or (d, h, w)")
    stride = Field(Shape, default=Shape(()), doc="stride; default 1 per axis")
    dilate = Field(Shape, default=Shape(()), doc="dilation; default 1 per axis")
    pad = Field(Shape, default=Shape(()), doc="zero padding per side; default 0")
    num_filter = Field(int, low=1, high=100000, doc="number of output channels")
    num_group = Field(int, default=1, low=1, doc="number of groups")
    workspace = Field(int, default=1024, low=0, doc="workspace limit in MB (ignored by the xp implementation)")
    cudnn_tune = Field(str, default=None, optional=True, choices=CUDNN_TUNE)
    cudnn_off = Field(bool, default=False)
    layout = Field(str, default=None, optional=True, choices=LAYOUTS)

    def __post_init__(self, op: str) -> None:
        nd = len(self.kernel)
        if nd not in (1, 2, 3):
            raise ParamError(f"{op}: kernel must have 1, 2 or 3 dimensions, got {self.kernel}")
        if any(k < 1 for k in self.kernel):
            raise ParamError(f"{op}: kernel sizes must be >= 1, got {self.kernel}")
        for name, default, low in (("stride", 1, 1), ("dilate", 1, 1), ("pad", 0, 0)):
            v = getattr(self, name)
            if len(v) == 0:
                v = Shape((default,) * nd)
            elif len(v) != nd:
                raise ParamError(f"{op}: {name} {tuple(v)} must have as many dimensions as kernel {tuple(self.kernel)}")
            if any(a < low for a in v):
                raise ParamError(f"{op}: {name} values must be >= {low}, got {tuple(v)}")
            object.__setattr__(self, name, Shape(v))
        if self.layout is not None and len(self.layout) != nd + 2:
            raise ParamError(f"{op}: layout {self.layout!r} does not fit a {nd}-d kernel")

    def channels_last(self) -> bool:
        return self.layout is not None and not self.layout.startswith("NC")


def unsupported_layout(op: str, p: Any) -> NotImplementedError:
    return NotImplementedError(f"{op}: layout {p.layout!r} is not supported by the xp implementation "
                               f"(use channels-first {'NCW NCHW NCDHW'.split()[len(p.kernel) - 1]!r})")
