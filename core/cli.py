"""The ``plexnet`` command line.

Every subcommand is a ``main(argv: list[str]) -> int | None`` function, named by a
``"module:function"`` string and imported only when the subcommand runs, so that
``plexnet plugins`` works even where an optional part is missing or broken::

    plexnet plugins [--json] [-o FILE] [-v] [--check]   what is installed, what failed and why
    plexnet demo ...                                    plexnet.demo:main
    plexnet launch ...                                  plexnet_kvstore_dist.launch:main
    plexnet im2rec ... / plexnet rec2idx ...            plexnet.tools.im2rec:main / .rec2idx:main

Conventions (``python -m plexnet`` is the same command): ``-V``/``--version``; ``--json``
always means JSON on stdout and nothing else there; files are written through
``-o``/``--output``; exit status as pip's: 0 success, 1 an error (including a command
whose plugin is not installed), 2 a usage error (unknown command, bad arguments).

Another module adds a subcommand with ``register_subcommand``; an installed
distribution can also declare one in the entry-point group ``plexnet.commands``
(``launch = "plexnet_kvstore_dist.launch:main"``). A subcommand whose module cannot be
imported gives a clear message (what to install, or the import error) and exit status 1.
"""
from __future__ import annotations

import argparse
import difflib
import importlib
import json
import shutil
import sys
import textwrap
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Callable, Sequence, Union

__all__ = ["main", "register_subcommand", "subcommands", "Subcommand", "CommandUnavailable",
           "plugins_report", "COMMANDS_ENTRY_POINT_GROUP", "SUCCESS", "ERROR", "USAGE_ERROR"]

COMMANDS_ENTRY_POINT_GROUP = "plexnet.commands"

#: exit statuses (pip's)
SUCCESS, ERROR, USAGE_ERROR = 0, 1, 2

MainFn = Callable[[list], Union[int, None]]


class CommandUnavailable(Exception):
    """A subcommand's module is not installed or fails to import."""


@dataclass
class Subcommand:
    """One ``plexnet NAME`` command: ``target`` is ``"module:function"`` (imported when it
    runs) or the function itself; ``install_hint`` says what to install if the module is
    missing."""

    name: str
    target: Union[str, MainFn]
    help: str = ""
    install_hint: str | None = None

    def resolve(self) -> MainFn:
        """The command's ``main`` function; ``CommandUnavailable`` with a clear message
        when its module is missing or broken."""
        if callable(self.target):
            return self.target
        modname, _, attr = self.target.partition(":")
        attr = attr or "main"
        try:
            mod = importlib.import_module(modname)
        except ImportError as e:
            missing = e.name and (modname == e.name or modname.startswith(e.name + "."))
            if missing:
                hint = f"; {self.install_hint}" if self.install_hint else ""
                raise CommandUnavailable(
                    f"`plexnet {self.name}` is not available: module {modname!r} is not installed"
                    f" ({e}){hint}") from e
            raise CommandUnavailable(
                f"`plexnet {self.name}` is not available: importing {modname!r} failed: "
                f"{type(e).__name__}: {e}") from e
        except Exception as e:  # noqa: BLE001 - a broken module is reported, not a traceback
            raise CommandUnavailable(
                f"`plexnet {self.name}` is not available: importing {modname!r} failed: "
                f"{type(e).__name__}: {e}") from e
        fn = getattr(mod, attr, None)
        if not callable(fn):
            raise CommandUnavailable(f"`plexnet {self.name}` is not available: {modname!r} has no "
                                     f"function {attr!r}")
        return fn


_SUBCOMMANDS: dict[str, Subcommand] = {}


def register_subcommand(name: str, target: Union[str, MainFn], *, help: str = "",
                        install_hint: str | None = None, replace: bool = False) -> Subcommand:
    """Add ``plexnet NAME``. ``target`` is ``"module:function"`` (lazy) or a function
    ``main(argv: list[str]) -> int | None`` that receives the arguments after ``NAME``.
    Registering a taken name is a ``ValueError`` unless ``replace=True``."""
    if not name or name.startswith("-") or any(c.isspace() for c in name):
        raise ValueError(f"invalid subcommand name {name!r}")
    if name in _SUBCOMMANDS and not replace:
        raise ValueError(f"subcommand {name!r} is already registered ({_SUBCOMMANDS[name].target!r})")
    sub = _SUBCOMMANDS[name] = Subcommand(name, target, help, install_hint)
    return sub


