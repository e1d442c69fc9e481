"""A file to read that does not exist: MXNet 1.9.1 raises ``MXNetError`` (``Open "<path>":
No such file or directory``) from every loader; plexnet raises ``FileOpenError``, which is
an ``MXNetError`` and a ``FileNotFoundError``, naming the path."""
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
