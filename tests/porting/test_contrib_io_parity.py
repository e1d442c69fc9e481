"""mx.contrib.io.DataLoaderIter (MXNet 1.9.1; missing before, found by porting test_contrib_io.py)."""
import numpy as np

import plexnet as mx
from plexnet.contrib.io import DataLoaderIter
from plexnet.gluon.data import ArrayDataset, DataLoader


def _loader(n, batch, last_batch):
    x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    return DataLoader(ArrayDataset(mx.nd.array(x), np.arange(n, dtype=np.float32)), batch, last_batch=last_batch)


def test_batches_descs_and_reset():
    it = DataLoaderIter(_loader(10, 4, "discard"))
    assert it.batch_size == 4
    assert [(d.name, d.shape) for d in it.provide_data] == [("data", (4, 2))]
    assert [(d.name, d.shape) for d in it.provide_label] == [("softmax_label", (4,))]
    assert len(list(it)) == 2
    it.reset()
    b = next(it)
    assert b.data[0].asnumpy()[0].tolist() == [0, 1] and b.label[0].asnumpy().tolist() == [0, 1, 2, 3]
    assert b.pad == 0 and b.index is None


def test_last_batch_keep_is_padded_and_cast():
    it = DataLoaderIter(_loader(10, 4, "keep"), data_name="x", label_name="y", dtype="float16")
    batches = list(it)
    assert len(batches) == 3
    assert batches[0].data[0].dtype == np.float16 and batches[0].label[0].dtype == np.float16
    last = batches[-1]
    # as MXNet 1.9.1: the padded batch is a fresh float32 array holding the cast rows first
    assert last.pad == 2 and last.data[0].shape == (4, 2) and last.data[0].dtype == np.float32
    assert last.data[0].asnumpy()[:2].tolist() == [[16, 17], [18, 19]]
    assert last.label[0].asnumpy()[:2].tolist() == [8, 9]
    assert it.provide_data[0].name == "x" and it.provide_label[0].name == "y"


def test_module_trains_from_a_dataloader():
    data = mx.sym.var("data")
    out = mx.sym.LinearRegressionOutput(mx.sym.FullyConnected(data, num_hidden=1, name="fc"), name="softmax")
    mod = mx.mod.Module(out, data_names=["data"], label_names=["softmax_label"])
    mod.fit(DataLoaderIter(_loader(8, 4, "discard")), num_epoch=1, optimizer_params={"learning_rate": 1e-4})
    assert mod.get_params()[0]["fc_weight"].shape == (1, 2)
