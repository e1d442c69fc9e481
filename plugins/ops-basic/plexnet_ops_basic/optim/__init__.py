"""MXNet 1.x's fused optimizer update operators (``sgd_update``, ``sgd_mom_update``,
``adam_update``, ...), one module per optimizer family.

Arguments are ``weight`` and ``grad``; the optimizer states (``mom``, ``mean``/``var``,
``n``/``g``/``delta``, ``z``/``n``, ``weight32``) are *auxiliary states* that forward
updates in place (MXNet's ``FMutateInputs``), so the engine orders every later read of a
state after the update. The single output is the new weight: ``out=weight`` updates the
weight in place; without ``out`` the result is a new array and ``weight`` is unchanged,
but the states are still updated (as in MXNet). The arithmetic lives in
``plexnet.optimizer.kernels``, shared with the ``Optimizer`` classes.

Each module defines ``register(registry)``; ``plexnet_ops_basic.plugin`` discovers it.
"""
