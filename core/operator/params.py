"""Typed parameter structs for operators (the ``dmlc::Parameter`` role).

Declare fields on a ``Params`` subclass::

    class ConvolutionParam(Params):
        kernel = Field(Shape, doc="convolution window")
        stride = Field(Shape, default=())
        num_filter = Field(int, low=1)
        no_bias = Field(bool, default=False)
        cudnn_tune = Field(str, default=None, optional=True, choices=("off", "limited_workspace", "fastest"))

``ConvolutionParam.parse("Convolution", {"kernel": "(3,3)", "num_filter": "8"})`` accepts
Python values or MXNet's strings (as stored in symbol JSON), applies defaults and ranges,
and raises ``ParamError`` naming the operator, the argument, the value and what is
allowed. ``to_strings()`` gives the MXNet string form back.
"""
from __future__ import annotations

import functools
import math
import numbers
from typing import Any, Callable, ClassVar, Iterable

import numpy as np

from ..base import PlexnetError

__all__ = ["Params", "Field", "Shape", "ParamError", "REQUIRED", "dmlc_float"]


@functools.lru_cache(maxsize=4096)
def dmlc_float(x: float, double: bool = False) -> float:
    """The value MXNet's operators see for the Python float ``x``: MXNet passes a
    parameter as ``str(x)`` and dmlc-core's ``ParseFloat<float>`` (``<double>`` for the
    few ``double`` fields) reads it back. That parser is not correctly rounded (the
    digits after the point go through ``double(val2) / double(10^k)``, then the float
    type, and an exponent scales in the float type), so for about one value in eight
    it lands one ulp off ``float32(x)``; MXNet's kernels compute with that value."""
    s = repr(float(x))
    f = np.float64 if double else np.float32
    if not math.isfinite(x):
        return float(f(x))
    neg = s.startswith("-")
    mant, _, exp = s.lstrip("-").partition("e")
    ip, _, fp = mant.partition(".")
    value = f(int(ip or "0"))
    if fp:
        fp = fp[:19]   # kStrtofMaxDigits
        value = f(value + f(float(int(fp)) / float(10 ** len(fp))))
    if exp:
        e = int(exp)
        frac, e = e < 0, min(abs(e), 308 if double else 38)
        scale = f(1)
        while e >= 8:
            scale, e = f(scale * f(1e8)), e - 8
        while e > 0:
            scale, e = f(scale * f(10)), e - 1
        value = f(value / scale) if frac else f(value * scale)
    return float(-value if neg else value)


class ParamError(PlexnetError, ValueError):
    """An operator argument is unknown, missing or invalid."""


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


#: longest attribute string parsed at all, and longest shape string / most dimensions:
#: a forged attribute is refused before it costs memory (ast-parsing a 4 MB tuple took 1.9 GB)
MAX_ATTR_CHARS = 1 << 20
MAX_SHAPE_CHARS = 4096
MAX_SHAPE_DIMS = 64


def _shape_item(tok: str) -> int | None:
    tok = tok.strip()
    if tok == "None":
        return None
    try:
        return int(tok)
    except ValueError:
        f = float(tok)  # "3.0" (older writers); ValueError for anything else
        if f != int(f):
            raise ValueError(f"not an integer: {tok!r}") from None
        return int(f)


