"""Cases shared by ``fixtures/make_mxnet_contrib.py`` (run on MXNet 1.9.1) and
``test_contrib_compat.py`` (run on plexnet): ``mx.contrib.io``, ``mx.contrib.svrg_optimization``
and ``mx.contrib.text``. Every case takes the framework module and returns plain JSON values
(NDArrays as nested lists, exceptions as their class name)."""
from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import logging
import os
import tempfile
import warnings
from collections import Counter
from typing import Any, Callable

import numpy as np


def _nd(a: Any) -> Any:
    return a.asnumpy().tolist()


def _err(fn: Callable[[], Any]) -> str:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class name is the recorded value
        return type(e).__name__
    return "no error"


# ---------------------------------------------------------------- contrib.io
IO_CASES = {
    "discard": dict(n=10, batch=4, last_batch="discard"),
    "keep": dict(n=10, batch=4, last_batch="keep"),
    "rollover": dict(n=10, batch=4, last_batch="rollover"),
    "keep_f16_names": dict(n=7, batch=3, last_batch="keep", dtype="float16", data_name="x", label_name="y"),
    "uint8_keep": dict(n=5, batch=2, last_batch="keep", uint8=True),
}


def io_case(mx: Any, name: str) -> dict:
    c = dict(IO_CASES[name])
    n, batch, last_batch = c.pop("n"), c.pop("batch"), c.pop("last_batch")
    x = np.arange(n * 3).reshape(n, 3)
    y = np.arange(n) % 4
    if c.pop("uint8", False):
        data = mx.nd.array(x, dtype="uint8")
    else:
        data = mx.nd.array(x.astype(np.float32))
    loader = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(data, y.astype(np.int32)), batch,
                                      last_batch=last_batch)
    it = mx.contrib.io.DataLoaderIter(loader, **c)
    out: dict = {"batch_size": it.batch_size, "dtype": it.dtype,
                 "provide_data": [(d.name, list(d.shape), np.dtype(d.dtype).name) for d in it.provide_data],
                 "provide_label": [(d.name, list(d.shape), np.dtype(d.dtype).name) for d in it.provide_label]}
    for epoch in range(2):
        batches = []
        for b in it:
            batches.append({"pad": b.pad, "index": b.index,
                            "data": [(np.dtype(d.dtype).name, _nd(d)[:b.data[0].shape[0] - b.pad]) for d in b.data],
                            "label": [(np.dtype(d.dtype).name, _nd(d)[:b.label[0].shape[0] - b.pad])
                                      for d in b.label],
                            "shapes": [list(d.shape) for d in b.data + b.label]})
        out[f"epoch{epoch}"] = batches
        it.reset()
    return out


# ---------------------------------------------------------------- svrg_optimization
def _linreg(mx: Any, n: int, batch: int, handle: str = "pad") -> tuple[Any, Any]:
    rng = np.random.RandomState(3)
    x = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
    y = (x @ np.array([1.5, -2.0], dtype=np.float32) + 0.5).astype(np.float32)
    di = mx.io.NDArrayIter(x, y, batch_size=batch, shuffle=False, label_name="lin_reg_label",
                           last_batch_handle=handle)
    fc = mx.sym.FullyConnected(mx.sym.var("data"), name="fc1", num_hidden=1)
    return di, mx.sym.LinearRegressionOutput(fc, mx.sym.var("lin_reg_label"), name="lro")


SVRG_FIT_CASES = {
    "sgd_local": dict(optimizer="sgd", optimizer_params=(("learning_rate", 0.1),), kvstore="local", update_freq=2),
    "sgd_padded_freq1": dict(optimizer="sgd", optimizer_params=(("learning_rate", 0.1),), kvstore="local",
                             update_freq=1, n=14),
    "momentum_wd": dict(optimizer="sgd", optimizer_params={"learning_rate": 0.05, "momentum": 0.9, "wd": 0.01},
                        kvstore="local", update_freq=2),
    "adam_no_kvstore": dict(optimizer="adam", optimizer_params=(("learning_rate", 0.05),), kvstore=None,
                            update_freq=3),
    "optimizer_instance": dict(optimizer="sgd_instance", kvstore="local", update_freq=2),
    "roll_over": dict(optimizer="sgd", optimizer_params=(("learning_rate", 0.1),), kvstore="local",
                      update_freq=2, n=14, handle="roll_over"),
    "two_contexts": dict(optimizer="sgd", optimizer_params=(("learning_rate", 0.1),), kvstore="local",
                         update_freq=2, contexts=2),
    "two_contexts_device": dict(optimizer="sgd", optimizer_params=(("learning_rate", 0.1),), kvstore="device",
                                update_freq=2, contexts=2),
}


