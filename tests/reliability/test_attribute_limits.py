"""Point 7 of issue 13: a huge attribute is refused before it costs memory.

A 4 MB ``kernel`` string cost 1.9 GB of RSS (``ast.literal_eval`` builds a node per
element) before Convolution refused it. Now the string's length is checked first.
"""
from __future__ import annotations

import json
import resource
import tracemalloc

import pytest

import plexnet as mx
from plexnet.operator.params import MAX_SHAPE_DIMS, ParamError, Shape

pytestmark = pytest.mark.timeout(60)

HUGE = "(" + "1," * (2 * 1024 * 1024) + ")"  # 4 MB


def _peak_bytes(fn) -> tuple[int, int]:
    """(peak Python allocation while ``fn`` runs, RSS growth in KiB)."""
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    try:
        fn()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0


def test_huge_kernel_refused_cheaply_symbol():
    assert len(HUGE) > 4_000_000

    def make():
        with pytest.raises(ParamError, match=r"Convolution: .*'kernel'.*(over|longer than) the limit"):
            mx.sym.Convolution(mx.sym.Variable("data"), kernel=HUGE, num_filter=1)
    peak, rss_kib = _peak_bytes(make)
    assert peak < 16 * 2 ** 20, f"parsing the refused attribute allocated {peak / 2 ** 20:.0f} MiB"
    assert rss_kib < 64 * 1024, f"RSS grew by {rss_kib / 1024:.0f} MiB"


def test_huge_kernel_refused_cheaply_ndarray_and_json():
    x = mx.nd.ones((1, 1, 4, 4))
    w = mx.nd.ones((1, 1, 1, 1))
    peak, _ = _peak_bytes(lambda: pytest.raises(ParamError, mx.nd.Convolution, x, w, kernel=HUGE,
                                                num_filter=1, no_bias=True))
    assert peak < 16 * 2 ** 20
    doc = json.loads(mx.sym.Convolution(mx.sym.Variable("data"), kernel=(1, 1), num_filter=1,
                                        name="c").tojson())
    doc["nodes"][-1]["attrs"]["kernel"] = HUGE
    text = json.dumps(doc)
    peak, _ = _peak_bytes(lambda: pytest.raises(mx.base.PlexnetError, mx.sym.load_json, text))
    assert peak < 3 * len(text) + 16 * 2 ** 20  # the parsed document itself, nothing per element


def test_shape_limits_and_forms():
    assert Shape("(3, 3)") == (3, 3) and Shape("[2,2]") == (2, 2) and Shape("2") == (2,)
    assert Shape("(3,)") == (3,) and Shape("()") == () and Shape("(None, 3)") == (None, 3)
    with pytest.raises(ValueError, match="dimensions, more than the limit"):
        Shape("(" + "1," * (MAX_SHAPE_DIMS + 1) + ")")
    with pytest.raises(ValueError, match="dimensions, more than the limit"):
        Shape([1] * (MAX_SHAPE_DIMS + 1))
    with pytest.raises(ValueError, match="not a shape"):
        Shape("(1, __import__('os'))")


def test_long_shape_string_under_the_general_limit():
    s = "(" + "1," * 50_000 + ")"  # 100 KB: under MAX_ATTR_CHARS, over MAX_SHAPE_CHARS
    with pytest.raises(ParamError, match=r"Convolution: .*'kernel'.*longer than the limit of 4096"):
        mx.sym.Convolution(mx.sym.Variable("data"), kernel=s, num_filter=1)
