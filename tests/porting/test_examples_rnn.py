"""Regressions found by running MXNet 1.x's RNN / NLP example scripts (example/rnn,
example/gluon/word_language_model, ...) against plexnet; docs/porting-examples.md lists
the scripts. Expected values are MXNet 1.9.1's (recorded by hand from the mxvenv)."""
from __future__ import annotations

import zipfile

import numpy as np
import pytest

import plexnet as mx
from plexnet.gluon import contrib

CORPUS = " a b b \n\n c a b \n"


def _write(tmp_path, name="wiki.train.tokens", text=CORPUS):
    (tmp_path / name).write_text(text)
    return str(tmp_path)


# -- gluon.contrib.data.text.WikiText2 (example/gluon/word_language_model/train.py) --------

def test_wikitext2_samples_and_vocab_as_mxnet(tmp_path):
    d = contrib.data.text.WikiText2(_write(tmp_path), "train", seq_len=3)
    # MXNet 1.9.1: <unk> 0, <eos> 1, then by frequency; data/label shifted by one token,
    # the tail that does not fill a sequence dropped
    assert d.vocabulary.idx_to_token == ["<unk>", "<eos>", "b", "a", "c"]
    assert len(d) == 2
    data, label = d[0]
    assert data.dtype == np.int32 and label.dtype == np.int32
    assert data.asnumpy().tolist() == [3, 2, 2] and label.asnumpy().tolist() == [2, 2, 1]
    assert [x.asnumpy().tolist() for x in d[1]] == [[1, 4, 3], [4, 3, 2]]
    assert d.frequencies == {"b": 3, "a": 2, "c": 1}


def test_wikitext2_given_vocab_and_loader(tmp_path):
    root = _write(tmp_path)
    _write(tmp_path, "wiki.valid.tokens", " c c z \n")
    vocab = contrib.data.text.WikiText2(root, "train", seq_len=3).vocabulary
    v = contrib.data.text.WikiText2(root, "validation", vocab=vocab, seq_len=2)
    assert v.vocabulary is vocab
    assert v.frequencies == {"c": 2, "z": 1}          # counted even with a given vocabulary
    assert [x.asnumpy().tolist() for x in v[0]] == [[4, 4], [4, 0]]   # z unknown -> 0
    # the example's loader: IntervalSampler + DataLoader over the dataset
    loader = mx.gluon.data.DataLoader(v, batch_size=1, sampler=contrib.data.IntervalSampler(len(v), 1))
    batches = [(x.shape, y.shape) for x, y in loader]
    assert batches == [((1, 2), (1, 2))]


def test_wikitext2_reads_the_archive(tmp_path):
    with zipfile.ZipFile(tmp_path / "wikitext-2-v1.zip", "w") as zf:
        zf.writestr("wikitext-2/wiki.test.tokens", CORPUS)
    d = contrib.data.text.WikiText2(str(tmp_path), "test", seq_len=3)
    assert (tmp_path / "wiki.test.tokens").exists()      # extracted flat into root, as MXNet
    assert len(d) == 2


def test_wikitext_errors(tmp_path):
    with pytest.raises(mx.base.MXNetError, match=r"wiki\.train\.tokens.*wikitext-103-v1\.zip"):
        contrib.data.text.WikiText103(str(tmp_path), "train")
    with pytest.raises(ValueError, match="segment"):
        contrib.data.text.WikiText2(_write(tmp_path), "valid")


# -- mx.model.FeedForward with a bucketing sym_gen (example/bi-lstm-sort/lstm_sort.py) ------

def _bucket_iter(batch_size=4):
    rng = np.random.RandomState(0)
    sents = [list(rng.randint(1, 6, size=n)) for n in [3] * 8 + [5] * 8]
    return mx.rnn.BucketSentenceIter(sents, batch_size, buckets=[3, 5], invalid_label=0)


def _sym_gen(seq_len):
    data = mx.sym.Variable("data")
    embed = mx.sym.Embedding(data, input_dim=6, output_dim=4, name="embed")
    pred = mx.sym.FullyConnected(mx.sym.Reshape(embed, shape=(-1, 4)), num_hidden=6, name="pred")
    label = mx.sym.Reshape(mx.sym.Variable("softmax_label"), shape=(-1,))
    return mx.sym.SoftmaxOutput(pred, label=label, name="softmax")


