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


# -- test_symbol (late 1.x copy) ----------------------------------------------------------------

def test_set_attr_name_renames_node():
    import copy
    a = mx.sym.Variable('a')
    b = copy.copy(a)
    b._set_attr(name='b', foo='x')
    assert (a.name, b.name, b.list_attr()) == ('a', 'b', {'foo': 'x'})
    c = mx.sym.FullyConnected(a, num_hidden=2, name='fc')
    c._set_attr(name='fc2')
    assert c.list_outputs() == ['fc2_output']
    assert c.list_arguments() == ['a', 'fc_weight', 'fc_bias']  # MXNet: the variables keep their names


def test_tojson_marks_np_shape():
    import json
    with mx.np_shape(True):
        j = (mx.sym.var('a') + 1).tojson()
    assert json.loads(j)['attrs'] == {'is_np_shape': ['int', 1], 'mxnet_version': ['int', 10901]}
    assert j.endswith('"attrs": {\n    "is_np_shape": ["int", 1], \n    "mxnet_version": ["int", 10901]\n  }\n}')
    assert 'is_np_shape' not in json.loads((mx.sym.var('a') + 1).tojson())['attrs']


def test_gen_atomic_symbol():
    fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc')
    a = fc._gen_atomic_symbol()
    assert (a.name, a.list_arguments(), a.list_outputs(), a.list_attr()) == ('', [], ['output'], {'num_hidden': '3'})
    g = a(data=mx.sym.var('x'), name='g')
    assert g.list_arguments() == ['x', 'g_weight', 'g_bias'] and g.list_outputs() == ['g_output']
    rnn = mx.sym.RNN(mx.sym.var('d'), mx.sym.var('p'), mx.sym.var('h0'), mx.sym.var('h1'), state_size=10,
                     num_layers=2, bidirectional=True, state_outputs=True, mode='lstm')
    assert len(rnn._gen_atomic_symbol().list_outputs()) == 3


def test_partial_shape_through_conv_and_cast():
    data = mx.sym.Variable('data', shape=(1, 0, 0, 0))
    weight = mx.sym.Variable('weight')
    conv = mx.sym.Convolution(data=mx.sym.cast(data, dtype='float16'), weight=mx.sym.cast(weight, dtype='float16'),
                              pad=(3, 3), num_filter=64, stride=(2, 2), no_bias=True, kernel=(7, 7))
    arg, out, _ = conv.infer_shape_partial()
    assert arg == [(1, 0, 0, 0), (64, 0, 7, 7)] and out == [(1, 64, 0, 0)]
    conv = mx.sym.Convolution(mx.sym.Variable('data', shape=(2, 3, 0, 9)), pad=(1, 1), num_filter=4, kernel=(3, 3))
    assert conv.infer_shape_partial() == ([(2, 3, 0, 9), (4, 3, 3, 3), (4,)], [(2, 4, 0, 9)], [])
    fc = mx.sym.FullyConnected(mx.sym.var('d', shape=(2, 5)), mx.sym.cast(mx.sym.var('w'), dtype='float16'),
                               num_hidden=3, no_bias=True)
    assert fc.infer_shape_partial()[0] == [(2, 5), (3, 5)]


def test_get_optimized_symbol_cse(monkeypatch):
    # node counts of MXNet 1.9.1's get_optimized_symbol (MXNET_ELIMINATE_COMMON_EXPR on by default)
    a, b = mx.sym.var('a'), mx.sym.var('b')
    d = a + 1
    cases = [((a + b) + (a + b), 4, None), (mx.sym.Group([a * d, a * d]), 4, True),
             (mx.sym.Group([a * d + b, a * d + b]), 6, True),
             (mx.sym.relu(a) + mx.sym.relu(a), 3, None), (mx.sym.Dropout(a) + mx.sym.Dropout(a), 4, None)]
    for s, n, copy_name in cases:
        shapes = {k: (2, 3) for k in s.list_arguments()}
        o = s.simple_bind(mx.cpu(), **shapes).get_optimized_symbol()
        assert len(o.get_internals()) == n
        if copy_name:  # MXNet names the copy '<node>_<output index>_copy'
            first = o.list_outputs()[0]
            assert o.list_outputs()[1] == first[:-len('_output')] + '_0_copy_output'
        ex = s.simple_bind(mx.cpu(), **shapes)
        vals = {k: mx.nd.array(np.arange(6).reshape(2, 3)) for k in shapes}
        if 'Dropout' not in s.tojson():
            ref = [o.eval(ctx=mx.cpu(), **vals)[i].asnumpy() for i in range(len(o.list_outputs()))]
            got = [x.asnumpy() for x in ex.forward(**vals)]
            assert all(np.array_equal(r, g) for r, g in zip(ref, got))
    monkeypatch.setenv('MXNET_ELIMINATE_COMMON_EXPR', '0')
    s = (a + b) + (a + b)
    assert len(s.simple_bind(mx.cpu(), a=(2, 3), b=(2, 3)).get_optimized_symbol().get_internals()) == 5


