"""plexnet-kvstore-dist: distributed kvstores (``dist_sync``, ``dist_device_sync``,
``dist_async``) on Ray, and the ``plexnet launch`` launcher. See README.md."""
__version__ = "0.1.0"
