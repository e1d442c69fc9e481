"""mx.log (MXNet 1.9.1's get_logger / getLogger; missing before)."""
import logging
import re
import warnings

import plexnet as mx


def test_get_logger_format_and_once_only_setup(capsys):
    logger = mx.log.get_logger("plexnet_parity_log", level=mx.log.INFO)
    assert logger is mx.log.get_logger("plexnet_parity_log") and len(logger.handlers) == 1
    assert logger.level == logging.INFO
    logger.info("hello")
    err = capsys.readouterr().err
    assert re.match(r"\x1b\[32mI\d{4} \d\d:\d\d:\d\d \d+ .*test_log_parity\.py:"
                    r"test_get_logger_format_and_once_only_setup:\d+\]\x1b\[0m hello", err), err


def test_file_handler_and_deprecated_alias(tmp_path):
    f = tmp_path / "log.txt"
    logger = mx.log.get_logger("plexnet_parity_file", filename=str(f), level=mx.log.DEBUG)
    logger.debug("to file")
    logger.handlers[0].flush()
    assert f.read_text().strip() == "to file"
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert mx.log.getLogger("plexnet_parity_file") is logger
    assert issubclass(w[0].category, DeprecationWarning)
    assert mx.log.get_logger() is logging.getLogger()