def _svrg(mx: Any) -> Any:
    return importlib.import_module(mx.__name__ + ".contrib.svrg_optimization.svrg_module")


def _opt_mod(mx: Any) -> Any:
    return importlib.import_module(mx.__name__ + ".contrib.svrg_optimization.svrg_optimizer")


def svrg_fit_case(mx: Any, name: str) -> dict:
    """Weights after every epoch and the metric after every batch of a short SVRG fit."""
    c = SVRG_FIT_CASES[name]
    di, sym = _linreg(mx, c.get("n", 16), 4, c.get("handle", "pad"))
    ctx = [mx.cpu(i) for i in range(c.get("contexts", 1))]
    mod = _svrg(mx).SVRGModule(sym, data_names=["data"], label_names=["lin_reg_label"], context=ctx,
                               update_freq=c["update_freq"], logger=logging.getLogger("svrg_case"))
    epochs: list = []
    batches: list = []
    full_grads: list = []
    orig_update_full = mod.update_full_grads

    def update_full(train_data: Any) -> None:
        orig_update_full(train_data)
        full_grads.append({k: _nd(v) for k, v in sorted(mod._param_dict[0].items())})
    mod.update_full_grads = update_full
    if c["optimizer"] == "sgd_instance":
        opt, params = mx.optimizer.SGD(learning_rate=0.1), (("learning_rate", 0.1),)
    else:
        opt, params = c["optimizer"], c["optimizer_params"]
    mod.fit(di, eval_metric="mse", optimizer=opt, optimizer_params=params, num_epoch=4, kvstore=c["kvstore"],
            initializer=mx.init.Constant(0.25),
            epoch_end_callback=lambda e, s, arg, aux: epochs.append({k: _nd(v) for k, v in sorted(arg.items())}),
            batch_end_callback=lambda p: batches.append([p.epoch, p.nbatch, p.eval_metric.get()[1],
                                                         _nd(p.locals["data_batch"].data[0])[0]]))
    return {"epochs": epochs, "batches": batches, "full_grads": full_grads,
            "update_on_kvstore": bool(mod._update_on_kvstore), "kvstore": mod._kvstore is not None,
            "idx2name": sorted((int(k), v) for k, v in mod._optimizer.idx2name.items()),
            "optimizer": [type(mod._optimizer).__name__, type(mod._optimizer.default_opt).__name__,
                          type(mod._optimizer.aux_opt).__name__, mod._optimizer.rescale_grad,
                          mod._optimizer.default_opt.rescale_grad]}


def svrg_steps_case(mx: Any) -> dict:
    """update_full_grads, then three forward/backward/update steps by hand; the special
    weights of the auxiliary module stay at the snapshot."""
    di, sym = _linreg(mx, 10, 4)   # 3 batches, the last padded by 2
    mod = _svrg(mx).SVRGModule(sym, data_names=["data"], label_names=["lin_reg_label"], update_freq=2)
    mod.bind(data_shapes=di.provide_data, label_shapes=di.provide_label)
    mod.init_params(initializer=mx.init.Constant(0.5))
    mod.init_optimizer(kvstore="local", optimizer="sgd", optimizer_params=(("learning_rate", 0.2),))
    out: dict = {"binded_aux": mod._mod_aux.binded, "params_aux": mod._mod_aux.params_initialized,
                 "param_dict0": {k: _nd(v) for k, v in sorted(mod._param_dict[0].items())}}
    mod.update_full_grads(di)
    out["full"] = {k: _nd(v) for k, v in sorted(mod._param_dict[0].items())}
    steps = []
    di.reset()
    for batch in di:
        mod.forward_backward(batch)
        grads = [_nd(g[0]) for g in mod._exec_group.grad_arrays]
        aux_grads = [_nd(g[0]) for g in mod._mod_aux._exec_group.grad_arrays]
        mod.update()
        steps.append({"grads": grads, "aux_grads": aux_grads,
                      "svrg_grads": [_nd(g[0]) for g in mod._exec_group.grad_arrays],
                      "weights": {k: _nd(v) for k, v in sorted(mod.get_params()[0].items())},
                      "aux_weights": {k: _nd(v) for k, v in sorted(mod._mod_aux.get_params()[0].items())},
                      "outputs": _nd(mod.get_outputs()[0])})
    out["steps"] = steps
    # predicting: forward without is_train leaves the auxiliary module alone
    mod.forward(batch, is_train=False)
    out["predict"] = _nd(mod.get_outputs()[0])
    mod.reshape(data_shapes=[("data", (2, 2))], label_shapes=[("lin_reg_label", (2,))])
    out["reshaped"] = [list(mod._exec_group.data_shapes[0][1]), list(mod._mod_aux._exec_group.data_shapes[0][1])]
    return out


