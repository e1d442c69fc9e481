"""plexnet-swish: a minimal third-party operator package for plexnet."""
__version__ = "0.1.0"
