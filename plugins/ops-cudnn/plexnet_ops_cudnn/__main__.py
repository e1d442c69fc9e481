"""``python -m plexnet_ops_cudnn``: whether the cuDNN implementations can run here."""
from __future__ import annotations

import json

from . import status

if __name__ == "__main__":
    print(json.dumps(status(), indent=2, default=str))