def svrg_misc_case(mx: Any) -> dict:
    svrg, opt_mod = _svrg(mx), _opt_mod(mx)
    di, sym = _linreg(mx, 8, 4)
    out: dict = {}
    for label, freq in (("zero", 0), ("negative", -2), ("none", None), ("float", 2.0), ("str", "2")):
        out[f"update_freq_{label}"] = _err(lambda freq=freq: svrg.SVRGModule(sym, data_names=["data"],
                                                                   label_names=["lin_reg_label"], update_freq=freq))
    mod = svrg.SVRGModule(sym, data_names=["data"], label_names=["lin_reg_label"], update_freq=3)
    out["attrs"] = [mod.update_freq, mod._param_dict, mod._ctx_len, type(mod._mod_aux).__name__]
    mod.bind(data_shapes=di.provide_data, label_shapes=di.provide_label, for_training=False)
    out["predict_bind_aux"] = mod._mod_aux.binded
    out["fit_without_epochs"] = _err(lambda freq=freq: svrg.SVRGModule(sym, data_names=["data"], label_names=["lin_reg_label"],
                                                             update_freq=1).fit(di))
    # the wrapping optimizer on its own
    opt = opt_mod._SVRGOptimizer(default_optimizer="sgd", momentum=0.9, learning_rate=0.5, wd=0.1,
                                 param_idx2name={0: "w", 1: "w_full"}, rescale_grad=0.5)
    out["check_params"] = sorted(opt_mod._SVRGOptimizer._check_params(
        learning_rate=1, momentum=0.9, wd=0.1, rescale_grad=2, clip_gradient=1, foo=3, param_idx2name={},
        lr_scheduler=None, sym=None, begin_num_update=0, multi_precision=False, param_dict=None))
    out["opt"] = [opt.lr, opt.wd, opt.rescale_grad, opt.default_opt.lr, opt.default_opt.momentum,
                  opt.default_opt.wd, opt.default_opt.rescale_grad, type(opt.aux_opt).__name__,
                  opt._check_index(0), opt._check_index("w_full"), opt._check_index(1)]
    w, full, g = mx.nd.ones((3,)), mx.nd.ones((3,)), mx.nd.array([1.0, 2.0, 3.0])
    s_w, s_full = opt.create_state(0, w), opt.create_state(1, full)
    out["states"] = [None if s_w is None else _nd(s_w), s_full]
    opt.update(0, w, g, s_w)
    opt.update(1, full, g, s_full)
    opt.update("w_full", full, g * 2, None)
    out["updated"] = [_nd(w), _nd(full)]
    assign = mx.optimizer.create("_AssignmentOptimizer")
    x = mx.nd.zeros((2,))
    assign.update(0, x, mx.nd.array([4.0, 5.0]), None)
    out["assign"] = [type(assign).__name__, _nd(x), _err(lambda: opt._check_index(7))]
    registered = mx.optimizer.Optimizer.opt_registry
    out["registered"] = ["_svrgoptimizer" in registered, "_assignmentoptimizer" in registered]
    return out