# -- test_gluon: channels-last pooling (MXNet 1.9.1 CPU pools NWC / NHWC / NDHWC) ------------------

def test_pooling_channels_last_layouts():
    rng = np.random.RandomState(0)
    for layout, shp, kern in [('NWC', (2, 9, 3), (3,)), ('NHWC', (2, 7, 8, 3), (3, 2)),
                              ('NDHWC', (2, 5, 6, 7, 3), (2, 3, 2))]:
        for pt in ['max', 'avg', 'sum', 'lp']:
            for gp in [False, True]:
                kw = dict(kernel=kern, pool_type=pt, global_pool=gp, stride=(2,) * len(kern),
                          pad=(1,) * len(kern))
                if pt == 'lp':
                    kw['p_value'] = 2
                xn = rng.uniform(-1, 1, size=shp).astype('float32')
                outs = []
                for lay, arr in ((layout, xn), ('NC' + layout[1:-1], np.moveaxis(xn, -1, 1))):
                    x = mx.nd.array(arr)
                    x.attach_grad()
                    with mx.autograd.record():
                        y = mx.nd.Pooling(x, layout=lay, **kw)
                    y.backward(mx.nd.ones(y.shape))
                    sym_out = mx.sym.Pooling(mx.sym.var('d'), layout=lay, **kw).infer_shape(d=arr.shape)[1][0]
                    assert sym_out == y.shape
                    outs.append((y.asnumpy(), x.grad.asnumpy()))
                (y_cl, g_cl), (y_cf, g_cf) = outs
                np.testing.assert_allclose(y_cl, np.moveaxis(y_cf, 1, -1), rtol=1e-6, atol=1e-6)
                np.testing.assert_allclose(g_cl, np.moveaxis(g_cf, 1, -1), rtol=1e-6, atol=1e-6)
    # gluon layers: the NHWC output shape of test_gluon.test_pool's ceil_mode case
    layer = gluon.nn.MaxPool2D(3, ceil_mode=True, layout='NHWC')
    assert layer(mx.nd.zeros((2, 10, 10, 2))).shape == (2, 4, 4, 2)
    # a channels-last layout of the wrong rank is refused at creation
    try:
        mx.nd.Pooling(mx.nd.zeros((1, 4, 4, 2)), kernel=(2, 2), layout='NWC')
    except Exception as e:
        assert 'layout' in str(e)
    else:
        raise AssertionError('NWC with a 2-d kernel was accepted')


# -- test_gluon_trainer (1.x copy): sparse weights / gradients through the kvstore --------------

def _sparse_kv_step(kv, stype, grad_stype, update_on_kv, ctxs):
    params = gluon.ParameterDict()
    x = params.get('x', shape=(10, 1), lr_mult=1.0, stype=stype, grad_stype=grad_stype)
    params.initialize(ctx=ctxs, init='zeros')
    trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.1}, kvstore=kv, update_on_kvstore=update_on_kv)
    all_rows = mx.nd.arange(0, 10, ctx=mx.cpu(0))
    ws = x.list_data() if stype == 'default' else x.list_row_sparse_data(all_rows)  # outside record
    with mx.autograd.record():
        for w in ws:
            (w + 1).backward()
    trainer.step(1)
    w = x.data(mx.cpu(0)) if stype == 'default' else x.row_sparse_data(all_rows)
    return trainer, float(w.asnumpy().ravel()[0])