class Shape(tuple):  # type: ignore[type-arg]  # a tuple of ints, built by __new__
    """A tuple of ints; parses ``"(2, 2)"``, ``"[2,2]"``, ``"2"``, ``2``, ``(2, 2)``.

    Strings longer than ``MAX_SHAPE_CHARS`` and more than ``MAX_SHAPE_DIMS`` dimensions are
    refused before any parsing, in constant memory."""

    def __new__(cls, v: Any = ()) -> "Shape":
        if isinstance(v, str):
            if len(v) > MAX_SHAPE_CHARS:
                raise ValueError(f"a shape string of {len(v)} characters is longer than the limit of "
                                 f"{MAX_SHAPE_CHARS} (plexnet.operator.params.MAX_SHAPE_CHARS)")
            s = v.strip()
            if s == "None":
                raise ValueError("not a shape: 'None'")
            if s[:1] in "([" and s[-1:] in ")]" and len(s) >= 2:
                s = s[1:-1].strip()
            toks = [t for t in s.split(",")]
            if toks and not toks[-1].strip():
                toks.pop()  # "(3,)"
            if len(toks) > MAX_SHAPE_DIMS:
                raise ValueError(f"{len(toks)} dimensions, more than the limit of {MAX_SHAPE_DIMS}")
            try:
                return super().__new__(cls, tuple(_shape_item(t) for t in toks))
            except ValueError:
                raise ValueError(f"not a shape: {v[:80]!r}") from None
        if isinstance(v, numbers.Integral) and not isinstance(v, bool):
            v = (int(v),)
        if hasattr(v, "__len__") and len(v) > MAX_SHAPE_DIMS:
            raise ValueError(f"{len(v)} dimensions, more than the limit of {MAX_SHAPE_DIMS}")
        try:
            items = tuple(int(x) if x is not None else None for x in v)
        except (TypeError, ValueError):
            raise ValueError(f"not a shape: {v!r:.80}") from None
        if len(items) > MAX_SHAPE_DIMS:
            raise ValueError(f"{len(items)} dimensions, more than the limit of {MAX_SHAPE_DIMS}")
        return super().__new__(cls, items)

    def __str__(self) -> str:
        return "(" + ", ".join(str(x) for x in self) + ("," if len(self) == 1 else "") + ")"


_TRUE = {"1", "true", "True", "TRUE", "yes"}
_FALSE = {"0", "false", "False", "FALSE", "no"}


def _parse_bool(v: Any) -> bool:
    if isinstance(v, str):
        if v in _TRUE:
            return True
        if v in _FALSE:
            return False
        raise ValueError(f"not a boolean: {v!r}")
    if isinstance(v, (bool, int)) or hasattr(v, "__bool__"):
        return bool(v)
    raise ValueError(f"not a boolean: {v!r}")


def _parse_int(v: Any) -> int:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, str):
        v = v.strip()
        f = float(v)
    else:
        f = float(v)
    if f != int(f):
        raise ValueError(f"not an integer: {v!r}")
    return int(f)


def _parse_float(v: Any) -> float:
    return float(v.strip() if isinstance(v, str) else v)


def _parse_str(v: Any) -> str:
    return v if isinstance(v, str) else str(v)


def _parse_dtype(v: Any) -> str:
    import numpy as np
    return str(np.dtype(v).name)


_PARSERS: dict[Any, Callable[[Any], Any]] = {
    bool: _parse_bool, int: _parse_int, float: _parse_float, str: _parse_str, Shape: Shape,
    "dtype": _parse_dtype,
}


