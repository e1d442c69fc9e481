"""Every nn operator runs in float32 end to end (no silent float64 outputs, no casting
errors) and agrees with its float64 run."""
import numpy as np
import pytest

from opcheck import random_args, run_backward

CASES = [
    ("FullyConnected", dict(num_hidden=3), dict(data=(4, 5))),
    ("Convolution", dict(kernel=(3, 3), num_filter=2, pad=(1, 1)), dict(data=(2, 3, 5, 5))),
    ("Convolution", dict(kernel=(3,), num_filter=2, stride=(2,)), dict(data=(2, 3, 7))),
    ("Deconvolution", dict(kernel=(3, 3), num_filter=2, stride=(2, 2), no_bias=False), dict(data=(2, 3, 3, 3))),
    ("Pooling", dict(kernel=(2, 2), stride=(2, 2)), dict(data=(2, 3, 4, 4))),
    ("Pooling", dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg", pooling_convention="full"),
     dict(data=(2, 3, 5, 5))),
    ("BatchNorm", dict(fix_gamma=False), dict(data=(4, 3, 2))),
    ("LayerNorm", {}, dict(data=(3, 4))),
    ("InstanceNorm", {}, dict(data=(2, 3, 4))),
    ("GroupNorm", dict(num_groups=2), dict(data=(2, 4, 3))),
    ("L2Normalization", {}, dict(data=(2, 3, 4))),
    ("LRN", dict(nsize=3), dict(data=(2, 4, 3))),
    ("Dropout", dict(p=0.3), dict(data=(4, 5))),
    ("Activation", dict(act_type="tanh"), dict(data=(4, 5))),
    ("Activation", dict(act_type="mish"), dict(data=(4, 5))),
    ("LeakyReLU", dict(act_type="gelu"), dict(data=(4, 5))),
    ("LeakyReLU", dict(act_type="prelu"), dict(data=(4, 5))),
    ("LeakyReLU", dict(act_type="rrelu"), dict(data=(4, 5))),
    ("softmax", dict(temperature=2.0), dict(data=(4, 5))),
    ("log_softmax", {}, dict(data=(4, 5))),
    ("SoftmaxActivation", {}, dict(data=(4, 5))),
    ("SoftmaxOutput", dict(normalization="valid", use_ignore=True, smooth_alpha=0.1), dict(data=(4, 5))),
    ("LinearRegressionOutput", {}, dict(data=(4, 5))),
    ("LogisticRegressionOutput", {}, dict(data=(4, 5))),
    ("MAERegressionOutput", {}, dict(data=(4, 5))),
    ("Embedding", dict(input_dim=5, output_dim=3), dict(data=(2, 4))),
]


@pytest.mark.parametrize("name,kw,shapes", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_float32(name, kw, shapes):
    a64 = random_args(name, kw, seed=1, **shapes)
    if name in ("SoftmaxOutput",):
        a64["label"] = np.array([0.0, 4.0, 2.0, -1.0])
    if name == "Embedding":
        a64["data"] = np.array([[0.0, 4.0, 2.0, 2.0], [1.0, 1.0, 3.0, 0.0]])
    a32 = {k: v.astype("float32") for k, v in a64.items()}
    aux = None
    if name == "BatchNorm":
        aux = [np.zeros(3, "f4"), np.ones(3, "f4")]
    g32 = run_backward(name, a32, kw, aux=aux)
    g64 = run_backward(name, a64, dict(kw, dtype="float64") if name == "Embedding" else kw,
                       aux=None if aux is None else [a.astype("f8") for a in aux])
    random = name == "Dropout" or kw.get("act_type") == "rrelu"  # float32 draws differ from float64 ones
    for o32, o64 in zip(g32.outputs, g64.outputs):
        assert o32.dtype == np.float32
        if not random:
            np.testing.assert_allclose(o32, o64, rtol=2e-4, atol=2e-5)
    for x32, x64 in zip(g32, g64):
        assert x32.dtype == np.float32
        if not random:
            np.testing.assert_allclose(x32, x64, rtol=2e-4, atol=2e-5)
