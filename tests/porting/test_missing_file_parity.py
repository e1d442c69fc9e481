"""Errors MXNet 1.9.1 raises where plexnet did not. A file to read that does not exist:
MXNet raises ``MXNetError`` (``Open "<path>": No such file or directory``) from every
loader; plexnet raises ``FileOpenError``, an ``MXNetError`` and a ``FileNotFoundError``,
naming the path. ``nd.random.randn()`` without a shape fails in MXNet's shape inference."""
import os

import pytest

import plexnet as mx

MISSING = os.path.join(os.sep, "nonexistent-plexnet-dir", "x")

LOADERS = {
    "nd.load": lambda: mx.nd.load(MISSING + ".params"),
    "sym.load": lambda: mx.sym.load(MISSING + "-symbol.json"),
    "MXRecordIO": lambda: mx.recordio.MXRecordIO(MISSING + ".rec", "r"),
    "MXIndexedRecordIO": lambda: mx.recordio.MXIndexedRecordIO(MISSING + ".idx", MISSING + ".rec", "r"),
    "load_checkpoint": lambda: mx.model.load_checkpoint(MISSING, 0),
    "SymbolBlock.imports": lambda: mx.gluon.SymbolBlock.imports(MISSING + "-symbol.json", ["data"]),
    "ImageIter": lambda: mx.image.ImageIter(1, (3, 8, 8), path_imgrec=MISSING + ".rec"),
    "ImageRecordIter": lambda: mx.io.ImageRecordIter(path_imgrec=MISSING + ".rec", data_shape=(3, 8, 8),
                                                     batch_size=1),
    "CSVIter": lambda: mx.io.CSVIter(data_csv=MISSING + ".csv", data_shape=(3,)),
    "MNISTIter": lambda: mx.io.MNISTIter(image=MISSING, label=MISSING + "-labels"),
    "LibSVMIter": lambda: mx.io.LibSVMIter(data_libsvm=MISSING, data_shape=(3,)),
}


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_missing_file_is_an_mxnet_error_naming_it(name):
    with pytest.raises(mx.base.MXNetError) as info:
        LOADERS[name]()
    assert isinstance(info.value, FileNotFoundError)
    assert "nonexistent-plexnet-dir" in str(info.value)


def test_randn_without_a_shape_is_an_error_as_in_mxnet():
    # MXNet 1.9.1: "Operator _random_normal inferring shapes failed" (randn passes shape ())
    with pytest.raises(mx.base.MXNetError, match="_random_normal"):
        mx.nd.random.randn()
    assert mx.nd.random.randn(2, 3).shape == (2, 3)
    assert mx.nd.random.randn(loc=mx.nd.zeros((2,)), scale=mx.nd.ones((2,))).shape == (2,)