class Field:
    """One typed argument: type, default, range, allowed values, doc."""

    def __init__(self, type: Any, default: Any = REQUIRED, *, low: float | None = None,
                 high: float | None = None, choices: Iterable[Any] | None = None,
                 optional: bool = False, doc: str = "", extra_choices: Iterable[Any] = ()) -> None:
        self.type = type
        self.parser = _PARSERS.get(type, type)
        self.default = default
        self.low, self.high = low, high
        self.choices = tuple(choices) if choices is not None else None
        #: values accepted beyond ``choices`` (plexnet extensions, e.g. MXNet 2.0 activations), left
        #: out of MXNet's description of the argument (``mx.operator.get_operator_arguments``)
        self.extra_choices = tuple(extra_choices)
        self.optional = optional or default is None
        self.doc = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def describe(self) -> str:
        t = getattr(self.type, "__name__", str(self.type))
        parts = [t]
        if self.choices:
            parts.append("one of " + ", ".join(repr(c) for c in self.choices))
        if self.low is not None:
            parts.append(f">= {self.low}")
        if self.high is not None:
            parts.append(f"<= {self.high}")
        if self.optional:
            parts.append("or None")
        return ", ".join(parts)

    def parse(self, op: str, value: Any) -> Any:
        if value is None or (self.optional and isinstance(value, str) and value in ("None", "")):
            if self.optional:
                return None
            raise ParamError(f"{op}: argument {self.name!r} must not be None (expected {self.describe()})")
        if isinstance(value, str) and len(value) > MAX_ATTR_CHARS:
            raise ParamError(f"{op}: the value for argument {self.name!r} is {len(value)} characters long, over "
                             f"the limit of {MAX_ATTR_CHARS} (plexnet.operator.params.MAX_ATTR_CHARS)")
        try:
            v = self.parser(value)
        except (TypeError, ValueError, SyntaxError) as e:
            shown = value if not isinstance(value, str) or len(value) <= 80 else value[:80] + "..."
            raise ParamError(f"{op}: invalid value {shown!r} for argument {self.name!r}: {e} "
                             f"(expected {self.describe()})") from None
        if self.choices is not None and v not in self.choices and v not in self.extra_choices:
            raise ParamError(f"{op}: invalid value {value!r} for argument {self.name!r}; "
                             f"allowed: {', '.join(repr(c) for c in self.choices)}")
        if self.low is not None and v < self.low or self.high is not None and v > self.high:
            raise ParamError(f"{op}: value {value!r} for argument {self.name!r} is out of range "
                             f"[{self.low if self.low is not None else '-inf'}, "
                             f"{self.high if self.high is not None else 'inf'}]")
        return v


class Params:
    """Base class of parameter structs; subclasses declare ``Field`` attributes."""

    _fields: ClassVar[dict[str, Field]] = {}
    #: ignore keyword arguments that are not fields (MXNet's ``InitAllowUnknown``, used by
    #: a few operators such as the regression outputs) instead of refusing them
    allow_unknown: ClassVar[bool] = False

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        fields: dict[str, Field] = {}
        for base in reversed(cls.__mro__):
            for k, v in vars(base).items():
                if isinstance(v, Field):
                    fields[k] = v
        # ``field_order``: the fields' order where inheritance cannot give MXNet's
        # declaration order (it is the order of positional parameters, see calling.py)
        order = [k for k in getattr(cls, "field_order", ()) if k in fields]
        cls._fields = {**{k: fields[k] for k in order}, **fields}

    @classmethod
    def parse(cls, op: str, kwargs: dict[str, Any] | None = None, *,
              ignore: Iterable[str] = ()) -> "Params":
        """Build an instance from keyword arguments (values or MXNet strings)."""
        kwargs = dict(kwargs or {})
        skip = set(ignore)
        obj = cls.__new__(cls)
        unknown = [k for k in kwargs if k not in cls._fields and k not in skip]
        if unknown and not cls.allow_unknown:
            allowed = ", ".join(sorted(cls._fields)) or "none"
            raise ParamError(f"{op}: unknown argument(s) {', '.join(map(repr, unknown))}; "
                             f"allowed: {allowed}")
        for name, f in cls._fields.items():
            if name in kwargs:
                val = f.parse(op, kwargs[name])
            elif f.default is REQUIRED:
                raise ParamError(f"{op}: required argument {name!r} is missing "
                                 f"(expected {f.describe()})")
            else:
                val = f.default
            object.__setattr__(obj, name, val)
        obj.__post_init__(op)
        return obj

    def __post_init__(self, op: str) -> None:
        """Hook for cross-field checks; raise ``ParamError`` naming ``op``."""

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self._fields}

    def to_strings(self) -> dict[str, str]:
        """MXNet's string form of every field (symbol JSON ``attrs``)."""
        return {k: ("None" if v is None else str(v)) for k, v in self.to_dict().items()}

    def key(self) -> tuple[Any, ...]:
        return tuple((k, v) for k, v in self.to_dict().items())

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash((type(self), self.key()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.to_dict().items())})"

    @classmethod
    def doc(cls) -> str:
        return "\n".join(f"{n} : {f.describe()}" + (f" = {f.default!r}" if f.default is not REQUIRED else "")
                         + (f"\n    {f.doc}" if f.doc else "") for n, f in cls._fields.items())
