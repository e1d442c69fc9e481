"""mx.base.data_dir / data_dir_default and mx.util.getenv / setenv (MXNet 1.9.1; missing
before, found by porting test_base.py)."""
import os

import plexnet as mx
from plexnet.test_utils import environment


def test_data_dir_follows_mxnet_home():
    with environment("MXNET_HOME", None):
        assert mx.base.data_dir() == os.path.join(os.path.expanduser("~"), ".mxnet") == mx.base.data_dir_default()
    with environment("MXNET_HOME", "/tmp/mxnet_data"):
        assert mx.base.data_dir() == "/tmp/mxnet_data"


def test_util_getenv_setenv():
    name = "PLEXNET_TEST_ENV_PARITY"
    with environment(name, None):
        assert mx.util.getenv(name) is None
        mx.util.setenv(name, "7")
        assert os.environ[name] == "7" and mx.util.getenv(name) == "7"
        mx.util.setenv(name, None)
        assert name not in os.environ and mx.util.getenv(name) is None