# ---------------------------------------------------------------- contrib.text
def text_utils_case(mx: Any) -> dict:
    utils = mx.contrib.text.utils
    out = {}
    for label, td, sd in (("space", " ", "\n"), ("words", "IS", "LIFE"), ("regex", r"\*", r"\|")):
        tokens = [["Life", "is", "great", "!"], ["life", "is", "good", "."], ["life", "isn't", "bad", "."]]
        src = "".join(td.replace("\\", "") + td.replace("\\", "").join(s) + td.replace("\\", "")
                      + sd.replace("\\", "") for s in tokens)
        out[label] = [sorted(utils.count_tokens_from_str(src, td, sd).items()),
                      sorted(utils.count_tokens_from_str(src, td, sd, to_lower=True).items())]
        upd = Counter({"life": 2})
        res = utils.count_tokens_from_str(src, td, sd, to_lower=True, counter_to_update=upd)
        out[label].append([res is upd, sorted(res.items())])
    return out


VOCAB_CASES = {
    "plain": dict(),
    "min_freq2": dict(min_freq=2),
    "min_freq100": dict(min_freq=100),
    "most2": dict(most_freq_count=2),
    "most3": dict(most_freq_count=3),
    "most100": dict(most_freq_count=100),
    "most1_min2": dict(most_freq_count=1, min_freq=2),
    "reserved_b": dict(unknown_token="<unknown>", reserved_tokens=["b"]),
    "reserved_ba_min2": dict(min_freq=2, reserved_tokens=["b", "a"]),
    "reserved_bc_min100": dict(min_freq=100, reserved_tokens=["b", "c"]),
    "reserved_pad_b_most1": dict(most_freq_count=1, min_freq=2, reserved_tokens=["<pad>", "b"]),
    "unknown_is_counted": dict(min_freq=2, unknown_token="b", reserved_tokens=["<pad>"]),
    "most0": dict(most_freq_count=0, reserved_tokens=["<pad>"]),
    "no_counter": dict(counter=None, reserved_tokens=["<pad>", "<bos>"]),
    "ties_int_tokens": dict(counter=Counter([3, 1, 2, 2, 1, 5, 4, 4])),
    "ties_tuple_tokens": dict(counter=Counter([("a", 1), ("a", 0), ("b", 0), ("a", 0)]), unknown_token=("<u>",)),
    "err_min_freq0": dict(min_freq=0),
    "err_dup_reserved": dict(reserved_tokens=["b", "b"]),
    "err_unknown_reserved": dict(unknown_token="<unknown>", reserved_tokens=["b", "<unknown>"]),
    "err_not_counter": dict(counter={"a": 1}),
}


def vocab_case(mx: Any, name: str) -> dict:
    kwargs = dict(VOCAB_CASES[name])
    counter = kwargs.pop("counter", Counter(["a", "b", "b", "c", "c", "c", "some_word$"]))
    try:
        v = mx.contrib.text.vocab.Vocabulary(counter, **kwargs)
    except Exception as e:  # noqa: BLE001
        return {"error": type(e).__name__}
    tokens = list(v.idx_to_token)
    return {"idx_to_token": [list(t) if isinstance(t, tuple) else t for t in tokens],
            "token_to_idx": sorted([str(k), i] for k, i in v.token_to_idx.items()),
            "len": len(v), "unknown": v.unknown_token if not isinstance(v.unknown_token, tuple) else "tuple",
            "reserved": v.reserved_tokens,
            "to_indices": [v.to_indices(tokens[-1]), v.to_indices([tokens[-1]]), v.to_indices(["zz", tokens[0]])],
            "to_tokens": [v.to_tokens(0) if not isinstance(tokens[0], tuple) else "tuple",
                          v.to_tokens([len(v) - 1, 0]) if not isinstance(tokens[0], tuple) else "tuple"],
            "errors": [_err(lambda: v.to_tokens(len(v))), _err(lambda: v.to_tokens([0, 1.0])),
                       _err(lambda: v.to_tokens(-1))]}


def _write(root: str, name: str, rows: list[list[str]], delim: str = "\t") -> str:
    path = os.path.join(root, name)
    with open(path, "w", encoding="utf8") as f:
        f.write("".join(delim.join(r) + "\n" for r in rows))
    return path


