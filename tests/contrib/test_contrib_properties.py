"""Invariants of contrib.text's Vocabulary / count_tokens_from_str and of SVRG's update
rule (property tests; MXNet's values are checked in test_contrib_compat.py)."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plexnet as mx
from plexnet.contrib import text

_tokens = st.text(alphabet="abcdeXY", min_size=1, max_size=3)


@settings(max_examples=60, deadline=None)
@given(st.lists(_tokens, max_size=30), st.one_of(st.none(), st.integers(0, 8)), st.integers(1, 4),
       st.lists(_tokens, max_size=3, unique=True))
def test_vocabulary_order(tokens: list[str], most: int | None, min_freq: int, reserved: list[str]) -> None:
    unknown = "<unk>"
    counter = Counter(tokens)
    v = text.vocab.Vocabulary(counter, most_freq_count=most, min_freq=min_freq, unknown_token=unknown,
                              reserved_tokens=reserved or None)
    head = [unknown] + reserved
    assert v.idx_to_token[:len(head)] == head
    assert all(v.token_to_idx[t] == i for i, t in enumerate(v.idx_to_token)) and len(v.token_to_idx) == len(v)
    rest = v.idx_to_token[len(head):]
    # counted tokens: most frequent first, ties in token order; none below min_freq; at most `most`
    assert rest == sorted(rest, key=lambda t: (-counter[t], t))
    assert all(counter[t] >= min_freq and t not in head for t in rest)
    eligible = sorted((t for t in counter if counter[t] >= min_freq and t not in head),
                      key=lambda t: (-counter[t], t))
    assert rest == (eligible if most is None else eligible[:most])
    assert v.to_indices(rest) == list(range(len(head), len(v)))
    assert v.to_tokens(list(range(len(v)))) == v.idx_to_token


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_tokens, max_size=5), max_size=5), st.booleans())
def test_count_tokens_matches_counter(seqs: list[list[str]], lower: bool) -> None:
    src = "".join(" " + " ".join(s) + " \n" for s in seqs)
    got = text.utils.count_tokens_from_str(src, " ", "\n", to_lower=lower)
    flat = [t.lower() if lower else t for s in seqs for t in s]
    assert got == Counter(flat)


def test_vocabulary_rejects_bad_arguments() -> None:
    with pytest.raises(AssertionError, match="min_freq"):
        text.vocab.Vocabulary(Counter("ab"), min_freq=0)
    with pytest.raises(AssertionError, match="counter"):
        text.vocab.Vocabulary({"a": 1})
    with pytest.raises(ValueError, match="invalid"):
        text.vocab.Vocabulary(Counter("ab")).to_tokens(5)


def test_custom_embedding_missing_file(tmp_path) -> None:
    with pytest.raises(ValueError, match="pretrained_file_path"):
        text.embedding.CustomEmbedding(str(tmp_path / "none.txt"))


def test_pretrained_download_refuses_without_network(tmp_path, monkeypatch) -> None:
    import plexnet.gluon.utils as gutils

    def offline(url, path, *a, **k):
        raise OSError("no network")
    monkeypatch.setattr(gutils, "_fetch", offline)
    with pytest.raises(mx.base.PlexnetError, match="glove.6B.zip"):
        text.embedding.create("glove", pretrained_file_name="glove.6B.50d.txt", embedding_root=str(tmp_path))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4))
def test_svrg_rule_with_snapshot_at_current_weights_is_full_gradient(seed: int) -> None:
    # right after a snapshot both modules hold the same weights, so the SVRG gradient of any
    # batch is exactly the full gradient: g(w) - g(w~) + mu = mu
    from plexnet.contrib.svrg_optimization.svrg_module import SVRGModule
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, (12, 2)).astype(np.float32)
    di = mx.io.NDArrayIter(x, x.sum(1), batch_size=4, label_name="lin_reg_label")
    sym = mx.sym.LinearRegressionOutput(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=1, name="fc"),
                                        mx.sym.var("lin_reg_label"))
    mod = SVRGModule(sym, data_names=["data"], label_names=["lin_reg_label"], update_freq=1)
    mod.bind(di.provide_data, di.provide_label)
    mod.init_params(mx.init.Uniform(0.5))
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.0})
    mod.update_full_grads(di)
    di.reset()
    batch = next(di)
    mod.forward_backward(batch)
    mod._update_svrg_gradients()
    for i, name in enumerate(mod._exec_group.param_names):
        np.testing.assert_allclose(mod._exec_group.grad_arrays[i][0].asnumpy(),
                                   mod._param_dict[0][name].asnumpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ext", [".zip", ".tar.gz"])
def test_pretrained_archive_in_place_is_unpacked_without_network(tmp_path, ext: str) -> None:
    import hashlib
    import io
    import tarfile
    import zipfile
    content = b"hello 1 2 3\nworld 4 5 6\n"
    buf = io.BytesIO()
    if ext == ".zip":
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("v.txt", content)
    else:
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            info = tarfile.TarInfo("v.txt")
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    archive = "v" + ext

    class Packed(text.embedding._TokenEmbedding):
        pretrained_file_name_sha1 = {"v.txt": hashlib.sha1(content).hexdigest()}
        pretrained_archive_name_sha1 = {archive: hashlib.sha1(buf.getvalue()).hexdigest()}

        @classmethod
        def _get_download_file_name(cls, pretrained_file_name):
            return archive

    (tmp_path / "packed").mkdir()
    (tmp_path / "packed" / archive).write_bytes(buf.getvalue())
    path = Packed._get_pretrained_file(str(tmp_path), "v.txt")
    assert path == str(tmp_path / "packed" / "v.txt")
    emb = text.embedding.CustomEmbedding(path)
    assert emb.idx_to_token == ["<unk>", "hello", "world"]
    assert emb.idx_to_vec.asnumpy().tolist() == [[0, 0, 0], [1, 2, 3], [4, 5, 6]]
