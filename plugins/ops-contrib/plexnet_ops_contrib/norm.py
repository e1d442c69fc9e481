"""``BatchNormWithReLU`` and ``SyncBatchNorm``, built on the registered ``BatchNorm``
operator (from plexnet-ops-basic or any plugin that provides it) through the registry:
this plugin adds only what differs, so batch normalisation is written once.

* BatchNormWithReLU: ``relu(BatchNorm(...))``; backward masks the head gradient with
  ``output > 0`` and runs BatchNorm's backward (which reads the statistics, not the output).
* SyncBatchNorm: MXNet's cross-device batch norm. plexnet runs it in one process, where
  the statistics of the batch are those of the whole batch: BatchNorm semantics; ``ndev``
  and ``key`` are accepted (``key`` required, as in MXNet). As in MXNet, its third
  output in training is the batch variance (BatchNorm's is the inverse std).
"""
from __future__ import annotations

from typing import Any, ClassVar

from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, Params

__all__ = ["register"]


class _BNParams(Params):
    eps = Field(float, default=1e-3, low=0.0, doc="added to the variance")
    momentum = Field(float, default=0.9, doc="momentum of the moving averages")
    fix_gamma = Field(bool, default=True, doc="use gamma = 1")
    use_global_stats = Field(bool, default=False, doc="normalise with the moving statistics")
    output_mean_var = Field(bool, default=False, doc="also output the mean and inverse std")


class BatchNormWithReLUParam(_BNParams):
    axis = Field(int, default=1, doc="the channel axis")
    cudnn_off = Field(bool, default=False)
    min_calib_range = Field(float, default=None, optional=True, doc="quantisation only (ignored)")
    max_calib_range = Field(float, default=None, optional=True, doc="quantisation only (ignored)")


class SyncBatchNormParam(_BNParams):
    ndev = Field(int, default=1, low=1, doc="devices synchronised (one process here)")
    # ``key`` (the synchronisation key) is taken by the property: a field of that name
    # would shadow ``Params.key()``


def _registry() -> Any:
    from plexnet.plugins import registries
    return registries().operators


class _OnBatchNorm(OperatorProperty):
    """Semantics of ``BatchNorm`` (arguments, aux states, outputs, inference) plus ours."""

    relu: ClassVar[bool] = False
    var_out: ClassVar[bool] = False
    forwarded: ClassVar[tuple[str, ...]] = ("eps", "momentum", "fix_gamma", "use_global_stats", "output_mean_var")

    def init(self, kwargs):  # type: ignore[no-untyped-def]
        super().init(kwargs)
        reg = _registry()
        if "BatchNorm" not in reg:
            from plexnet.operator.registry import OperatorNotFound
            raise OperatorNotFound(f"{self.op_name}: needs the BatchNorm operator, which is not registered "
                                   f"(install plexnet-ops-basic)")
        self.inner = reg.create_property("BatchNorm", {k: getattr(self.param, k) for k in self.forwarded})

    def list_arguments(self):  # type: ignore[no-untyped-def]
        return self.inner.list_arguments()

    def list_auxiliary_states(self):  # type: ignore[no-untyped-def]
        return self.inner.list_auxiliary_states()

    def input_var_attrs(self) -> dict:
        return self.inner.input_var_attrs()

    def list_outputs(self):  # type: ignore[no-untyped-def]
        return self.inner.list_outputs()

    def num_visible_outputs(self):  # type: ignore[no-untyped-def]
        return self.inner.num_visible_outputs()

    def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
        return self.inner.infer_shape(in_shape)

    def infer_type(self, in_type):  # type: ignore[no-untyped-def]
        return self.inner.infer_type(in_type)

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        deps = list(self.inner.declare_backward_dependency(out_grad, in_data, out_data))
        return deps + [out_data[0]] if self.relu else deps


class OnBatchNormOp(Operator):
    def __init__(self, prop: _OnBatchNorm, ctx: Any) -> None:
        self.relu = prop.relu
        self.inner = prop.inner.create_operator(ctx)
        # MXNet's SyncBatchNorm outputs the batch variance (BatchNorm: the inverse std)
        self.var_out = prop.var_out and not prop.param.use_global_stats
        self.eps = prop.param.eps

    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        if not self.relu or req[0] in (OpReqType.write, OpReqType.inplace):
            self.inner.forward(ctx, in_data, req, out_data, aux_states)
            if self.var_out and ctx.is_train:
                out_data[2][...] = 1.0 / (out_data[2] * out_data[2]) - self.eps
            if self.relu:
                ctx.xp.maximum(out_data[0], 0, out=out_data[0])
            return
        tmp = [ctx.xp.empty_like(out_data[0])] + list(out_data[1:])  # add / null: relu before storing
        self.inner.forward(ctx, in_data, [OpReqType.write] + list(req[1:]), tmp, aux_states)
        if req[0] == OpReqType.add:
            out_data[0] += ctx.xp.maximum(tmp[0], 0)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):  # type: ignore[no-untyped-def]
        if self.relu:
            out_grad = [out_grad[0] * (out_data[0] > 0)] + list(out_grad[1:])
        if self.var_out:  # BatchNorm's backward reads the inverse std
            out_data = list(out_data[:2]) + [1.0 / ctx.xp.sqrt(out_data[2] + self.eps)] + list(out_data[3:])
        self.inner.backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)


class BatchNormWithReLUProp(_OnBatchNorm):
    """Batch normalisation followed by ReLU (MXNet's fused operator)."""

    # the inputs of the generated signature (the inner BatchNorm lists them once built)
    signature_inputs = ("data", "gamma", "beta", "moving_mean", "moving_var")

    param_cls = BatchNormWithReLUParam
    relu = True
    forwarded = _OnBatchNorm.forwarded + ("axis", "cudnn_off")


class SyncBatchNormProp(_OnBatchNorm):
    """Batch normalisation over the whole batch (single process: BatchNorm's semantics)."""

    param_cls = SyncBatchNormParam
    extra_kwargs = ("key",)
    var_out = True
    signature_inputs = ("data", "gamma", "beta", "moving_mean", "moving_var")

    def init(self, kwargs):  # type: ignore[no-untyped-def]
        if "key" not in kwargs:
            from plexnet.operator import ParamError
            raise ParamError(f"{self.op_name}: required argument 'key' is missing (expected str)")
        self.sync_key = str(kwargs["key"])
        super().init(kwargs)

    def get_params(self):  # type: ignore[no-untyped-def]
        return {**super().get_params(), "key": self.sync_key}


def register(registry: Any) -> None:
    for name, cls in (("BatchNormWithReLU", BatchNormWithReLUProp), ("SyncBatchNorm", SyncBatchNormProp)):
        op = "_contrib_" + name
        registry.register_property(op, cls)
        registry.register_impl(op, "*", lambda prop, ctx: OnBatchNormOp(prop, ctx), impl_name="on_batchnorm")
