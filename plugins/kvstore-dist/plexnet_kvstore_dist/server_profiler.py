"""The profiler calls a worker sends its servers (MXNet's ``profile_process='server'``).

``mx.profiler.set_config / set_state / pause / resume / dump(profile_process='server')``
reach every server as one command (``plexnet.profiler.SERVER_COMMAND``, a JSON body
naming the call); each server runs it on the profiler of its own process, so the trace
shows the server's engine work (its optimizer updates). Each server writes its own file:
``rank<server>_<name>`` beside the configured file name, so servers and the worker never
overwrite each other's trace.
"""
from __future__ import annotations

import json
import os
from typing import Any

from plexnet import profiler

_CALLS = ("set_config", "set_state", "pause", "resume", "dump")


def server_filename(name: str, server_id: int) -> str:
    """``dir/rank<server_id>_base`` for the worker's configured ``dir/base``."""
    folder, base = os.path.split(name)
    return os.path.join(folder, f"rank{server_id}_{base}")


def run(body: str, server_id: int, state: dict[str, Any]) -> str:
    """Run one profiler call (``{"call": ..., "kwargs": {...}}``) on this server's
    profiler; ``state["base"]`` keeps the worker's file name. Returns the written file's
    name for ``dump``, else ``""``."""
    msg = json.loads(body)
    call, kwargs = msg.get("call"), dict(msg.get("kwargs") or {})
    if call not in _CALLS:
        raise ValueError(f"server profiler: unknown call {call!r} (known: {', '.join(_CALLS)})")
    if call == "set_config":
        state["base"] = kwargs.pop("filename", state.get("base", "profile.json"))
        profiler.set_config(filename=server_filename(state["base"], server_id), **kwargs)
        return ""
    if "base" not in state:      # no set_config came: the server's file still gets its prefix
        state["base"] = "profile.json"
        profiler.set_config(filename=server_filename(state["base"], server_id))
    if call == "set_state":
        profiler.set_state(kwargs["state"])
    elif call == "pause":
        profiler.pause()
    elif call == "resume":
        profiler.resume()
    else:
        return profiler.dump(bool(kwargs.get("finished", True)))
    return ""
