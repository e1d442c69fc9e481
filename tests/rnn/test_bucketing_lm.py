"""A bucketing LSTM language model (MXNet's ``example/rnn/bucketing`` recipe, tiny):
``encode_sentences`` + ``BucketSentenceIter`` + ``LSTMCell.unroll`` + ``BucketingModule``
on a synthetic corpus whose next word is predictable; perplexity falls."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from plexnet.plugins import registries

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(autouse=True)
def _needs_ops():
    ops = registries().operators
    if any(n not in ops for n in ("Embedding", "FullyConnected", "SliceChannel", "SoftmaxOutput", "Reshape")):
        pytest.skip("needs plexnet-ops-basic")


def _corpus(rng, n=96):
    words = ["w%d" % i for i in range(6)]
    sents = []
    for _ in range(n):
        length = int(rng.choice([4, 8]))
        start = int(rng.randint(6))
        sents.append([words[(start + k) % 6] for k in range(length)])  # next word = current + 1
    return sents


def test_bucketing_lstm_language_model_perplexity_falls():
    rng = np.random.RandomState(0)
    mx.random.seed(0)
    np.random.seed(0)
    import random
    random.seed(0)
    coded, vocab = mx.rnn.encode_sentences(_corpus(rng), invalid_label=0, start_label=1)
    batch_size, num_hidden, num_embed = 8, 16, 8
    train = mx.rnn.BucketSentenceIter(coded, batch_size, buckets=[4, 8], invalid_label=0)
    assert train.default_bucket_key == 8 and train.provide_data[0].shape == (8, 8)
    cell = mx.rnn.LSTMCell(num_hidden=num_hidden, prefix="lstm_")

    def sym_gen(seq_len):
        data = mx.sym.Variable("data")
        label = mx.sym.Variable("softmax_label")
        embed = mx.sym.Embedding(data=data, input_dim=len(vocab) + 1, output_dim=num_embed, name="embed")
        cell.reset()
        outputs, _ = cell.unroll(seq_len, inputs=embed, merge_outputs=True)
        pred = mx.sym.Reshape(outputs, shape=(-1, num_hidden))
        pred = mx.sym.FullyConnected(data=pred, num_hidden=len(vocab) + 1, name="pred")
        label = mx.sym.Reshape(label, shape=(-1,))
        pred = mx.sym.SoftmaxOutput(data=pred, label=label, name="softmax", use_ignore=True, ignore_label=0)
        return pred, ("data",), ("softmax_label",)

    model = mx.mod.BucketingModule(sym_gen=sym_gen, default_bucket_key=train.default_bucket_key, context=mx.cpu())
    model.bind(data_shapes=train.provide_data, label_shapes=train.provide_label)
    model.init_params(mx.init.Xavier(factor_type="in", magnitude=2.34))
    before = dict(model.score(train, mx.metric.Perplexity(0)))["perplexity"]
    train.reset()  # score leaves it at the end; fit does not rewind first (as MXNet)
    model.fit(train_data=train, eval_metric=mx.metric.Perplexity(0), optimizer="adam",
              optimizer_params={"learning_rate": 0.02}, num_epoch=5)
    score = dict(model.score(train, mx.metric.Perplexity(0)))
    assert before > 4.0, before  # about the number of words at the start
    assert score["perplexity"] < 0.5 * before and score["perplexity"] < 2.0, (before, score)
    assert set(model._buckets) == {4, 8}
    assert score["perplexity"] < 2.0, score  # chance level is ~7 words
    # the unpacked checkpoint of an RNN model round-trips
    arg, aux = model.get_params()
    unpacked = cell.unpack_weights(arg)
    assert "lstm_i2h_f_weight" in unpacked and "lstm_i2h_weight" not in unpacked
    packed = cell.pack_weights(unpacked)
    np.testing.assert_array_equal(packed["lstm_i2h_weight"].asnumpy(), arg["lstm_i2h_weight"].asnumpy())
