"""Command-line tools of MXNet's ``tools/`` folder (``mxnet.tools`` in MXNet's wheel).

``python -m plexnet.tools.im2rec`` / ``plexnet im2rec`` and ``python -m plexnet.tools.rec2idx``
/ ``plexnet rec2idx`` take MXNet 1.9.1's arguments and write the same files. For
``tools/launch.py`` use ``plexnet launch`` (plugin ``plexnet-kvstore-dist``).
"""
