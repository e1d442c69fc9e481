"""What the normalisation operators (BatchNorm, LayerNorm, InstanceNorm, GroupNorm,
L2Normalization) share: storing by ``req``, normalising over a set of axes and its
gradient, the gamma / beta gradients, and the property of ``data, gamma, beta ->
output, mean, std|var``."""
from __future__ import annotations

from plexnet.operator import OperatorProperty, OpReqType

from ._common import shape_assign, writes


def store(xp, out, req, value):
    if req == OpReqType.null:
        return
    if writes(req):
        xp.copyto(out, value)
    else:
        out += value


def normalize(xp, xr, axes, eps):
    """``(xhat, mean, std)`` of ``xr`` normalised over ``axes`` (kept as size-1 dims)."""
    mean = xr.mean(axis=axes, keepdims=True)
    xc = xr - mean
    std = xp.sqrt((xc * xc).mean(axis=axes, keepdims=True) + eps)
    xc /= std
    return xc, mean, std


def normalize_grad(gdy, xhat, std, axes):
    """d/dx of ``xhat`` applied to ``gdy`` (the head gradient times gamma)."""
    dx = gdy - gdy.mean(axis=axes, keepdims=True)
    dx -= xhat * (gdy * xhat).mean(axis=axes, keepdims=True)
    dx /= std
    return dx


def affine_grads(xp, dy, xhat, red, req, in_grad):
    """The gamma and beta gradients (``in_grad[1]``, ``in_grad[2]``) of
    ``y = xhat * gamma + beta``: ``dy * xhat`` and ``dy`` summed over ``red``."""
    if req[1] != OpReqType.null:
        store(xp, in_grad[1], req[1], (dy * xhat).sum(axis=red))
    if req[2] != OpReqType.null:
        store(xp, in_grad[2], req[2], dy.sum(axis=red))


class NormProp(OperatorProperty):
    """Arguments ``data, gamma, beta``; outputs ``output`` and two statistics, visible
    with ``output_mean_var`` where the operator has that parameter. Subclasses give the
    statistics' names (``outputs``), ``check_data(d) -> (gamma_shape, stat_shape)``, and
    ``backward_needs_stats`` when backward reads the saved statistics (else it
    recomputes them). Auxiliary states, if any, have gamma's shape."""

    outputs = ("output", "mean", "std")
    backward_needs_stats = False

    def list_arguments(self):
        return ["data", "gamma", "beta"]

    def list_outputs(self):
        return list(self.outputs)

    def num_visible_outputs(self):
        return 3 if getattr(self.param, "output_mean_var", False) else 1

    def check_data(self, d):
        raise NotImplementedError

    def infer_shape(self, in_shape):
        op, names = self.op_name, self.list_arguments()
        shapes = [None if s is None else tuple(int(v) for v in s) for s in in_shape]
        naux = len(self.list_auxiliary_states())
        d = shapes[0]
        if d is None:
            return shapes, [None] * 3, [None] * naux
        c, stat = self.check_data(d)
        shape_assign(op, shapes, 1, names, c)
        shape_assign(op, shapes, 2, names, c)
        return shapes, [d, stat, stat], [c] * naux

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        deps = [out_grad[0], in_data[0], in_data[1]]
        if self.backward_needs_stats:
            deps += [out_data[1], out_data[2]]
        return deps
