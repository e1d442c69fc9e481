"""plexnet-ops-image: MXNet's ``image`` operators, device-generic through ``xp``."""
__version__ = "0.1.0"
