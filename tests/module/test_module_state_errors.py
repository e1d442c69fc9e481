"""A Module used out of order raises what MXNet 1.9.1's ``assert`` raises (an
AssertionError; plexnet's ModuleStateError is a RuntimeError too, with a message saying
what to call first)."""
from __future__ import annotations

import pytest

import plexnet as mx

sym, nd = mx.sym, mx.nd


def _net():
    h = sym.FullyConnected(sym.var("data"), num_hidden=3, name="fc1")
    return sym.SoftmaxOutput(h, name="softmax")


def _bound(init: bool = False):
    m = mx.mod.Module(_net())
    m.bind([("data", (2, 5))], [("softmax_label", (2,))])
    if init:
        m.init_params()
    return m


BATCH = mx.io.DataBatch([nd.ones((2, 5))], [nd.ones((2,))])
CASES = {
    "forward before bind": lambda tmp: mx.mod.Module(_net()).forward(BATCH),
    "init_params before bind": lambda tmp: mx.mod.Module(_net()).init_params(),
    "get_params before bind": lambda tmp: mx.mod.Module(_net()).get_params(),
    "forward before init_params": lambda tmp: _bound().forward(BATCH),
    "update before init_optimizer": lambda tmp: _bound(True).update(),
    "input gradients without inputs_need_grad": lambda tmp: _bound(True).get_input_grads(),
    "init_optimizer before bind": lambda tmp: mx.mod.Module(_net()).init_optimizer(),
    # (MXNet writes the symbol file before it asserts: into the test's own directory)
    "save_checkpoint before init_params": lambda tmp: _bound().save_checkpoint(str(tmp / "m"), 1),
    "set_params before bind": lambda tmp: mx.mod.Module(_net()).set_params({}, {}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_out_of_order_calls_raise_assertion_errors(case: str, tmp_path) -> None:
    with pytest.raises(AssertionError):
        CASES[case](tmp_path)


def test_the_error_says_what_to_call_first() -> None:
    with pytest.raises(RuntimeError, match="bind"):
        mx.mod.Module(_net()).forward(BATCH)
