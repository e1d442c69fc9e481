"""plexnet-ops-contrib: MXNet's ``contrib`` operators, device-generic through ``xp``."""
__version__ = "0.1.0"
