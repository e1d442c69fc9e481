"""Name registries for ``contrib.text.embedding`` (the part of MXNet's ``mxnet.registry``
that it uses: ``plexnet.registry`` is the plugin registry and has no such helpers)."""
from __future__ import annotations

import json
import warnings
from typing import Any, Callable

_REGISTRY: dict[type, dict[str, type]] = {}


def get_registry(base_class: type) -> dict[str, type]:
    """A copy of the name -> class table of ``base_class``."""
    return dict(_REGISTRY.setdefault(base_class, {}))


def get_register_func(base_class: type, nickname: str) -> Callable[..., Any]:
    """``register(klass, name=None)``: file ``klass`` under ``name`` (lower-cased, default
    its class name); usable as a decorator."""
    table = _REGISTRY.setdefault(base_class, {})

    def register(klass: type, name: str | None = None) -> type:
        assert issubclass(klass, base_class), f"Can only register subclass of {base_class.__name__}"
        key = (name or klass.__name__).lower()
        if key in table and table[key] is not klass:
            warnings.warn(f"New {nickname} {klass.__module__}.{klass.__name__} registered with name {key} is "
                          f"overriding existing {nickname} {table[key].__module__}.{table[key].__name__}",
                          stacklevel=2)
        table[key] = klass
        return klass

    register.__doc__ = f"Register {nickname} to the {nickname} factory"
    return register


def get_create_func(base_class: type, nickname: str) -> Callable[..., Any]:
    """``create(name, *args, **kwargs)``: an instance of the class registered as ``name``
    (an instance of ``base_class`` is returned as it is; a dict or a JSON string is a
    config, as MXNet's ``registry``)."""
    table = _REGISTRY.setdefault(base_class, {})

    def create(*args: Any, **kwargs: Any) -> Any:
        if args:
            name, args = args[0], args[1:]
        else:
            name = kwargs.pop(nickname)
        if isinstance(name, base_class):
            assert not args and not kwargs, \
                f"{nickname} is already an instance. Additional arguments are invalid"
            return name
        if isinstance(name, dict):
            return create(**name)
        assert isinstance(name, str), f"{nickname} must be of string type"
        if name.startswith(("[", "{")):   # a JSON config: '["name", {kwargs}]' or '{kwargs}'
            assert not args and not kwargs, f"{nickname}: a JSON config takes no further arguments"
            config = json.loads(name)
            return create(config[0], **config[1]) if isinstance(config, list) else create(**config)
        key = name.lower()
        assert key in table, f"{name} is not registered. Please register with {nickname}.register first"
        return table[key](*args, **kwargs)

    create.__doc__ = f"Create a {nickname} instance from config."
    return create