FILES = {
    "e1": [["a", "0.1", "0.2", "0.3", "0.4", "0.5"], ["b", "0.6", "0.7", "0.8", "0.9", "1.0"]],
    "e2": [["a", "0.01", "0.02", "0.03", "0.04", "0.05"], ["c", "0.06", "0.07", "0.08", "0.09", "0.1"]],
    "e3": [["a", "0.1", "0.2", "0.3", "0.4", "0.5"], ["b", "0.6", "0.7", "0.8", "0.9", "1.0"],
           ["<unk1>", "1.1", "1.2", "1.3", "1.4", "1.5"]],
    "e4": [["a", "0.01", "0.02", "0.03", "0.04", "0.05"], ["c", "0.06", "0.07", "0.08", "0.09", "0.1"],
           ["<unk2>", "0.11", "0.12", "0.13", "0.14", "0.15"]],
    "header_dup": [["3", "2"], ["x", "1", "2"], ["<unk>", "7", "8"], ["X", "3", "4"], ["x", "5", "6"],
                   ["<unk>", "9", "9"], ["y", "-1", "0.5"]],
    "bad_one_elem": [["a", "0.1", "0.2"], ["b", "0.6", "0.7"], ["c"]],
    "bad_dims": [["a", "0.1", "0.2"], ["b", "0.6", "0.7"], ["c", "0.6", "0.7", "0.8"]],
}


def _vecs(e: Any) -> dict:
    return {"idx_to_token": list(e.idx_to_token), "token_to_idx": sorted(e.token_to_idx.items()),
            "len": len(e), "vec_len": e.vec_len, "idx_to_vec": _nd(e.idx_to_vec),
            "unknown": e.unknown_token, "reserved": e.reserved_tokens}


def embedding_case(mx: Any) -> dict:
    with tempfile.TemporaryDirectory(prefix="contrib_text_") as root:
        return _embedding_case(mx, root)


def _embedding_case(mx: Any, root: str) -> dict:
    text, nd = mx.contrib.text, mx.nd
    p = {k: _write(root, k + ".txt", rows) for k, rows in FILES.items()}
    p["space"] = _write(root, "space.txt", FILES["e1"], " ")
    out: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        e1 = text.embedding.CustomEmbedding(p["e1"], "\t")
        out["e1"] = _vecs(e1)
        out["e1_lookups"] = [_nd(e1.get_vecs_by_tokens("A")), _nd(e1.get_vecs_by_tokens("A", lower_case_backup=True)),
                             _nd(e1.get_vecs_by_tokens(["b", "zz", "B"], True)),
                             _nd(e1.get_vecs_by_tokens(["b"]))]
        out["space_default_delim"] = _vecs(text.embedding.CustomEmbedding(p["space"]))
        out["e3_unk_init_ones"] = _vecs(text.embedding.CustomEmbedding(p["e3"], "\t", init_unknown_vec=nd.ones,
                                                                       unknown_token="<unk>"))
        out["e3_unk_loaded"] = _vecs(text.embedding.CustomEmbedding(p["e3"], "\t", init_unknown_vec=nd.ones,
                                                                    unknown_token="<unk1>"))
        out["header_dup"] = _vecs(text.embedding.CustomEmbedding(p["header_dup"], "\t"))
        out["reserved_kw"] = _vecs(text.embedding.CustomEmbedding(p["e1"], "\t", reserved_tokens=["<pad>"]))
        n_warn = len(caught)
    out["warnings"] = n_warn
    out["bad"] = [_err(lambda: text.embedding.CustomEmbedding(p["bad_one_elem"], "\t")),
                  _err(lambda: text.embedding.CustomEmbedding(p["bad_dims"], "\t")),
                  _err(lambda: text.embedding.CustomEmbedding(os.path.join(root, "missing.txt"), "\t")),
                  _err(lambda: text.embedding.CustomEmbedding(p["e1"], "\t", vocabulary="not a vocab"))]
    counter = Counter(["a", "b", "b", "c", "c", "c", "some_word$"])
    v = text.vocab.Vocabulary(counter, most_freq_count=None, min_freq=1, unknown_token="<unk>",
                              reserved_tokens=["<pad>"])
    e_v = text.embedding.CustomEmbedding(p["e1"], "\t", vocabulary=v)
    out["with_vocab"] = _vecs(e_v)
    out["with_vocab_shares"] = [e_v.token_to_idx is v.token_to_idx, e_v.idx_to_token is v.idx_to_token]
    e_v.update_token_vectors("<unk>", nd.array([9, 9, 9, 9, 9]))
    e_v.update_token_vectors(["a"], nd.array([[1, 1, 1, 1, 1]]))
    e_v.update_token_vectors(["b", "c"], nd.array([[2, 2, 2, 2, 2], [3, 3, 3, 3, 3]]))
    out["updated"] = _nd(e_v.idx_to_vec)
    out["update_errors"] = [
        _err(lambda: e_v.update_token_vectors("zz", nd.ones((5,)))),
        _err(lambda: e_v.update_token_vectors(["a", "b"], nd.ones((5,)))),
        _err(lambda: e_v.update_token_vectors(["a", "b"], nd.ones((3, 5)))),
        _err(lambda: e_v.update_token_vectors("a", nd.ones((1, 4)))),
        _err(lambda: e_v.update_token_vectors("a", [1, 2, 3, 4, 5]))]
    e2 = text.embedding.CustomEmbedding(p["e2"], "\t")
    e4 = text.embedding.CustomEmbedding(p["e4"], "\t", init_unknown_vec=nd.ones, unknown_token="<unk2>")
    comp = text.embedding.CompositeEmbedding(v, [e1, e4])
    out["composite"] = _vecs(comp)
    out["composite_lookups"] = [_nd(comp.get_vecs_by_tokens(["a", "zz"])), _nd(comp.get_vecs_by_tokens("c"))]
    comp.update_token_vectors(["a", "<unk>"], nd.array([list(range(10)), list(range(10, 20))]))
    out["composite_updated"] = _nd(comp.idx_to_vec)
    out["composite_single"] = _vecs(text.embedding.CompositeEmbedding(v, e2))
    out["composite_errors"] = [_err(lambda: text.embedding.CompositeEmbedding("x", [e1])),
                               _err(lambda: text.embedding.CompositeEmbedding(v, [e1, "x"]))]
    return out


