"""plexnet-device-cuda: the ``gpu`` device type on CuPy."""
__version__ = "0.1.0"
