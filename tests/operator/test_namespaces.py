"""Prefixed operators appear in MXNet's sub-namespaces (``plexnet.operator.namespaces``):
``_linalg_x`` -> ``nd.linalg.x``, ``_image_x`` -> ``nd.image.x``, ``_contrib_x`` ->
``nd.contrib.x``, flat ``linalg_x``/``random_x``/``sample_x`` -> ``_linalg_x`` etc., for a
third-party plugin's operators too."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from plexnet.operator import Operator, OperatorProperty, assign
from plexnet.operator.namespaces import flat_name, names_with_prefix
from plexnet.plugins import get_manager

PLUGIN = "namespace-test-plugin"
OPS = ["_contrib_nstest_double", "_image_nstest_double", "_linalg_nstest_double", "_random_nstest_double"]


class _DoubleProp(OperatorProperty):
    """2 * data"""


class _DoubleOp(Operator):
    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        assign(out_data[0], req[0], 2 * in_data[0])


@pytest.fixture
def plugin():
    class Plugin:
        @mx.hookimpl
        def plexnet_register_operators(self, registry):  # type: ignore[no-untyped-def]
            for op in OPS:
                registry.register_property(op, _DoubleProp)
                registry.register_impl(op, "*", lambda prop, ctx: _DoubleOp())

    mgr = get_manager()
    mgr.add_plugin(Plugin(), PLUGIN)
    try:
        yield
    finally:
        mgr.remove_plugin(PLUGIN)


@pytest.mark.parametrize("sub", ["contrib", "image", "linalg"])
def test_third_party_prefixed_ops_appear_in_nd_and_sym(plugin, sub: str) -> None:
    fn = getattr(getattr(mx.nd, sub), "nstest_double")
    np.testing.assert_allclose(fn(mx.nd.array([1.0, 2.0])).asnumpy(), [2.0, 4.0])
    s = getattr(getattr(mx.sym, sub), "nstest_double")(mx.sym.var("x"))
    assert f'"_{sub}_nstest_double"' in s.tojson()
    assert "nstest_double" in dir(getattr(mx.nd, sub))
    assert mx.nd.__getattribute__(sub) is getattr(mx.nd, sub)  # one cached module


def test_flat_names(plugin) -> None:
    assert flat_name("linalg_nstest_double") == "_linalg_nstest_double"
    assert flat_name("random_nstest_double") == "_random_nstest_double"
    assert flat_name("contrib_nstest_double") is None  # MXNet has no flat contrib names
    np.testing.assert_allclose(mx.nd.linalg_nstest_double(mx.nd.ones((2,))).asnumpy(), [2.0, 2.0])
    assert callable(mx.sym.random_nstest_double)
    assert "linalg_nstest_double" in dir(mx.nd)
    assert "nstest_double" in names_with_prefix(("_random_",))


def test_names_go_away_with_the_plugin(plugin) -> None:
    assert callable(mx.nd.contrib.nstest_double)
    get_manager().remove_plugin(PLUGIN)
    with pytest.raises(AttributeError, match=r"plexnet.ndarray.contrib has no operator 'nstest_double'"):
        mx.nd.contrib.nstest_double
    with pytest.raises(AttributeError):
        mx.nd.linalg_nstest_double
    get_manager().add_plugin(type("Dummy", (), {})(), PLUGIN)  # the fixture removes it again


def test_import_forms() -> None:
    from plexnet.ndarray import contrib, image, linalg  # noqa: F401
    import plexnet.symbol.linalg as sl
    assert sl is mx.sym.linalg
