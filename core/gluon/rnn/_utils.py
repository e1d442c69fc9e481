"""Small helpers of MXNet's ``base`` that the recurrent cells use."""
from __future__ import annotations

from typing import Any

import numpy as np

string_types = (str,)
numeric_types = (float, int, np.generic)


def _as_list(obj: Any) -> list:
    """``obj`` itself when it is a list, else ``[obj]``."""
    return obj if isinstance(obj, list) else [obj]


def state_func(func: Any, **info: Any) -> Any:
    """Call a begin-state function; plexnet's NDArray creators reject the symbol
    attributes (``__layout__``) that MXNet's silently ignore."""
    if getattr(func, "__module__", "").startswith("plexnet.ndarray"):
        info = {k: v for k, v in info.items() if not (k.startswith("__") and k.endswith("__"))}
    return func(**info)
