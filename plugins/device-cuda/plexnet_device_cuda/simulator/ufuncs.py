"""``cupy.ufunc`` of the simulator: numpy's ufunc on the data, CuPy's rules (device
arrays and scalars only, ``out=`` must be a device array, the ufunc methods CuPy
supports for each ufunc)."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from . import runtime
from .arrays import kernel_result, ndarray, unwrap
from .errors import unsupported
from .functions import asarray
from .snapshot import UFUNC_SUPPORT


class ufunc:
    """A CuPy ufunc of the simulator (numpy's ufunc on the data, CuPy's rules)."""

    def __init__(self, name: str, npu: Any, nin: int, nout: int) -> None:
        self.__name__ = name
        self.name = f"cupy_{name}"
        self._np = npu
        self.nin = nin
        self.nout = nout
        self.nargs = nin + nout
        self.__doc__ = f"{name}: CuPy ufunc, simulated on the host with numpy.{npu.__name__}"

    def __repr__(self) -> str:
        return f"<ufunc '{self.name}'>"

    @property
    def types(self) -> list[str]:
        return list(self._np.types)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        out = kwargs.pop("out", None)
        dtype = kwargs.pop("dtype", None)
        casting = kwargs.pop("casting", None)
        if kwargs:
            raise TypeError("Wrong arguments %s" % kwargs)
        n = len(args)
        if not self.nin <= n <= self.nargs:
            raise TypeError(f"Wrong number of arguments for {self.name!r}. It must be either {self.nin} or "
                            f"{self.nargs} (with outputs), but given {n}.")
        reads: list[ndarray] = []
        uin = []
        for a in args[:self.nin]:
            if type(a) is ndarray:
                reads.append(a)
                uin.append(a._a)
            elif isinstance(a, (numbers.Number, np.generic)):
                uin.append(a)
            else:
                raise unsupported(a)
        outs = args[self.nin:]
        if out is not None:
            if outs:
                raise ValueError("Cannot specify 'out' as both a positional and keyword argument")
            outs = out if isinstance(out, tuple) else (out,)
        writes: list[ndarray] = []
        uout = None
        if outs:
            uout = []
            for o in outs:
                if o is None:
                    uout.append(None)
                elif type(o) is ndarray:
                    writes.append(o)
                    uout.append(o._a)
                else:
                    raise TypeError("Output arguments type must be cupy.ndarray")
            uout = tuple(uout)
        kw: dict[str, Any] = {}
        if uout is not None:
            kw["out"] = uout
        if dtype is not None:
            kw["dtype"] = dtype
        if casting is not None:
            kw["casting"] = casting
        with np.errstate(all="ignore"):  # CuPy kernels never warn about nan/inf
            r = self._np(*uin, **kw)
        return kernel_result(runtime.RT, self.__name__, r, reads, writes)

    def _supported(self, method: str) -> None:
        if self.__name__ not in UFUNC_SUPPORT.get(method, ()):
            raise NotImplementedError(f"`{self.name}.{method}` is not supported yet")

    def reduce(self, array: Any, axis: Any = 0, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Any:
        self._supported("reduce")
        if not isinstance(array, ndarray):
            raise unsupported(array)
        return (array.sum if self.__name__ == "add" else array.prod)(axis, dtype, out, keepdims)

    def accumulate(self, array: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Any:
        self._supported("accumulate")
        if not isinstance(array, ndarray):
            raise unsupported(array)
        return (array.cumsum if self.__name__ == "add" else array.cumprod)(axis, dtype, out)

    def reduceat(self, array: Any, indices: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Any:
        self._supported("reduceat")
        if not isinstance(array, ndarray):
            raise unsupported(array)
        reads: list[ndarray] = [array]
        idx = unwrap(indices, reads, True)
        writes = [out] if isinstance(out, ndarray) else []
        r = np.add.reduceat(array._a, idx, axis=axis, dtype=dtype, out=out._a if writes else None)
        return kernel_result(runtime.RT, f"{self.__name__}.reduceat", r, reads, writes)

    def outer(self, A: Any, B: Any, **kwargs: Any) -> Any:
        A = asarray(A)  # CuPy: core.array(A) (a host array is copied to the device)
        B = asarray(B)
        return self(A.reshape(A.shape + (1,) * B.ndim), B.reshape((1,) * A.ndim + B.shape), **kwargs)

    def at(self, a: Any, indices: Any, b: Any = None) -> None:
        self._supported("at")
        if not isinstance(a, ndarray):
            raise AttributeError(f"'{type(a).__name__}' object has no attribute '_scatter_op'")
        reads: list[ndarray] = []
        idx = unwrap(indices, reads, True)
        v = unwrap(b, reads, True)  # CuPy: core.array(value) (host values are copied)
        self._np.at(a._a, idx, v)
        runtime.RT.kernel(f"{self.__name__}.at", reads, [a], [])

