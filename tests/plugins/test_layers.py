"""The core's layering: no import cycle, the up-calls of the arrays into the layers above
them (``plexnet.upcalls``), and the pieces a package plugs into its base class."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from plexnet import upcalls
from plexnet.base import InferTypeError, PlexnetError

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> str:
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_no_import_cycle_in_core() -> None:
    grimp = pytest.importorskip("grimp")
    import importlib.util
    spec = importlib.util.spec_from_file_location("count_cycles", ROOT / "tools" / "count_cycles.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    graph = grimp.build_graph("plexnet", exclude_type_checking_imports=True)
    assert mod.components(graph, set(graph.modules)) == []


def test_the_arrays_do_not_load_autograd_or_the_executor() -> None:
    out = _run("import sys, plexnet as mx; a = mx.nd.array([1.0]) + 1; s = mx.sym.var('x') * 2;"
               "print(sorted(m for m in ('plexnet.autograd', 'plexnet.executor') if m in sys.modules))")
    assert out.strip() == "[]"


def test_backward_loads_autograd_on_first_use() -> None:
    # NDArray.backward is an up-call: plexnet.autograd provides it when first needed
    out = _run("import sys, plexnet as mx; x = mx.nd.array([1.0, 2.0]); x.attach_grad(); x.backward();"
               "print('plexnet.autograd' in sys.modules, x.grad.asnumpy().tolist())")
    assert out.split() == ["True", "[1.0,", "1.0]"]


def test_bind_loads_the_executor_on_first_use() -> None:
    out = _run("import sys, plexnet as mx; e = (mx.sym.var('a') * 2).bind(mx.cpu(), {'a': mx.nd.array([1.0, 3.0])});"
               "print('plexnet.executor' in sys.modules, e.forward()[0].asnumpy().tolist())")
    assert out.split() == ["True", "[2.0,", "6.0]"]


def test_get_of_an_undeclared_upcall_names_it() -> None:
    with pytest.raises(PlexnetError, match="'no.such.call'.*no providing module"):
        upcalls.get("no.such.call")


def test_a_provider_that_does_not_provide_is_named() -> None:
    upcalls.declare("test.never", "plexnet.base")
    try:
        with pytest.raises(PlexnetError, match="importing plexnet.base did not provide it"):
            upcalls.get("test.never")
    finally:
        upcalls._providers.pop("test.never", None)


def test_provided_upcalls_are_the_upper_layers_objects() -> None:
    from plexnet.autograd.backward import run_backward
    from plexnet.executor import Executor
    assert upcalls.get(upcalls.BACKWARD) is run_backward
    assert upcalls.get(upcalls.EXECUTOR) is Executor


def test_moved_names_still_import() -> None:
    # the tape moved below the arrays, the graph passes next to the symbols
    from plexnet.autograd.state import STATE as s1
    from plexnet.autograd.tape import Leaf as l1
    from plexnet.executor.graph import IndexedGraph as g1, InferTypeError as e1
    from plexnet.symbol.graph import IndexedGraph as g2
    from plexnet.tape import STATE as s2, Leaf as l2
    assert (s1, l1, g1, e1) == (s2, l2, g2, InferTypeError)
    assert issubclass(InferTypeError, TypeError)


def test_symbol_json_round_trip_keeps_subgraph_symbols() -> None:
    import plexnet as mx
    s = mx.sym.var("a") + mx.sym.var("b")
    t = mx.sym.load_json(s.tojson())
    assert isinstance(t, mx.sym.Symbol) and t.list_arguments() == ["a", "b"]