def subcommands() -> dict[str, Subcommand]:
    """Every known subcommand: the registered ones, then those declared through the
    ``plexnet.commands`` entry-point group (which do not override registered names)."""
    out = dict(_SUBCOMMANDS)
    try:
        eps = metadata.entry_points(group=COMMANDS_ENTRY_POINT_GROUP)
    except Exception:  # noqa: BLE001 - broken metadata must not break the CLI
        eps = ()  # type: ignore[assignment]
    for ep in eps:
        if ep.name not in out:
            dist = getattr(getattr(ep, "dist", None), "name", None)
            out[ep.name] = Subcommand(ep.name, ep.value, f"(from {dist or 'an installed plugin'})")
    return out


# -- plexnet plugins --------------------------------------------------------------------------
def plugins_report(manager: Any = None, *, tracebacks: bool = False) -> dict[str, Any]:
    """What ``plexnet plugins --json`` prints::

        {"plexnet_version": str, "api_version": str,
         "plugins": [{"name", "module", "version", "distribution", "builtin", "status",
                      "error", "registered": {kind: [names]}}, ...],
         "devices": [{"device_type", "plugin", "available", "reason"[, "note"]}, ...],
         "forced_implementations": {"OP:DEVICE": IMPL}, "load_error": str | None,
         "warnings": [str, ...]}

    ``status`` is ``ok``, ``failed``, ``incompatible`` or ``disabled``; ``standard``
    marks first-party plugins and ``conflicts`` lists the name conflicts a plugin took
    part in; with ``tracebacks`` each plugin also has ``traceback``. ``warnings`` says
    when no operator plugin is installed.
    """
    from . import plugins
    from .base import API_VERSION, PluginError, __version__
    load_error = None
    if manager is None:
        try:
            manager = plugins.get_manager()
        except PluginError as e:  # strict mode, or a bad PLEXNET_FORCE_IMPL
            load_error = str(e)
            manager = plugins._manager
    else:
        try:
            manager.load()
        except PluginError as e:
            load_error = str(e)
    recs = list(manager.records.values()) if manager is not None else []
    out_plugins = []
    for r in recs:
        d = r.as_dict()
        if tracebacks:
            d["traceback"] = r.traceback
        out_plugins.append(d)
    devices = []
    forced: dict[str, str] = {}
    if manager is not None:
        backends = manager.registries.backends
        for dt, b in backends.items():
            try:
                ok = bool(b.is_available())
                reason = None if ok else (getattr(b, "unavailable_reason", None) or "is_available() is False")
            except Exception as e:  # noqa: BLE001
                ok, reason = False, f"is_available() raised {type(e).__name__}: {e}"
            dev = {"device_type": dt, "plugin": backends.owner(dt), "available": ok, "reason": reason}
            note = getattr(b, "status_note", None)
            if note:  # e.g. "SIMULATED on the host ..." (only present when the backend has one)
                dev["note"] = str(note)
            devices.append(dev)
        forced = {f"{op}:{dev}": impl for (op, dev), impl in
                  sorted(manager.registries.operators.forced().items())}
    warnings = []
    if manager is not None and not any(r.status == "ok" and not r.builtin and r.registered.get("operators")
                                       for r in recs):
        from .operator.hints import DEFAULT_DISTRIBUTION
        warnings.append(f"no operator plugin is installed: mx.nd / mx.sym have no operators; "
                        f"pip install {DEFAULT_DISTRIBUTION}")
    return {"plexnet_version": __version__, "api_version": API_VERSION, "plugins": out_plugins,
            "devices": devices, "forced_implementations": forced, "load_error": load_error,
            "warnings": warnings}


