"""plexnet-ops-random: MXNet's samplers and densities, device-generic through ``xp``."""
__version__ = "0.1.0"