def test_trainer_sparse_kvstore_rules():
    # (kvstore type, update_on_kvstore, value) of MXNet 1.9.1 on two devices
    two = [mx.cpu(0), mx.cpu(1)]
    for kv in ('local', 'device'):
        for args, want in [(('default', 'row_sparse', None), False), (('default', 'row_sparse', True), True),
                           (('default', 'row_sparse', False), False), (('row_sparse', 'row_sparse', None), True)]:
            trainer, v = _sparse_kv_step(kv, *args, two)
            assert trainer._kvstore.type == kv and trainer._update_on_kvstore is want
            assert abs(v + 0.2) < 1e-6, (kv, args, v)  # the gradients of both devices summed
        try:
            _sparse_kv_step(kv, 'row_sparse', 'row_sparse', False, two)
        except ValueError as e:
            assert 'sparse weights' in str(e)
        else:
            raise AssertionError('update_on_kvstore=False with sparse weights was accepted')
    # one device: a sparse weight still gets a kvstore that updates (MXNet's _create_sparse_kvstore)
    trainer, v = _sparse_kv_step('device', 'row_sparse', 'row_sparse', None, [mx.cpu(0)])
    assert trainer._kvstore is not None and trainer._update_on_kvstore is True and abs(v + 0.1) < 1e-6
    # one device, dense weights: no kvstore and the flag left undecided (None), as MXNet
    for args in [('default', 'default', False), ('default', 'row_sparse', None), ('default', 'default', None)]:
        trainer, v = _sparse_kv_step('local', *args, [mx.cpu(0)])
        assert trainer._kvstore is None and trainer._update_on_kvstore is None and abs(v + 0.1) < 1e-6


def test_parameter_set_trainer_and_params_to_init():
    x = gluon.Parameter('x', shape=(10,), stype='row_sparse')
    x.initialize()
    t0 = gluon.Trainer([x], 'sgd')
    assert x._trainer is t0
    x._set_trainer(None)
    assert x._trainer is None
    x._set_trainer(t0)
    try:
        gluon.Trainer([x], 'sgd')
    except RuntimeError as e:
        assert 'More than one trainers' in str(e)
    else:
        raise AssertionError('a second Trainer for a row_sparse Parameter was accepted')
    d = gluon.Parameter('d', shape=(2,))
    d.initialize()
    assert gluon.Trainer([d], 'sgd')._params_to_init == []
    d2 = gluon.Parameter('d2', shape=(2,))
    d2._set_trainer(object())
    d2._set_trainer(object())  # dense parameters may change trainers


# -- test_kvstore (1.x copy, sparse parts) -------------------------------------------------------

def test_dense_inplace_with_sparse_operand_writes_in_place():
    # MXNet: d += row_sparse writes d (storage fallback); Python would rebind the name
    d = mx.nd.zeros((4, 4))
    d0 = d
    d += mx.nd.ones((4, 4)).tostype('row_sparse')
    d -= mx.nd.ones((4, 4)).tostype('row_sparse') * 3
    assert d is d0 and (d0.asnumpy() == -2).all()
    d *= mx.nd.ones((4, 4)).tostype('csr') * 2
    assert d is d0 and (d0.asnumpy() == -4).all()


def test_kvstore_updater_with_row_sparse_pushes():
    kv = mx.kv.create()
    kv.init(3, mx.nd.zeros((4, 4)))

    def upd(key, recv, local):
        local += recv
    kv._set_updater(upd)
    for _ in range(2):
        kv.push(3, [mx.nd.ones((4, 4), mx.cpu(i)).tostype('row_sparse') for i in range(4)])
    out = mx.nd.empty((4, 4))
    kv.pull(3, out=out)
    assert (out.asnumpy() == 8).all()


