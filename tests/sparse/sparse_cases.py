"""Sparse cases shared by the MXNet fixture generator and the plexnet tests.

Each case is ``(name, expression)``; the expression runs with ``mx`` bound to MXNet 1.9.1
(fixtures/gen_sparse_fixtures.py) or plexnet (test_mxnet_fixtures.py).
"""
import numpy as np

D_NP = np.array([[0, 1, 0, 2], [0, 0, 0, 0], [3, 0, -4, 0]], dtype="float32")
D2_NP = np.array([[5, 0, 0, -1], [0, 0, 2, 0], [1, 0, 0, 0]], dtype="float32")
W_NP = np.arange(8, dtype="float32").reshape(4, 2) - 3
V_NP = np.arange(6, dtype="float32").reshape(3, 2) + 1
P_NP = np.array([[0.5, 0.25, 2, 1], [1, 1, 1, 1], [0.1, 0.2, 0.3, 0.4]], dtype="float32")  # no zeros


def make_inputs(mx):
    nd = mx.nd
    D, D2 = nd.array(D_NP), nd.array(D2_NP)
    return dict(D=D, D2=D2, C=D.tostype("csr"), C2=D2.tostype("csr"), R=D.tostype("row_sparse"),
                R2=D2.tostype("row_sparse"), W=nd.array(W_NP), V=nd.array(V_NP), P=nd.array(P_NP),
                B=nd.array(np.array([[1, 2, 3, 4]], dtype="float32")),
                COL=nd.array(np.array([[2], [3], [4]], dtype="float32")),
                D_NP=D_NP, D2_NP=D2_NP,
                GF=nd.sparse.row_sparse_array((np.ones((1, 3), "float32"), [1]), shape=(4, 3)))


UNARY = ("abs arccos arccosh arcsin arcsinh arctan arctanh cbrt ceil cos cosh degrees exp expm1 fix floor "
         "gamma gammaln log log10 log1p log2 negative radians relu rint round rsqrt sigmoid sign sin sinh "
         "sqrt square tan tanh trunc").split()

CASES = []
for _f in UNARY:
    # small magnitudes keep arccos/arctanh ... in their domains where values are non-zero
    CASES.append((f"unary_{_f}_csr", f"sp.{_f}((C * 0.1).tostype('csr'))"))
    CASES.append((f"unary_{_f}_rsp", f"sp.{_f}((R * 0.1))"))

