"""mx.runtime (MXNet 1.9.1's Features; missing before)."""
import pytest

import plexnet as mx


def test_features_names_order_and_queries():
    f = mx.runtime.Features()
    assert f is mx.runtime.Features()
    assert list(f)[:6] == ["CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE"]
    assert len(f) == 32 and list(f)[-1] == "TVM_OP"
    assert f.is_enabled("cuda") == (mx.context.num_gpus() > 0)
    assert f.is_enabled("PROFILER") is True and f.is_enabled("MKLDNN") is False
    with pytest.raises(RuntimeError, match="Feature 'XYZ' is unknown"):
        f.is_enabled("xyz")
    assert repr(f).startswith("[✖ CUDA, ") or repr(f).startswith("[✔ CUDA, ")
    feats = mx.runtime.feature_list()
    assert [x.name for x in feats] == list(f) and all(isinstance(x.enabled, bool) for x in feats)
    assert repr(mx.runtime.Feature("X", True)) == "✔ X" and repr(mx.runtime.Feature("X", False)) == "✖ X"
