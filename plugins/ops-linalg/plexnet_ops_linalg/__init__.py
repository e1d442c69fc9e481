"""plexnet-ops-linalg: MXNet's ``linalg`` operators, batched, device-generic through ``xp``."""
__version__ = "0.1.0"