_BIN = ["elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "add", "subtract", "multiply", "divide"]
_PAIRS = {"cc": ("C", "C2"), "rr": ("R", "R2"), "cd": ("C", "P"), "dc": ("P", "C"), "rd": ("R", "P"),
          "dr": ("P", "R"), "cr": ("C", "R2")}
for _f in _BIN:
    for _k, (_a, _b) in _PAIRS.items():
        CASES.append((f"bin_{_f}_{_k}", f"sp.{_f}({_a}, {_b})"))
for _f in ["broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_plus", "broadcast_minus"]:
    CASES.append((f"bcast_{_f}_c_row", f"sp.{_f}(C, B)"))
    CASES.append((f"bcast_{_f}_c_col", f"sp.{_f}(C, COL)"))
    CASES.append((f"bcast_{_f}_r_row", f"sp.{_f}(R, B)"))

CASES += [
    # creation
    ("csr_from_tuple", "sp.csr_matrix(([1., 2., 3.], [1, 0, 2], [0, 1, 2, 3]), shape=(3, 3))"),
    ("csr_explicit_zero", "sp.csr_matrix(([1., 0., 3.], [1, 0, 2], [0, 1, 2, 3]), shape=(3, 3))"),
    ("csr_from_coo", "sp.csr_matrix(([1., 2., 3.], ([0, 2, 2], [1, 0, 3])), shape=(3, 4))"),
    ("csr_from_dense_np", "sp.csr_matrix(D_NP)"),
    ("csr_from_dense_nd", "sp.csr_matrix(D)"),
    ("csr_shape_only", "sp.csr_matrix((2, 3))"),
    ("csr_dtype", "sp.csr_matrix(D_NP, dtype='float64')"),
    ("csr_from_csr", "sp.csr_matrix(C)"),
    ("rsp_from_tuple", "sp.row_sparse_array(([[1., 2.], [3., 4.]], [0, 2]), shape=(3, 2))"),
    ("rsp_from_dense", "sp.row_sparse_array(D_NP)"),
    ("rsp_shape_only", "sp.row_sparse_array((4, 2))"),
    ("rsp_from_rsp", "sp.row_sparse_array(R)"),
    ("zeros_csr", "sp.zeros('csr', (2, 3))"),
    ("zeros_rsp", "sp.zeros('row_sparse', (2, 3), dtype='float16')"),
    ("zeros_default", "sp.zeros('default', (2, 3))"),
    ("nd_zeros_csr", "nd.zeros((2, 3), stype='csr')"),
    ("nd_zeros_rsp", "nd.zeros((2, 3), stype='row_sparse')"),
    ("empty_csr", "sp.empty('csr', (2, 3))"),
    ("empty_rsp", "sp.empty('row_sparse', (2, 3))"),
    ("array_np", "sp.array(D_NP)"),
    ("array_csr", "sp.array(C)"),
    ("array_rsp", "sp.array(R, dtype='float64')"),
    ("nd_array_keeps_dense", "nd.array(C)"),
    # conversions
    ("tostype_d_csr", "D.tostype('csr')"), ("tostype_d_rsp", "D.tostype('row_sparse')"),
    ("tostype_csr_d", "C.tostype('default')"), ("tostype_rsp_d", "R.tostype('default')"),
    ("tostype_csr_csr", "C.tostype('csr')"), ("tostype_rsp_rsp", "R.tostype('row_sparse')"),
    ("tostype_csr_rsp", "C.tostype('row_sparse')"), ("tostype_rsp_csr", "R.tostype('csr')"),
    ("cast_storage_csr", "nd.cast_storage(D, stype='csr')"),
    ("cast_storage_sp_rsp", "sp.cast_storage(D, 'row_sparse')"),
    ("cast_storage_csr_default", "sp.cast_storage(C, stype='default')"),
    ("explicit_zero_tostype", "sp.csr_matrix(([1., 0., 3.], [1, 0, 2], [0, 1, 2, 3]), shape=(3, 3)).tostype('default')"),
    # properties
    ("csr_astype", "C.astype('float64')"), ("rsp_astype", "R.astype('int32')"),
    ("csr_copy", "C.copy()"), ("rsp_copy", "R.copy()"),
    ("csr_copyto_ctx", "C.copyto(mx.cpu())"),
    ("csr_copyto_dense", "C.copyto(nd.zeros((3, 4)))"),
    ("rsp_copyto_dense", "R.copyto(nd.zeros((3, 4)))"),
    ("csr_repr", "repr(C)"), ("rsp_repr", "repr(R)"),
    ("csr_asnumpy", "C.asnumpy()"),
    ("csr_slice", "C[1:3]"), ("csr_slice_0", "C[0:1]"), ("csr_index_int", "C[1]"),
    ("csr_slice_step", "C[0:3:2]"),
    ("rsp_getitem_full", "R[:]"), ("rsp_getitem_slice", "R[1:2]"),
    ("csr_indices_dtype", "C.indices"), ("csr_indptr", "C.indptr"), ("rsp_indices", "R.indices"),
    ("csr_data", "C.data"), ("rsp_data", "R.data"),
    ("csr_T", "C.T"),
    ("csr_reshape", "C.reshape((4, 3))"),
    ("rsp_sum_method", "R.sum()"),
    ("csr_len", "len(C)"),
    # scalar arithmetic
    ("csr_mul_scalar", "C * 2"), ("csr_rmul_scalar", "3 * C"), ("rsp_mul_scalar", "R * 2"),
    ("csr_div_scalar", "C / 2"), ("rsp_div_scalar", "R / 4"),
    ("csr_add_scalar", "C + 1"), ("rsp_add_scalar", "R + 1"), ("csr_sub_scalar", "C - 1"),
    ("csr_neg", "-C"), ("rsp_neg", "-R"),
    ("csr_add_csr_op", "C + C2"), ("rsp_add_rsp_op", "R + R2"), ("csr_add_dense_op", "C + D"),
    ("rsp_mul_rsp_op", "R * R2"), ("csr_sub_csr_op", "C - C2"),
    ("rsp_pow", "R ** 2"),
    # dot
    ("dot_csr_dns", "sp.dot(C, W)"), ("dot_csrT_dns", "sp.dot(C, V, transpose_a=True)"),
    ("dot_dns_csr", "sp.dot(V.T, C)"), ("dot_dns_csrT", "sp.dot(W.T, C, transpose_b=True)"),
    ("dot_rsp_dns", "sp.dot(R, W)"), ("dot_rspT_dns", "sp.dot(R, V, transpose_a=True)"),
    ("dot_csr_rsp", "sp.dot(C, W.tostype('row_sparse'))"),
    ("dot_csrT_rsp", "sp.dot(C, V.tostype('row_sparse'), transpose_a=True)"),
    ("dot_dns_rsp", "sp.dot(P, W.tostype('row_sparse'))"),
    ("nd_dot_csr", "nd.dot(C, W)"), ("nd_dot_csrT", "nd.dot(C, V, transpose_a=True)"),
    ("dot_csr_vec", "sp.dot(C, nd.array([1., 2., 3., 4.]))"),
    # reductions
    ("sum_csr", "sp.sum(C)"), ("sum_csr_ax0", "sp.sum(C, axis=0)"), ("sum_csr_ax1", "sp.sum(C, axis=1)"),
    ("sum_csr_ax1_keep", "sp.sum(C, axis=1, keepdims=True)"),
    ("sum_rsp", "sp.sum(R)"), ("sum_rsp_ax0", "sp.sum(R, axis=0)"), ("sum_rsp_ax1", "sp.sum(R, axis=1)"),
    ("mean_csr", "sp.mean(C)"), ("mean_csr_ax0", "sp.mean(C, axis=0)"), ("mean_csr_ax1", "sp.mean(C, axis=1)"),
    ("mean_rsp_ax1", "sp.mean(R, axis=1)"),
    ("norm_csr", "sp.norm(C)"), ("norm_rsp", "sp.norm(R)"), ("norm_csr_ax1", "sp.norm(C, axis=1)"),
    ("norm_csr_ax0", "sp.norm(C, axis=0)"), ("norm_rsp_ax1", "sp.norm(R, axis=1)"),
    ("norm_csr_ord1", "sp.norm(C, ord=1)"),
    # structural
    ("retain_rsp", "sp.retain(R, nd.array([0, 1]))"), ("gs_retain_rsp", "sp.gs_retain(R, nd.array([2]))"),
    ("retain_none", "sp.retain(R, nd.array([1]))"),
    ("slice_csr", "sp.slice(C, begin=(1, 1), end=(3, 3))"), ("slice_csr_rows", "sp.slice(C, begin=(0,), end=(2,))"),
    ("slice_csr_none", "sp.slice(C, begin=(1, None), end=(3, None))"),
    ("concat_csr0", "sp.concat(C, C2, dim=0)"), ("concat_csr1", "sp.concat(C, C2, dim=1)"),
    ("concat_rsp0", "sp.concat(R, R2, dim=0)"), ("concat_mixed", "sp.concat(C, D2, dim=0)"),
    ("where_csr", "sp.where(C, P, D2)"), ("where_rsp", "sp.where(R, P, D2)"),
    ("clip_csr", "sp.clip(C, -1, 1.5)"), ("clip_rsp", "sp.clip(R, -1, 1.5)"),
    ("clip_csr_pos", "sp.clip(C, 0.5, 1.5)"), ("clip_rsp_pos", "sp.clip(R, 0.5, 1.5)"),
    ("zeros_like_csr", "sp.zeros_like(C)"), ("zeros_like_rsp", "sp.zeros_like(R)"),
    ("zeros_like_dense", "sp.zeros_like(D)"),
    ("make_loss_csr", "sp.make_loss(C)"), ("make_loss_rsp", "sp.make_loss(R)"),
    ("stop_gradient_csr", "sp.stop_gradient(C)"), ("stop_gradient_rsp", "sp.stop_gradient(R)"),
    ("add_n_rsp", "sp.add_n(R, R2, R)"), ("add_n_csr", "sp.add_n(C, C2)"), ("add_n_mixed", "sp.add_n(R, D)"),
    ("ews_rsp", "sp.ElementWiseSum(R, R2)"),
    ("sparse_abs_dense", "sp.abs(D)"),
    ("sparse_square_csr_scaled", "sp.square(C)"),
    # layers
    ("fc_csr", "sp.FullyConnected(C, W.T, nd.array([1., 2.]), num_hidden=2)"),
    ("fc_csr_nobias", "sp.FullyConnected(C, W.T, no_bias=True, num_hidden=2)"),
    ("embedding", "sp.Embedding(nd.array([0, 2, 1]), W, input_dim=4, output_dim=2, sparse_grad=True)"),
    ("linreg", "sp.LinearRegressionOutput(C, D2)"),
    ("logreg", "sp.LogisticRegressionOutput(C, D2)"),
    ("maereg", "sp.MAERegressionOutput(C, D2)"),
    # misc
    ("mx_real_t", "sp.mx_real_t"), ("current_context", "sp.current_context()"),
    ("py_sum", "sp.py_sum([1, 2, 3])"), ("py_slice", "sp.py_slice(1, 3)"),
    ("check_format_ok", "sp.csr_matrix(([1., 2., 3.], [1, 0, 2], [0, 1, 2, 3]), shape=(3, 3)).check_format()"),
    ("check_format_bad_indptr",
     "sp.csr_matrix(([1., 2., 3.], [1, 0, 2], [0, 2, 1, 3]), shape=(3, 3)).check_format()"),
    ("check_format_bad_col",
     "sp.csr_matrix(([1., 2., 3.], [1, 0, 5], [0, 1, 2, 3]), shape=(3, 3)).check_format()"),
    ("check_format_unsorted",
     "sp.csr_matrix(([1., 2.], [2, 0], [0, 2, 2, 2]), shape=(3, 3)).check_format()"),
    ("check_format_unsorted_nofull",
     "sp.csr_matrix(([1., 2.], [2, 0], [0, 2, 2, 2]), shape=(3, 3)).check_format(full_check=False)"),
    ("check_format_rsp_bad",
     "sp.row_sparse_array(([[1., 2.], [3., 4.]], [2, 0]), shape=(3, 2)).check_format()"),
    ("check_format_rsp_oob",
     "sp.row_sparse_array(([[1., 2.], [3., 4.]], [0, 5]), shape=(3, 2)).check_format()"),
    ("csr_setitem_dense", "(lambda a: (a.__setitem__(slice(None), D2), a)[1])(C.copy())"),
    ("csr_setitem_csr", "(lambda a: (a.__setitem__(slice(None), C2), a)[1])(C.copy())"),
    ("rsp_setitem_dense", "(lambda a: (a.__setitem__(slice(None), D2), a)[1])(R.copy())"),
    ("rsp_setitem_rsp", "(lambda a: (a.__setitem__(slice(None), R2), a)[1])(R.copy())"),
    ("rsp_setitem_scalar", "(lambda a: (a.__setitem__(slice(None), 2.0), a)[1])(R.copy())"),
    ("csr_setitem_scalar", "(lambda a: (a.__setitem__(slice(None), 2.0), a)[1])(C.copy())"),
    ("csr_setitem_part", "(lambda a: (a.__setitem__(slice(0, 1), D2[0:1]), a)[1])(C.copy())"),
    ("csr_setitem_np", "(lambda a: (a.__setitem__(slice(None), D2_NP), a)[1])(C.copy())"),
    ("dense_setitem_csr", "(lambda a: (a.__setitem__(slice(None), C), a)[1])(nd.ones((3, 4)))"),
    ("csr_reshape_method", "C.reshape((2, 6))"),
    ("csr_broadcast_to", "C.broadcast_to((3, 4))"),
    ("csr_wait", "C.wait_to_read()"),
    ("csr_as_in_context", "C.as_in_context(mx.cpu())"),
    ("csr_context", "C.context"), ("rsp_dtype", "R.dtype"), ("csr_shape", "C.shape"),
    ("rsp_stype", "R.stype"), ("dense_stype", "D.stype"),
    ("csr_size", "C.size"),
    ("csr_fixed_int_data", "sp.csr_matrix(([1, 2], [0, 1], [0, 1, 2]), shape=(2, 2))"),
    ("csr_from_coo_dup", "sp.csr_matrix(([1., 2., 3.], ([0, 0, 1], [1, 1, 0])), shape=(2, 2))"),
    ("sgd_update_rsp", "(lambda w: (sp.sgd_update(w, R, lr=0.1, wd=0.1, out=w), w)[1])(nd.ones((3, 4)))"),
    ("sgd_update_rsp_nolazy",
     "(lambda w: (sp.sgd_update(w, R, lr=0.1, wd=0.1, lazy_update=False, out=w), w)[1])(nd.ones((3, 4)))"),
    ("sgd_mom_update_rsp", "(lambda w, m: (sp.sgd_mom_update(w, R, m, lr=0.1, momentum=0.9, wd=0.1, out=w), "
                           "sp.sgd_mom_update(w, R, m, lr=0.1, momentum=0.9, wd=0.1, out=w), [w, m])[2])"
                           "(nd.ones((3, 4)), nd.ones((3, 4)))"),
    ("adam_update_rsp", "(lambda w, m, v: (sp.adam_update(w, R, m, v, lr=0.1, wd=0.1, out=w), [w, m, v])[1])"
                        "(nd.ones((3, 4)), nd.ones((3, 4)) * 0.5, nd.ones((3, 4)) * 0.25)"),
    ("adam_update_rsp_nolazy",
     "(lambda w, m, v: (sp.adam_update(w, R, m, v, lr=0.1, wd=0.1, lazy_update=False, out=w), [w, m, v])[1])"
     "(nd.ones((3, 4)), nd.ones((3, 4)) * 0.5, nd.ones((3, 4)) * 0.25)"),
    ("adagrad_update_rsp", "(lambda w, h: (sp.adagrad_update(w, R, h, lr=0.1, out=w), [w, h])[1])"
                           "(nd.ones((3, 4)), nd.ones((3, 4)) * 0.5)"),
    ("ftrl_update_rsp", "(lambda w, z, n: (sp.ftrl_update(w, R, z, n, lr=0.1, lamda1=0.01, wd=0.1, out=w), "
                        "[w, z, n])[1])(nd.ones((3, 4)), nd.ones((3, 4)) * 0.5, nd.ones((3, 4)) * 0.25)"),
    ("ftrl_update_rsp_states",
     "(lambda w, z, n: (sp.ftrl_update(w, R, z, n, lr=0.1, lamda1=0.01, wd=0.1, out=w), [w, z, n])[1])"
     "(nd.ones((3, 4)).tostype('row_sparse'), (nd.ones((3, 4)) * 0.5).tostype('row_sparse'), "
     "(nd.ones((3, 4)) * 0.25).tostype('row_sparse'))"),
    ("sgd_update_rsp_weight_wd",
     "(lambda w: (sp.sgd_update(w, R, lr=0.1, wd=0.1, out=w), w)[1])(nd.ones((3, 4)).tostype('row_sparse'))"),
    ("sgd_mom_update_rsp_weight",
     "(lambda w, m: (sp.sgd_mom_update(w, R, m, lr=0.1, momentum=0.9, wd=0.1, out=w), [w, m])[1])"
     "(nd.ones((3, 4)).tostype('row_sparse'), nd.ones((3, 4)).tostype('row_sparse'))"),
    ("adagrad_update_dense_grad", "(lambda w, h: (sp.adagrad_update(w, D, h, lr=0.1, out=w), [w, h])[1])"
                                  "(nd.ones((3, 4)), nd.ones((3, 4)) * 0.5)"),
    ("sgd_update_dense", "(lambda w: (sp.sgd_update(w, D, lr=0.1, wd=0.1, out=w), w)[1])(nd.ones((3, 4)))"),
    ("sgd_update_rsp_weight",
     "(lambda w: (sp.sgd_update(w, R, lr=0.1, out=w), w)[1])(nd.ones((3, 4)).tostype('row_sparse'))"),
    # optimizers, kvstore
    ("kv_row_sparse_pull", "(lambda kv, o: (kv.init('w', nd.arange(12).reshape((4, 3)).tostype('row_sparse')), "
                           "kv.row_sparse_pull('w', out=o, row_ids=nd.array([2, 0, 2])), o)[2])"
                           "(mx.kv.create('local'), sp.zeros('row_sparse', (4, 3)))"),
    ("kv_row_sparse_pull_list", "(lambda kv, o1, o2: (kv.init('w', nd.arange(12).reshape((4, 3)).tostype('row_sparse')), "
                                "kv.row_sparse_pull('w', out=[o1, o2], row_ids=[nd.array([1]), nd.array([3, 0])]), "
                                "[o1, o2])[2])(mx.kv.create('local'), sp.zeros('row_sparse', (4, 3)), "
                                "sp.zeros('row_sparse', (4, 3)))"),
    ("kv_push_rsp_sgd", "(lambda kv, d: (kv.init('w', nd.ones((4, 3))), "
                        "kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, wd=0.1)), kv.push('w', GF), "
                        "kv.pull('w', out=d), d)[4])(mx.kv.create('local'), nd.zeros((4, 3)))"),
    ("kv_push_rsp_sum", "(lambda kv, d: (kv.init('w', nd.ones((4, 3))), kv.push('w', [GF, GF * 2]), "
                        "kv.pull('w', out=d), d)[3])(mx.kv.create('local'), nd.zeros((4, 3)))"),
]
for _o in ["SGD(learning_rate=0.1, wd=0.1)", "SGD(learning_rate=0.1, wd=0.1, momentum=0.9)",
           "SGD(learning_rate=0.1, wd=0.1, lazy_update=False)", "Adam(learning_rate=0.1, wd=0.1)",
           "AdaGrad(learning_rate=0.1)", "Ftrl(learning_rate=0.1)", "NAG(learning_rate=0.1, momentum=0.9, wd=0.1)",
           "RMSProp(learning_rate=0.1)"]:
    CASES.append((f"optimizer_{_o.split('(')[0]}_{len(CASES)}",
                  f"(lambda u, w: (u(0, GF, w), u(0, GF, w), w)[2])(mx.optimizer.get_updater(mx.optimizer.{_o}), "
                  f"nd.ones((4, 3)))"))

# comparisons, inferred shapes, fallbacks into sparse outputs, random fills (test_sparse_ndarray.py themes)
CASES += [
    ("cmp_eq_scalar_csr", "C == 0"), ("cmp_ne_scalar_rsp", "R != 0"), ("cmp_gt_scalar_csr", "C > 1"),
    ("cmp_lt_csr_csr", "C < C2"), ("cmp_eq_rsp_rsp", "R == R2"), ("cmp_ge_csr_dense", "C >= D2"),
    ("csr_infer_shape", "sp.csr_matrix(([1., 2.], [3, 1], [0, 1, 1, 2]))"),
    ("rsp_infer_shape", "sp.row_sparse_array(([[1., 2.], [3., 4.]], [1, 4]))"),
    ("fallback_into_csr_out", "(lambda o: (nd.broadcast_add(D, D2, out=o), o)[1])(sp.zeros('csr', (3, 4)))"),
    ("fallback_into_rsp_out", "(lambda o: (nd.exp(D * 0, out=o), o)[1])(sp.zeros('row_sparse', (3, 4)))"),
    ("sparse_out_unary", "(lambda o: (sp.sqrt(R, out=o), o)[1])(sp.zeros('row_sparse', (3, 4)))"),
    ("csr_sum_method", "C.sum(axis=0)"), ("csr_mean_method", "C.mean()"),
    ("csr_abs_method", "C.abs()"), ("rsp_square_method", "R.square()"),
    ("csr_dot_method", "C.dot(W)"),
    ("rsp_copyto_rsp", "(lambda o: (R.copyto(o), o)[1])(sp.zeros('row_sparse', (3, 4)))"),
    ("csr_astype_int", "C.astype('int64')"),
    ("rsp_3d", "nd.array(np.arange(24, dtype='float32').reshape(4, 3, 2) * np.array([0, 1, 0, 1], "
               "dtype='float32').reshape(4, 1, 1)).tostype('row_sparse')"),
    ("rsp_3d_sum", "sp.sum(nd.array(np.arange(24, dtype='float32').reshape(4, 3, 2)).tostype('row_sparse'), "
                   "axis=1)"),
    ("csr_empty_rows_slice", "sp.zeros('csr', (4, 3))[1:3]"),
    ("retain_empty", "sp.retain(sp.zeros('row_sparse', (4, 3)), nd.array([1, 3]))"),
    ("dot_csr_empty", "sp.dot(sp.zeros('csr', (3, 4)), W)"),
    ("dot_csrT_empty", "sp.dot(sp.zeros('csr', (3, 4)), V, transpose_a=True)"),
    ("elemwise_add_rsp_empty", "sp.elemwise_add(R, sp.zeros('row_sparse', (3, 4)))"),
    ("add_n_rsp_dense", "sp.add_n(R, R2, D)"),
    ("concat_csr_three", "sp.concat(C, C2, C, dim=0)"),
    ("slice_csr_neg", "sp.slice(C, begin=(-2, 0), end=(None, -1))"),
    ("embedding_dense_grad_flag", "sp.Embedding(nd.array([3, 0]), W, input_dim=4, output_dim=2)"),
    ("fc_rsp", "sp.FullyConnected(R, W.T, nd.array([1., 2.]), num_hidden=2)"),
    ("where_dense_cond_csr", "sp.where(D, C, C2)"),
    ("norm_csr_keepdims", "sp.norm(C, axis=1, keepdims=True)"),
    ("mean_rsp_ax0", "sp.mean(R, axis=0)"),
    ("nd_zeros_like_csr", "nd.zeros_like(C)"), ("nd_ones_like_csr", "nd.ones_like(C)"),
    ("nd_relu_csr", "nd.relu(C)"), ("nd_sigmoid_rsp", "nd.sigmoid(R)"),
    ("csr_neg_scalar_rsub", "1 - C"), ("rsp_rdiv", "1 / (R + 1)"),
    ("rsp_retain_method", "R.retain(nd.array([2, 1]))"),
]


def linear_classification(mx, data_path):
    """MXNet's example/sparse/linear_classification loop, imperatively: LibSVM batches,
    row_sparse_pull of the rows a batch uses, csr dot, a row_sparse gradient from
    dot(csr.T, .), a kvstore with a lazy SGD update. Returns the final weight and losses."""
    sp, nd = mx.nd.sparse, mx.nd
    num_features = 6
    kv = mx.kv.create("local")
    w0 = np.linspace(-0.5, 0.5, num_features * 2, dtype="float32").reshape(num_features, 2)
    kv.init("w", nd.array(w0).tostype("row_sparse"))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, wd=0.01, rescale_grad=0.5))
    it = mx.io.LibSVMIter(data_libsvm=data_path, data_shape=(num_features,), batch_size=2)
    w = sp.zeros("row_sparse", (num_features, 2))
    losses = []
    for _epoch in range(3):
        # MXNet: "reset() is expected to be called only after a complete pass of data"
        # (a reset before the first pass skips rows there)
        if _epoch:
            it.reset()
        for batch in it:
            x, y = batch.data[0], batch.label[0]
            kv.row_sparse_pull("w", out=w, row_ids=x.indices)
            z = sp.dot(x, w)                                  # (batch, 2) dense
            p = nd.softmax(z)
            onehot = nd.one_hot((y > 0).astype("float32"), 2)
            losses.append(float(-(onehot * nd.log(p + 1e-8)).sum().asscalar()))
            grad = sp.dot(x, p - onehot, transpose_a=True)    # row_sparse (features used x 2)
            kv.push("w", grad)
    out = nd.zeros((num_features, 2))
    kv.pull("w", out=out, ignore_sparse=False)
    return [out.asnumpy(), np.array(losses, dtype="float32")]


