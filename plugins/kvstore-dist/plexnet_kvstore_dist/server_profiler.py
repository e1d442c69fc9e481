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
    profiler; ``state`` keeps whether this server's file name was set. Returns the
    written file's name for ``dump``, else ``""``."""
    msg = json.loads(body)
    call, kwargs = msg.get("call"), dict(msg.get("kwargs") or {})
    if call not in _CALLS:
        raise ValueError(f"server profiler: unknown call {call!r} (known: {', '.join(_CALLS)})")
    if call == "set_config" or not state.get("named"):
        base = kwargs.pop("filename", None) if call == "set_config" else None
        name = server_filename(base or state.get("base", "profile.json"), server_id)
        state.update(named=True, base=base or state.get("base", "profile.json"))
        profiler.set_config(filename=name, **(kwargs if call == "set_config" else {}))
        if call == "set_config":
            return ""
    if call == "set_state":
        profiler.set_state(kwargs["state"])
    elif call == "pause":
        profiler.pause()
    elif call == "resume":
        profiler.resume()
    elif call == "dump":
        return profiler.dump(bool(kwargs.get("finished", True)))
    return ""