def test_kvstore_errors_are_mxnet_errors():
    from plexnet.base import MXNetError
    kv = mx.kv.create()
    kv.init(3, mx.nd.zeros((4, 4)))
    for call in (lambda: kv.row_sparse_pull(3, out=mx.nd.ones((4, 4)), row_ids=mx.nd.array([1])),
                 lambda: kv.init('a', mx.nd.ones((4, 4)))):
        try:
            call()
        except MXNetError as e:
            assert isinstance(e, TypeError)  # also a TypeError, as before
        else:
            raise AssertionError('accepted')


# -- test_gluon 1.6+: None arguments and input contexts of a hybridized block -----------------------

def test_hybridized_block_trailing_none_and_contexts():
    class FooDefault(gluon.HybridBlock):
        def hybrid_forward(self, F, a, b=None):
            return a if b is None else a + b

    one = mx.nd.ones((3,))
    for first in ((one,), (one, None)):
        blk = FooDefault()
        blk.hybridize()
        blk(*first)
        # the other form (a trailing None given or left out) uses the same cached graph
        assert (blk(one).asnumpy() == 1).all() and (blk(one, None).asnumpy() == 1).all()
        try:
            blk(one, one)
        except ValueError as e:
            assert 'does not match the cached version' in str(e)
        else:
            raise AssertionError('a changed argument structure was accepted')

    class Add(gluon.HybridBlock):
        def hybrid_forward(self, F, a, b):
            return a + b
    blk = Add()
    assert (blk(mx.nd.ones((2,), ctx=mx.cpu(1)), mx.nd.ones((2,), ctx=mx.cpu(1))).asnumpy() == 2).all()
    blk.hybridize()
    try:
        blk(mx.nd.ones((2,), ctx=mx.cpu(1)), mx.nd.ones((2,), ctx=mx.cpu(2)))
    except ValueError as e:
        assert 'multiple contexts' in str(e)
    else:
        raise AssertionError('inputs on two contexts were accepted by a hybridized block')


def test_op_hook_entry_names():
    # MXNet 1.9.1 (test_gluon.test_op_hook_output_names): the callback gets each entry's name,
    # '<node>_output' and, with monitor_all, '<node>_<input name>'
    def run(block, monitor_all):
        seen = []
        block.register_op_hook(lambda name, op, arr: seen.append((name, op, arr.shape)), monitor_all)
        block(mx.nd.ones((2, 3, 4)))
        mx.nd.waitall()
        return seen

    m = gluon.nn.HybridSequential(prefix='h_')
    with m.name_scope():
        m.add(gluon.nn.Dense(2, prefix='dense0_'))
    m.initialize()
    m.hybridize()
    assert run(m, False) == [('h_dense0_fwd_output', 'FullyConnected', (2, 2))]
    m = gluon.nn.HybridSequential(prefix='p_')
    with m.name_scope():
        m.add(gluon.nn.AvgPool1D(prefix='pool0_'))
    m.initialize()
    m.hybridize(static_alloc=True)
    assert run(m, True) == [('p_pool0_fwd_data', 'Pooling', (2, 3, 4)), ('p_pool0_fwd_output', 'Pooling', (2, 3, 2))]


def test_batchnorm_moving_stats_get_mxnets_init_attributes():
    # MXNet 1.9.1's FSetInputVarAttrOnCompose: moving_mean '["zero", {}]', moving_var
    # '["one", {}]' on the variables (also given ones without __init__), as in its JSON
    d = mx.sym.Variable("data")
    for s, n in ((mx.sym.BatchNorm(d, name="bn"), "bn"), (mx.sym.BatchNorm_v1(d, name="b1"), "b1"),
                 (mx.sym.contrib.SyncBatchNorm(d, key="k", name="sb"), "sb")):
        attrs = s.attr_dict()
        assert attrs[f"{n}_moving_mean"]["__init__"] == '["zero", {}]'
        assert attrs[f"{n}_moving_var"]["__init__"] == '["one", {}]'
    own = mx.sym.Variable("mm", init=mx.init.One())
    attrs = mx.sym.BatchNorm(d, moving_mean=own, name="b2").attr_dict()
    assert attrs["mm"]["__init__"] == '["one", {}]'          # an explicit init is kept
    assert attrs["b2_moving_var"]["__init__"] == '["one", {}]'
    assert "__init__" not in attrs.get("b2_gamma", {})
