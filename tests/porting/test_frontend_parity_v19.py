"""Deviations found by running v1.x copies of MXNet's Gluon/Symbol/Module unit tests
(docs/porting.md, "v1.x Gluon/Symbol/Module copies (session 5)"); each value here was checked
against MXNet 1.9.1. No MXNet needed."""
import numpy as np

import plexnet as mx
from plexnet import gluon


def test_storage_type_ids_importable():
    # test_gluon imports this private table from mxnet.ndarray.ndarray
    from plexnet.ndarray.ndarray import _STORAGE_TYPE_ID_TO_STR, _STORAGE_TYPE_STR_TO_ID
    assert _STORAGE_TYPE_STR_TO_ID == {'undefined': -1, 'default': 0, 'row_sparse': 1, 'csr': 2}
    assert _STORAGE_TYPE_ID_TO_STR[1] == 'row_sparse'
    w = mx.sym.var('w', stype='row_sparse')
    assert w.attr('__storage_type__') == str(_STORAGE_TYPE_STR_TO_ID['row_sparse'])


def test_symbol_block_param_dtypes_follow_typed_input():
    # MXNet 1.9.1: SymbolBlock infers its parameters' dtypes from typed inputs; aux states and
    # BatchNorm's gamma/beta stay float32 under float16 data (its type inference)
    d = mx.sym.var('data', dtype='float16')
    out = mx.sym.BatchNorm(mx.sym.FullyConnected(d, num_hidden=3, name='fc'), name='bn')
    blk = gluon.SymbolBlock(out, d)
    got = {k: np.dtype(v.dtype).name for k, v in blk.params.items()}
    assert got == {'fc_weight': 'float16', 'fc_bias': 'float16', 'bn_gamma': 'float32',
                   'bn_beta': 'float32', 'bn_moving_mean': 'float32', 'bn_moving_var': 'float32'}
    # untyped input: float32 everywhere
    d = mx.sym.var('data')
    blk = gluon.SymbolBlock(mx.sym.FullyConnected(d, num_hidden=3, name='fc'), d)
    assert {np.dtype(v.dtype).name for v in blk.params.values()} == {'float32'}


def test_symbol_block_float64_export_reload(tmp_path):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, 3), gluon.nn.BatchNorm(), gluon.nn.Dense(2))
    net.initialize()
    net.cast('float64')
    net.hybridize()
    net(mx.nd.zeros((1, 3, 8, 8), dtype='float64'))
    prefix = str(tmp_path / 'm')
    net.export(prefix, 0)
    sm = mx.sym.load(prefix + '-symbol.json')
    blk = gluon.SymbolBlock(sm, mx.sym.var('data', dtype='float64'))
    blk.collect_params().load(prefix + '-0000.params')  # no dtype error: params are float64
    assert all(np.dtype(p.dtype) == np.float64 for p in blk.params.values())
    blk.cast('float32')
    assert blk(mx.nd.zeros((1, 3, 8, 8))).dtype == np.float32


def test_symbol_block_repr():
    d = mx.sym.var('data')
    fc = mx.sym.FullyConnected(d, num_hidden=3, name='fc')
    assert str(gluon.SymbolBlock(fc, d)) == 'SymbolBlock(\n<Symbol fc> : 1 -> 1\n)'
    two = gluon.SymbolBlock([fc, mx.sym.relu(fc, name='r')], d)
    assert str(two) == 'SymbolBlock(\n<Symbol group [fc, r]> : 1 -> 2\n)'


def test_parameter_dtype_setter_casts(tmp_path):
    # MXNet 1.9.1: Parameter.dtype = x casts initialized data; load(dtype_source='saved')
    # therefore leaves the saved dtype on the data
    p = gluon.Parameter('w', shape=(2, 2))
    p.initialize()
    p.dtype = 'float16'
    assert p.data().dtype == np.float16
    pd = gluon.ParameterDict('')
    pd.get('w0', shape=(3, 3), dtype='float32')
    pd.get('w1', shape=(3, 3), dtype='int8')
    pd.initialize(mx.init.One())
    f = str(tmp_path / 'p.params')
    pd.save(f)
    pd1 = gluon.ParameterDict('')
    pd1.get('w0', shape=(3, 3), dtype='float16')
    pd1.get('w1', shape=(3, 3), dtype='float64')
    pd1.load(f, cast_dtype=True, dtype_source='current')
    assert pd1['w0'].data().dtype == np.float16 and pd1['w1'].data().dtype == np.float64
    pd1.load(f, cast_dtype=True, dtype_source='saved')
    assert pd1['w0'].data().dtype == np.float32 and pd1['w1'].data().dtype == np.int8
    assert pd1['w1'].dtype == np.int8
