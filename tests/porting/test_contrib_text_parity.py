"""mx.contrib.text (MXNet 1.9.1's vocabulary and token embeddings; missing before). Values as
MXNet 1.9.1 gives them for the same inputs (checked side by side)."""
from collections import Counter

import numpy as np
import pytest

import plexnet as mx
from plexnet.contrib import text


def _file(path, rows):
    path.write_text("".join("\t".join(r) + "\n" for r in rows))
    return str(path)


@pytest.fixture
def files(tmp_path):
    e1 = _file(tmp_path / "e1.txt", [["a", "0.1", "0.2", "0.3", "0.4", "0.5"], ["b", "0.6", "0.7", "0.8", "0.9", "1.0"]])
    e2 = _file(tmp_path / "e2.txt", [["a", "0.01", "0.02", "0.03", "0.04", "0.05"],
                                     ["c", "0.06", "0.07", "0.08", "0.09", "0.1"],
                                     ["<unk2>", "0.11", "0.12", "0.13", "0.14", "0.15"]])
    bad = _file(tmp_path / "bad.txt", [["a", "0.1", "0.2"], ["b", "0.6", "0.7", "0.8"]])
    return e1, e2, bad


def _vocab():
    counter = Counter(["a", "b", "b", "c", "c", "c", "some_word$"])
    return text.vocab.Vocabulary(counter, min_freq=1, unknown_token="<unk>", reserved_tokens=["<pad>"])


def test_count_tokens_and_vocabulary():
    cnt = text.utils.count_tokens_from_str(" Life is great ! \n life is good . \n", " ", "\n", to_lower=True)
    assert cnt == Counter({"life": 2, "is": 2, "great": 1, "!": 1, "good": 1, ".": 1})
    v = _vocab()
    assert v.idx_to_token == ["<unk>", "<pad>", "c", "b", "a", "some_word$"]
    assert v.to_indices(["c", "zz"]) == [2, 0] and v.to_tokens([1, 2]) == ["<pad>", "c"]
    with pytest.raises(ValueError):
        v.to_tokens(100)
    with pytest.raises(AssertionError):
        text.vocab.Vocabulary(Counter("ab"), reserved_tokens=["b", "b"])


def test_custom_and_composite_embeddings(files):
    e1_path, e2_path, bad = files
    v = _vocab()
    e1 = text.embedding.CustomEmbedding(e1_path, "\t", vocabulary=v)
    assert e1.idx_to_token == v.idx_to_token and e1.vec_len == 5
    np.testing.assert_allclose(e1.get_vecs_by_tokens(["A", "b"], lower_case_backup=True).asnumpy(),
                               [[0.1, 0.2, 0.3, 0.4, 0.5], [0.6, 0.7, 0.8, 0.9, 1.0]], rtol=1e-6)
    assert e1.idx_to_vec.asnumpy()[2].tolist() == [0] * 5            # 'c' is not in the file
    e2 = text.embedding.CustomEmbedding(e2_path, "\t", init_unknown_vec=mx.nd.ones, unknown_token="<unk2>")
    assert e2.idx_to_token == ["<unk2>", "a", "c"]
    np.testing.assert_allclose(e2.get_vecs_by_tokens("zz").asnumpy(), [0.11, 0.12, 0.13, 0.14, 0.15], rtol=1e-6)
    comp = text.embedding.CompositeEmbedding(v, [e1, e2])
    assert comp.vec_len == 10 and comp.idx_to_vec.shape == (6, 10)
    comp.update_token_vectors(["a", "b"], mx.nd.array([[1] * 10, [2] * 10]))
    assert comp.get_vecs_by_tokens(["a", "b"]).asnumpy().tolist() == [[1] * 10, [2] * 10]
    with pytest.raises(ValueError):
        comp.update_token_vectors("zz", mx.nd.ones((10,)))
    with pytest.raises(AssertionError):
        text.embedding.CustomEmbedding(bad, "\t")


@pytest.fixture
def restored_registry():
    """The embedding registry as it was before the test (a class registered here would
    leak into later tests that list the registry)."""
    from plexnet.contrib.text import _registry
    saved = {k: dict(v) for k, v in _registry._REGISTRY.items()}
    yield
    _registry._REGISTRY.clear()
    _registry._REGISTRY.update(saved)


def test_registry_of_pretrained_embeddings(restored_registry):
    assert sorted(text.embedding.get_pretrained_file_names()) == ["fasttext", "glove"]
    assert "glove.6B.50d.txt" in text.embedding.get_pretrained_file_names("glove")

    @text.embedding.register
    class Tiny(text.embedding._TokenEmbedding):
        pretrained_file_name_sha1 = {"tiny.vec": "0" * 40}

        def __init__(self, **kwargs):
            super().__init__(**kwargs)

    assert isinstance(text.embedding.create("tiny"), Tiny)
    with pytest.raises(KeyError):
        text.embedding.get_pretrained_file_names("nope")
