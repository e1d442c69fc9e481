"""Tensor operators of plexnet-ops-basic (MXNet's ``src/operator/tensor``).

One small module per family; each defines ``register(registry)`` and is found by
``plexnet_ops_basic.plugin`` automatically:

* ``elemwise_unary`` -- unary math SimpleOps (abs, exp, sigmoid, erf, BlockGrad, ...)
* ``elemwise_binary`` -- ``broadcast_*``, ``elemwise_*`` and the ``_maximum``-style ops
* ``elemwise_scalar`` -- ``_plus_scalar`` ... and ``clip``
* ``reduce`` -- sum, mean, max, min, prod, nansum, norm, argmax, argmin
* ``dot`` -- dot, batch_dot
* ``shape_ops`` -- Reshape, Flatten, transpose, SwapAxis, expand_dims, squeeze
* ``join_split`` -- Concat, stack, SliceChannel, add_n
* ``indexing`` -- slice, slice_axis, take, pick, one_hot, where
* ``replicate`` -- tile, repeat, reverse, broadcast_to, broadcast_axis
* ``cast`` -- Cast
"""
