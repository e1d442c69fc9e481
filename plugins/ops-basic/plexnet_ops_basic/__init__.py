"""plexnet-ops-basic: the standard operator family, device-generic through ``xp``."""
__version__ = "0.1.0"