def test_feedforward_takes_a_sym_gen(tmp_path, caplog):
    import logging
    it = _bucket_iter()
    with pytest.warns(DeprecationWarning, match="FeedForward has been deprecated"):  # as MXNet
        model = mx.model.FeedForward(symbol=_sym_gen, num_epoch=2, learning_rate=0.1,
                                     initializer=mx.init.Xavier())
    assert model.symbol is None and model.sym_gen is _sym_gen       # MXNet's attributes
    with caplog.at_level(logging.INFO):
        model.fit(X=it, eval_data=_bucket_iter(), eval_metric="ce")
    # the default bucket's symbol, trained parameters shared by both buckets
    assert model.symbol.list_arguments() == _sym_gen(5).list_arguments()
    assert set(model.arg_params) == {"embed_weight", "pred_weight", "pred_bias"}
    # MXNet's default eval_end_callback logs the validation line once per epoch
    assert sum("Validation-cross-entropy" in r.getMessage() for r in caplog.records) == 2
    prefix = str(tmp_path / "sort")
    model.save(prefix)
    sym, args, _ = mx.model.load_checkpoint(prefix, 2)
    assert sym.list_arguments() == model.symbol.list_arguments() and set(args) == set(model.arg_params)


def test_feedforward_rejects_a_non_symbol():
    with pytest.raises(TypeError, match="Symbol or a callable"), pytest.warns(DeprecationWarning):
        mx.model.FeedForward(symbol=3)
    with pytest.warns(DeprecationWarning):
        model = mx.model.FeedForward(symbol=_sym_gen, num_epoch=1)
    with pytest.raises(ValueError, match="default_bucket_key"):
        model.fit(X=mx.io.NDArrayIter(np.zeros((4, 3)), np.zeros((4, 3)), batch_size=2))


# -- init(name, arr) with a plain name (example/cnn_text_classification/text_cnn.py) --------

def test_initializer_with_a_plain_name_warns_as_mxnet():
    arr = mx.nd.zeros((3, 2))
    with pytest.warns(DeprecationWarning, match=r"init\(str, NDArray\) has been deprecated"):
        mx.init.Uniform(0.1)("cls_weight", arr)
    assert 0 < np.abs(arr.asnumpy()).max() <= 0.1
    bias = mx.nd.ones((2,))
    with pytest.warns(DeprecationWarning):
        mx.init.Uniform(0.1)("cls_bias", bias)          # the name rules still apply: bias -> 0
    assert bias.asnumpy().tolist() == [0, 0]


def test_initializer_with_an_init_desc_does_not_warn():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mx.init.Uniform(0.1)(mx.init.InitDesc("cls_weight"), mx.nd.zeros((3, 2)))


# -- NDArrayIter.data / .label / .data_list (example/multivariate_time_series/src/lstnet.py) --

def test_ndarrayiter_data_and_label_are_named_ndarrays_in_shuffled_order():
    np.random.seed(3)
    it = mx.io.NDArrayIter(np.arange(12).reshape(6, 2), np.arange(6), batch_size=4, shuffle=True)
    (dname, d), = it.data
    (lname, lab), = it.label
    assert (dname, lname) == ("data", "softmax_label")
    assert isinstance(lab, mx.nd.NDArray) and lab.dtype == np.float32
    # MXNet 1.9.1 (seed 3): the arrays are kept in the shuffled order the batches come in
    assert lab.asnumpy().tolist() == [3, 5, 4, 1, 0, 2]
    assert d.asnumpy()[:, 0].tolist() == [6, 10, 8, 2, 0, 4]
    assert [b.label[0].asnumpy().tolist() for b in it] == [[3, 5, 4, 1], [0, 2, 3, 5]]
    it.reset()
    assert it.label[0][1].asnumpy().tolist() == [4, 3, 2, 0, 5, 1]
    assert [b.label[0].asnumpy().tolist() for b in it] == [[4, 3, 2, 0], [5, 1, 4, 3]]
    # data_list keeps the arrays as they were after construction, as MXNet's
    assert it.num_source == 2 and it.data_list[1].asnumpy().tolist() == [3, 5, 4, 1, 0, 2]


def test_ndarrayiter_label_assignment():
    it = mx.io.NDArrayIter(np.zeros((4, 2)), np.zeros(4), batch_size=2)
    it.label = [("softmax_label", mx.nd.array([1, 2, 3, 4]))]
    assert [b.label[0].asnumpy().tolist() for b in it] == [[1, 2], [3, 4]]
    assert it.label[0][1].asnumpy().tolist() == [1, 2, 3, 4]


# -- mx.rnn.BucketSentenceIter's discard notice (example/rnn/bucketing/*.py) ------------------

def test_bucket_sentence_iter_prints_the_discard_count_as_mxnet(capsys):
    mx.rnn.BucketSentenceIter([[1, 2, 3], [1, 2]], 1, buckets=[3], invalid_label=0)
    assert capsys.readouterr().out == "WARNING: discarded 0 sentences longer than the largest bucket.\n"
    mx.rnn.BucketSentenceIter([[1, 2, 3, 4], [1, 2]], 1, buckets=[3], invalid_label=0)
    assert "discarded 1 sentences" in capsys.readouterr().out