def _digest(obj: Any) -> str:
    return hashlib.sha1(json.dumps(obj, sort_keys=True).encode()).hexdigest()


def registry_case(mx: Any) -> dict:
    emb = mx.contrib.text.embedding
    names = emb.get_pretrained_file_names()
    out: dict = {"names": sorted(names), "glove": emb.get_pretrained_file_names("glove"),
                 "n_fasttext": len(names["fasttext"]), "fasttext_digest": _digest(names["fasttext"]),
                 "unknown_name": _err(lambda: emb.get_pretrained_file_names("nope")),
                 "glove_tables": [_digest(emb.GloVe.pretrained_file_name_sha1),
                                  _digest(emb.GloVe.pretrained_archive_name_sha1)],
                 "fasttext_tables": [_digest(emb.FastText.pretrained_file_name_sha1),
                                     _digest(emb.FastText.pretrained_archive_name_sha1)]}
    os.environ.pop("MXNET_GLUON_REPO", None)
    out["urls"] = [emb.GloVe._get_pretrained_file_url("glove.6B.50d.txt"),
                   emb.GloVe._get_pretrained_file_url("glove.twitter.27B.25d.txt"),
                   emb.GloVe._get_pretrained_file_url("glove.840B.300d.txt"),
                   emb.FastText._get_pretrained_file_url("wiki.en.vec"),
                   emb.FastText._get_pretrained_file_url("crawl-300d-2M.vec"),
                   emb.FastText._get_pretrained_file_url("wiki.zh_classical.vec")]
    os.environ["MXNET_GLUON_REPO"] = "http://mirror.example/"
    out["urls"].append(emb.GloVe._get_pretrained_file_url("glove.6B.50d.txt"))
    del os.environ["MXNET_GLUON_REPO"]
    out["bad_file"] = [_err(lambda: emb.create("glove", pretrained_file_name="nope.txt")),
                       _err(lambda: emb.create("FastText", pretrained_file_name="nope.vec")),
                       _err(lambda: emb.create("nosuch")),
                       _err(lambda: emb.GloVe._check_pretrained_file_names("glove.6B.50d.zip"))]

    # a pre-trained embedding whose file is already in place loads without network (MXNet's
    # test_download_embed with the file put there first)
    with tempfile.TemporaryDirectory(prefix="contrib_emb_") as root:
        _local_embedding(mx, emb, root, out)
    out["not_subclass"] = _err(lambda: emb.register(dict))
    return out


