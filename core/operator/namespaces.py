"""Operator sub-namespaces: ``nd.linalg``, ``nd.image``, ``nd.contrib`` (and ``sym.*``).

MXNet registers operator families under name prefixes and its Python front end strips
them into sub-modules: ``_linalg_gemm`` is ``mx.nd.linalg.gemm``, ``_image_resize`` is
``mx.nd.image.resize``, ``_contrib_box_nms`` is ``mx.nd.contrib.box_nms``. This module
does the same from the operator registry, so a third-party plugin that registers
``_contrib_myop`` shows up as ``nd.contrib.myop`` and ``sym.contrib.myop`` with no
further code. A namespace may also take MXNet's Python-level functions from a module
(``extras_module``: ``nd.contrib.foreach``, ``isfinite`` ...), which win over operators.
``_random_*`` / ``_sample_*`` operators are reached through the
hand-written ``nd.random`` / ``sym.random`` modules (MXNet dispatches there on whether
the distribution parameters are arrays).

The flat names MXNet also exports (``nd.linalg_gemm``, ``nd.random_uniform``,
``nd.sample_normal``, ``nd.random_pdf_normal``) resolve to the prefixed operator with
:func:`flat_name`.
"""
from __future__ import annotations

import sys
import types
from typing import Any, Callable, Iterable

from ..registry import registries
from .hints import missing_fluent_message, providing_distribution
from .registry import OperatorNotFound

__all__ = ["PREFIXES", "FLAT_PREFIXES", "OpNamespace", "namespace", "flat_name", "names_with_prefix", "prefixed_op",
           "RANDOM_PARAMS", "LIKE_DISTRIBUTIONS"]

#: sub-namespace -> operator name prefixes (first match wins)
PREFIXES: dict[str, tuple[str, ...]] = {
    "linalg": ("_linalg_",),
    "image": ("_image_",),
    "contrib": ("_contrib_",),
    "random": ("_random_", "_sample_"),
}

#: flat names that stand for ``"_" + name`` (MXNet's ``add_alias("linalg_gemm")`` etc.)
FLAT_PREFIXES: tuple[str, ...] = ("linalg_", "random_", "sample_")


#: the scalar parameters of MXNet's ``_random_<dist>`` operators, in positional order
RANDOM_PARAMS: dict[str, tuple[str, ...]] = {
    "_random_uniform": ("low", "high"), "_random_normal": ("loc", "scale"), "_random_poisson": ("lam",),
    "_random_exponential": ("lam",), "_random_gamma": ("alpha", "beta"), "_random_negative_binomial": ("k", "p"),
    "_random_generalized_negative_binomial": ("mu", "alpha"), "_random_randint": ("low", "high"),
}

#: distributions with a ``_random_<dist>_like`` operator (``nd.random.<dist>_like``)
LIKE_DISTRIBUTIONS: tuple[str, ...] = ("uniform", "normal", "gamma", "exponential", "poisson", "negative_binomial",
                                       "generalized_negative_binomial")


def _registry() -> Any:
    return registries().operators


def names_with_prefix(prefixes: Iterable[str]) -> list[str]:
    """Registered operator names under ``prefixes``, with the prefix stripped."""
    prefixes = tuple(prefixes)
    out = set()
    for op in _registry():
        for p in prefixes:
            if op.startswith(p) and len(op) > len(p):
                out.add(op[len(p):])
                break
    return sorted(out)


def flat_name(name: str) -> str | None:
    """The registered operator behind a flat MXNet name (``linalg_gemm`` ->
    ``_linalg_gemm``), or ``None`` when ``name`` is not such a name."""
    if name.startswith(FLAT_PREFIXES):
        op = "_" + name
        if op in _registry():
            return op
    return None


def prefixed_op(lookup: Callable[[str], Any], sub: str, name: str) -> Any | None:
    """``lookup(prefix + name)`` for the first of ``sub``'s prefixes that has an operator."""
    if name.startswith("__"):
        return None
    for p in PREFIXES[sub]:
        fn = lookup(p + name)
        if fn is not None:
            return fn
    return None


class OpNamespace(types.ModuleType):
    """A module whose attributes are the operators under some name prefixes.

    ``lookup(op_name)`` returns the front-end function of a registered operator (``nd`` or
    ``sym`` flavour) or ``None``; ``extras`` are plain Python functions of the namespace
    (they win over operators of the same name)."""

    def __init__(self, fullname: str, prefixes: tuple[str, ...], lookup: Callable[[str], Any],
                 extras: dict[str, Any] | None = None, doc: str | None = None,
                 extras_module: str | None = None) -> None:
        super().__init__(fullname, doc)
        self._prefixes = prefixes
        self._lookup = lookup
        self._extras = dict(extras or {})
        self._extras_module = extras_module

    def _python_functions(self) -> dict[str, Any]:
        """``extras`` plus the ``__all__`` of ``extras_module`` (imported on first use):
        MXNet's Python-level functions of the namespace (``contrib.foreach`` ...)."""
        if self._extras_module is not None:
            import importlib
            mod = importlib.import_module(self._extras_module)
            self._extras.update({n: getattr(mod, n) for n in mod.__all__ if n not in self._extras})
            self._extras_module = None
        return self._extras

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        extra = self._python_functions().get(name)
        if extra is not None:
            return extra
        for p in self._prefixes:
            fn = self._lookup(p + name)
            if fn is not None:
                return fn
        for p in self._prefixes:  # a standard operator whose plugin is not installed: name it
            if providing_distribution(p + name) is not None:
                raise OperatorNotFound(missing_fluent_message(f"{self.__name__}.{name}", p + name))
        raise AttributeError(f"{self.__name__} has no operator {name!r} (registered names here: "
                             f"{', '.join(self.__dir__()[:12]) or 'none'}{' ...' if len(self.__dir__()) > 12 else ''}; "
                             f"is the plugin that provides it installed? `plexnet plugins` lists what is)")

    def __dir__(self) -> list[str]:
        return sorted(set(names_with_prefix(self._prefixes)) | set(self._python_functions()))


_namespaces: dict[tuple[str, str], OpNamespace] = {}


def namespace(parent: str, sub: str, lookup: Callable[[str], Any],
              extras: dict[str, Any] | None = None, extras_module: str | None = None) -> OpNamespace:
    """The (cached) ``<parent>.<sub>`` namespace, e.g. ``namespace("plexnet.ndarray",
    "linalg", nd.op_function)``; it is also entered in ``sys.modules`` so that
    ``from plexnet.ndarray import linalg`` and ``import plexnet.ndarray.linalg`` work."""
    key = (parent, sub)
    ns = _namespaces.get(key)
    if ns is None:
        ns = OpNamespace(f"{parent}.{sub}", PREFIXES[sub], lookup, extras,
                         f"MXNet's ``{sub}`` operators (registered as ``{PREFIXES[sub][0]}*``).", extras_module)
        _namespaces[key] = ns
        sys.modules.setdefault(ns.__name__, ns)
    return ns
