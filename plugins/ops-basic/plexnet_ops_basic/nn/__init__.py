"""Neural-network operators (MXNet 1.x semantics), one module per family.

Each module defines ``register(registry)``; ``plexnet_ops_basic.plugin`` discovers it.
All computation goes through ``ctx.xp`` (numpy or CuPy); numpy is used only for shape
arithmetic.
"""