def _local_embedding(mx: Any, emb: Any, root: str, out: dict) -> None:
    os.makedirs(os.path.join(root, "casetest"))
    content = "hello 1 2 3 4 5\nworld 6 7 8 9 10\n"
    with open(os.path.join(root, "casetest", "embedding_test.vec"), "w") as f:
        f.write(content)

    class CaseTest(emb._TokenEmbedding):
        pretrained_file_name_sha1 = {"embedding_test.vec": hashlib.sha1(content.encode()).hexdigest()}

        def __init__(self, embedding_root: str = "embeddings", init_unknown_vec: Any = mx.nd.zeros,
                     **kwargs: Any) -> None:
            CaseTest._check_pretrained_file_names("embedding_test.vec")
            super().__init__(**kwargs)
            path = CaseTest._get_pretrained_file(embedding_root, "embedding_test.vec")
            self._load_embedding(path, " ", init_unknown_vec)

    assert emb.register(CaseTest) is CaseTest
    made = emb.create("casetest", embedding_root=root)
    made2 = emb.create("CaseTest", embedding_root=root, unknown_token="<u>", reserved_tokens=["<p>"])
    out["local_file"] = [type(made).__name__, _vecs(made), _vecs(made2),
                         "casetest" in emb.get_pretrained_file_names(),
                         emb.get_pretrained_file_names("casetest")]


# ---------------------------------------------------------------- signatures
SIGNATURES = {
    "contrib.io": {"DataLoaderIter": ["__init__", "reset", "iter_next", "getdata", "getlabel", "getpad",
                                      "getindex"]},
    "contrib.svrg_optimization.svrg_module": {
        "SVRGModule": ["__init__", "_reset_bind", "reshape", "init_optimizer", "_create_optimizer", "bind",
                       "forward", "backward", "update", "update_full_grads", "_accumulate_kvstore",
                       "_allocate_gradients", "_svrg_grads_update_rule", "_update_svrg_gradients", "fit",
                       "prepare"]},
    "contrib.svrg_optimization.svrg_optimizer": {
        "_AssignmentOptimizer": ["update"],
        "_SVRGOptimizer": ["__init__", "_check_params", "update", "create_state", "_check_index"]},
    "contrib.text.vocab": {"Vocabulary": ["__init__", "__len__", "to_indices", "to_tokens"]},
    "contrib.text.utils": {"count_tokens_from_str": None},
    "contrib.text.embedding": {
        "register": None, "create": None, "get_pretrained_file_names": None,
        "_TokenEmbedding": ["_get_download_file_name", "_get_pretrained_file_url", "_get_pretrained_file",
                            "_load_embedding", "_index_tokens_from_vocabulary", "_set_idx_to_vec_by_embeddings",
                            "_build_embedding_for_vocabulary", "get_vecs_by_tokens", "update_token_vectors",
                            "_check_pretrained_file_names"],
        "GloVe": ["__init__", "_get_download_file_name"], "FastText": ["__init__", "_get_download_file_name"],
        "CustomEmbedding": ["__init__"], "CompositeEmbedding": ["__init__"]},
}


def _default(v: Any) -> Any:
    if v is inspect.Parameter.empty:
        return "<required>"
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    if isinstance(v, tuple) and all(isinstance(x, (str, int, float, tuple)) for x in v):
        return repr(v)
    return type(v).__name__   # cpu(), Uniform(0.01), nd.zeros, logging: compared by kind


def _sig(fn: Any, data_dir: str) -> list:
    out = []
    for p in inspect.signature(fn).parameters.values():
        d = _default(p.default)
        out.append([p.name, p.kind.name, d.replace(data_dir, "<data_dir>") if isinstance(d, str) else d])
    return out


def signatures(mx: Any) -> dict:
    out = {}
    data_dir = mx.base.data_dir()
    for mod_name, members in SIGNATURES.items():
        mod = importlib.import_module(f"{mx.__name__}.{mod_name}")
        for name, methods in members.items():
            obj = getattr(mod, name)
            if methods is None:
                out[f"{mod_name}.{name}"] = _sig(obj, data_dir)
            for m in methods or ():
                out[f"{mod_name}.{name}.{m}"] = _sig(getattr(obj, m), data_dir)
            if isinstance(obj, type):
                out[f"{mod_name}.{name}:properties"] = sorted(
                    k for k in dir(obj) if isinstance(getattr(obj, k, None), property) and not k.startswith("_"))
    return out