def _plugins_main(argv: list) -> int:
    p = argparse.ArgumentParser(
        prog="plexnet plugins",
        description="List plexnet's plugins (built-in and installed): version, status, what each "
                    "registered, and why failed ones failed.",
        epilog="Environment: PLEXNET_DISABLE_PLUGIN_AUTOLOAD=1, PLEXNET_PLUGINS_BLOCK=a,b, "
               "PLEXNET_PLUGINS_ALLOW=a,b, PLEXNET_PLUGINS_STRICT=1, PLEXNET_FORCE_IMPL=OP:DEVICE=IMPL.")
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.add_argument("-o", "--output", metavar="FILE", help="also write the JSON report into FILE")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="full lists of registered names, and tracebacks of failures")
    p.add_argument("--check", action="store_true",
                   help="exit with status 1 if any plugin failed or is incompatible, or no operator "
                        "plugin is installed")
    args = p.parse_args(argv)
    rep = plugins_report(tracebacks=args.verbose)
    text = json.dumps(rep, indent=2, sort_keys=False) + "\n"
    if args.json:
        sys.stdout.write(text)
    else:
        sys.stdout.write(_format_table(rep, verbose=args.verbose))
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    bad = rep["load_error"] is not None or bool(rep["warnings"]) or any(
        r["status"] in ("failed", "incompatible") for r in rep["plugins"])
    return ERROR if (args.check and bad) else SUCCESS


def _format_registered(registered: dict[str, list[str]], verbose: bool, limit: int = 8) -> list[str]:
    lines = []
    for kind, names in registered.items():
        shown = names if verbose or len(names) <= limit else names[:limit] + [f"... (+{len(names) - limit})"]
        lines.append(f"{kind} ({len(names)}): " + ", ".join(shown))
    return lines or ["-"]


def _format_table(rep: dict[str, Any], verbose: bool = False) -> str:
    width = max(60, shutil.get_terminal_size((100, 24)).columns)
    out = [f"plexnet {rep['plexnet_version']} (plugin API {rep['api_version']})", ""]
    plugins = rep["plugins"]
    if not plugins:
        out.append("no plugins")
    else:
        headers = ("PLUGIN", "VERSION", "STATUS")
        rows = [(r["name"] + (" [built-in]" if r["builtin"] else " [standard]" if r.get("standard") else ""),
                 r["version"] or "-", r["status"])
                for r in plugins]
        w = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
        lead = sum(w) + 2 * len(w)
        out.append("  ".join(h.ljust(w[i]) for i, h in enumerate(headers)) + "  REGISTERED")
        for row, r in zip(rows, plugins):
            prefix = "  ".join(c.ljust(w[i]) for i, c in enumerate(row)) + "  "
            items = (_format_registered(r["registered"], verbose) if r["status"] == "ok"
                     else [r["error"] or "-"] if r["status"] == "disabled" else ["-"])
            first = True
            for item in items:
                wrapped = textwrap.wrap(item, max(20, width - lead)) or [""]
                for line in wrapped:
                    out.append((prefix if first else " " * lead) + line)
                    first = False
    if rep["devices"]:
        out += ["", "Devices:"]
        for d in rep["devices"]:
            state = "available" if d["available"] else f"unavailable: {d['reason']}"
            if d.get("note"):
                state += f" ({d['note']})"
            out.append(f"  {d['device_type']} (from {d['plugin']}): {state}")
    if rep["forced_implementations"]:
        out += ["", "Forced implementations (PLEXNET_FORCE_IMPL / force_impl):"]
        out += [f"  {k} = {v}" for k, v in rep["forced_implementations"].items()]
    conflicts = sorted({c for r in plugins for c in r.get("conflicts") or ()})
    if conflicts:
        out += ["", "Name conflicts (see docs/plugins.md, Precedence):"]
        for c in conflicts:
            out += textwrap.wrap(c, width - 2, initial_indent="  ", subsequent_indent="    ")
    for w in rep.get("warnings") or ():
        out += ["", f"Warning: {w}"]
    failed = [r for r in plugins if r["status"] in ("failed", "incompatible")]
    if failed or rep["load_error"]:
        out += ["", "Problems:"]
        if rep["load_error"]:
            out.append(f"  {rep['load_error']}")
        for r in failed:
            where = r["distribution"] or ("built-in" if r["builtin"] else "")
            out.append(f"  {r['name']} ({r['module']}{', ' + where if where else ''}) {r['status']}:")
            out += textwrap.wrap(r["error"] or "", width - 4, initial_indent="    ", subsequent_indent="    ")
            if verbose and r.get("traceback"):
                out += ["    " + ln for ln in r["traceback"].rstrip().splitlines()]
        if not verbose:
            out.append("  (run `plexnet plugins -v` for tracebacks)")
    return "\n".join(out) + "\n"


