"""Thread-local scopes as MXNet 1.9.1 (found by porting test_thread_local.py): the default
context (`test_utils.set_default_context`), `AttrScope.current` and `NameManager.current`
class properties, raw AttrScope keys."""
import threading

import plexnet as mx
from plexnet.attribute import AttrScope
from plexnet.gluon import block
from plexnet.name import NameManager
from plexnet.test_utils import default_context, set_default_context


def _in_thread(fn):
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join(30)
    return out[0]


def test_set_default_context_is_the_threads_current_context():
    def f():
        set_default_context(mx.cpu(11))
        return mx.current_context(), default_context(), mx.nd.zeros((1,)).context
    assert _in_thread(f) == (mx.cpu(11),) * 3
    assert mx.current_context() == mx.cpu(0) == default_context()      # this thread untouched


def test_attrscope_current_and_raw_keys():
    try:
        AttrScope.current = AttrScope(y="hi")
        assert _in_thread(lambda: AttrScope.current._attr) == {}        # other threads: their own scope
        assert AttrScope.current._attr == {"y": "hi"}
        with AttrScope(x="hello", ctx_group="g"):
            assert AttrScope.current._attr == {"y": "hi", "x": "hello", "ctx_group": "g"}
            s = mx.sym.exp(mx.sym.var("a"), name="e")
        attrs = s.attr_dict()["e"]
        # as MXNet: only its hidden keys (ctx_group, lr_mult, ...) become __key__
        assert attrs["x"] == "hello" and attrs["__ctx_group__"] == "g" and "__x__" not in attrs
    finally:
        AttrScope.current = AttrScope()


def test_namemanager_current_per_thread_and_block_scope_prefix():
    try:
        NameManager.current = NameManager()
        NameManager.current.get(None, "main_thread")
        assert _in_thread(lambda: "main_thread" in NameManager.current._counter) is False
        assert "main_thread" in NameManager.current._counter

        class Dummy:
            prefix = "spawned_"
            _empty_prefix = False
            _profiler_scope_name = "<unk>:"

        def f():
            with block._BlockScope(Dummy()):
                return NameManager.current.get(None, "hello")
        assert _in_thread(f) == "spawned_hello0"
    finally:
        NameManager.current = NameManager()
