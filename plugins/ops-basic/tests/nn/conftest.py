"""Makes the nn tests' float64 references (``nnref``) importable (pytest runs with
``--import-mode=importlib``, which puts no test folder on ``sys.path``)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