# -- built-in subcommands --------------------------------------------------------------------
register_subcommand("plugins", _plugins_main, help="list plugins, what they registered, what failed")
register_subcommand("demo", "plexnet.demo:main", help="run a small end-to-end demo",
                    install_hint="pip install 'plexnet[demo]' plexnet-ops-basic "
                                 "(scikit-learn for the data set, the operators)")
register_subcommand("launch", "plexnet_kvstore_dist.launch:main",
                    help="launch a distributed job (dist_sync / dist_async kvstores)",
                    install_hint="install the plexnet-kvstore-dist plugin "
                                 "(pip install plexnet-kvstore-dist, or pip install plugins/kvstore-dist)")
register_subcommand("im2rec", "plexnet.tools.im2rec:main",
                    help="make image lists (.lst) and RecordIO databases (.rec/.idx), as MXNet's tools/im2rec.py",
                    install_hint="pip install 'plexnet[image]' (OpenCV)")
register_subcommand("rec2idx", "plexnet.tools.rec2idx:main",
                    help="write the .idx index of a .rec file, as MXNet's tools/rec2idx.py")


def _top_help(subs: dict[str, Subcommand]) -> str:
    from .base import __version__
    lines = ["usage: plexnet [-h] [-V] COMMAND [ARGS...]", "",
             f"plexnet {__version__}: the MXNet 1.x system architecture as a plugin framework.", "",
             "commands:"]
    w = max(len(n) for n in subs) if subs else 0
    for n, s in sorted(subs.items()):
        lines.append(f"  {n.ljust(w)}  {s.help}")
    lines += ["", "options:", "  -h, --help     show this help", "  -V, --version  print the version",
              "", "Run `plexnet COMMAND -h` for a command's options. Exit status: 0 success, 1 error, "
              "2 usage error."]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``plexnet`` command; returns the exit status (pip's: 0
    success, 1 error, 2 usage error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    subs = subcommands()
    if not argv or argv[0] in ("-h", "--help", "help"):
        if len(argv) > 1 and argv[0] == "help" and argv[1] in subs:
            return main([argv[1], "--help"])
        sys.stdout.write(_top_help(subs))
        return SUCCESS
    if argv[0] in ("-V", "--version"):
        from .base import API_VERSION, __version__
        sys.stdout.write(f"plexnet {__version__} (plugin API {API_VERSION})\n")
        return SUCCESS
    name, rest = argv[0], argv[1:]
    if name.startswith("-"):
        sys.stderr.write(f"plexnet: unknown option {name!r} (usage: plexnet [-h] [-V] COMMAND [ARGS...])\n")
        return USAGE_ERROR
    sub = subs.get(name)
    if sub is None:
        close = difflib.get_close_matches(name, list(subs), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        sys.stderr.write(f"plexnet: unknown command {name!r}{hint} (commands: {', '.join(sorted(subs))})\n")
        return USAGE_ERROR
    try:
        fn = sub.resolve()
    except CommandUnavailable as e:
        sys.stderr.write(f"plexnet: {e}\n")
        return ERROR
    try:
        rc = fn(rest)
    except SystemExit as e:  # argparse inside a subcommand (2 for a usage error)
        code = e.code
        return code if isinstance(code, int) else (SUCCESS if code is None else ERROR)
    except KeyboardInterrupt:
        sys.stderr.write("plexnet: interrupted\n")
        return 130
    return int(rc or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
