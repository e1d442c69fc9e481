"""Test configuration of plexnet-ops-cudnn: makes ``_harness`` importable and offers the
``gpu_cudnn`` marker logic (skip, with the reason, where cuDNN cannot run)."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