PROGRAMS = {"linear_classification": linear_classification}

# in-place operators, transposes, random fills into sparse outs (test_sparse_ndarray.py themes)
CASES += [
    ("iadd_rsp", "(lambda a: (a.__iadd__(R2), a)[1])(R.copy())"),
    ("imul_csr_scalar", "(lambda a: (a.__imul__(2), a)[1])(C.copy())"),
    ("nd_transpose_csr", "nd.transpose(C)"),
    ("nd_elemwise_add_out_rsp", "(lambda o: (nd.elemwise_add(R, R2, out=o), o)[1])(sp.zeros('row_sparse', (3, 4)))"),
    ("random_uniform_out_rsp", "(lambda o: (nd.random.uniform(-1, 1, shape=(3, 4), out=o), o.stype)[1])"
                               "(sp.zeros('row_sparse', (3, 4)))"),
    ("sparse_negate_data", "(-C).data"),
    ("csr_broadcast_mul_scalar_arr", "sp.broadcast_mul(C, nd.array([[2.]]))"),
    ("stype_after_copyto_ctx", "R.copyto(mx.cpu(0)).stype"),
    ("zeros_rsp_dense_copy", "sp.zeros('row_sparse', (3, 4)).copyto(nd.ones((3, 4)))"),
]

# dot corner cases (test_sparse_operator.py: test_sparse_dot, test_sparse_dot_zero_output)
CASES += [
    ("dot_csr_dnsT", "sp.dot(C, W.T, transpose_b=True)"),
    ("dot_csr_csr", "sp.dot(C, C2, transpose_b=True)"),
    ("dot_rsp_rsp", "sp.dot(R, W.tostype('row_sparse'))"),
    ("dot_csrT_zero_rows", "sp.dot(sp.csr_matrix((3, 4)), V, transpose_a=True)"),
    ("dot_csr_zero_rhs", "sp.dot(C, nd.zeros((4, 2)))"),
    ("dot_csrT_zero_rhs", "sp.dot(C, nd.zeros((3, 2)), transpose_a=True)"),
    ("dot_dns_csr_zero", "sp.dot(nd.zeros((2, 3)), C)"),
    ("dot_shape_mismatch", "sp.dot(C, V)"),
    ("dot_float64", "sp.dot(C.astype('float64'), W.astype('float64'))"),
    ("sum_csr_empty", "sp.sum(sp.zeros('csr', (3, 4)), axis=0)"),
    ("add_n_rsp_empty", "sp.add_n(sp.zeros('row_sparse', (3, 4)), R)"),
    ("elemwise_mul_csr_empty", "sp.elemwise_mul(C, sp.zeros('csr', (3, 4)))"),
]

CASES += [
    ("internal_mul_scalar_csr", "nd._internal._mul_scalar(C, scalar=2.0)"),
    ("internal_div_scalar_rsp", "nd._internal._div_scalar(R, scalar=2.0)"),
    ("internal_plus_scalar_csr", "nd._internal._plus_scalar(C, scalar=2.0)"),
]
