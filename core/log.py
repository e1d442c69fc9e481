"""``mx.log``: MXNet 1.9.1's logging helpers (``get_logger`` with its coloured one-line
format ``W0505 00:29:47 3525 file:func:line] message``)."""
from __future__ import annotations

import logging
import warnings

__all__ = ["get_logger", "getLogger", "CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET"]

CRITICAL = logging.CRITICAL
ERROR = logging.ERROR
WARNING = logging.WARNING
INFO = logging.INFO
DEBUG = logging.DEBUG
NOTSET = logging.NOTSET

_LABELS = {logging.CRITICAL: "C", logging.ERROR: "E", logging.WARNING: "W", logging.INFO: "I", logging.DEBUG: "D"}


class _Formatter(logging.Formatter):
    """Level letter and time in colour (red: warning and above, green: info, blue: the rest)."""

    def __init__(self) -> None:
        super().__init__(datefmt="%m%d %H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        level = record.levelno
        color = "\x1b[31m" if level >= logging.WARNING else "\x1b[32m" if level >= logging.INFO else "\x1b[34m"
        self._style._fmt = (color + _LABELS.get(level, "U") + "%(asctime)s %(process)d "
                            "%(pathname)s:%(funcName)s:%(lineno)d]\x1b[0m %(message)s")
        return super().format(record)


def get_logger(name: str | None = None, filename: str | None = None, filemode: str | None = None,
               level: int = WARNING) -> logging.Logger:
    """A logger named ``name``; the first call for a name adds a handler (``filename``:
    a file opened with ``filemode``, default append; else stderr with MXNet's format)
    and sets ``level``. ``name=None`` returns the root logger untouched."""
    logger = logging.getLogger(name)
    if name is not None and not getattr(logger, "_init_done", None):
        logger._init_done = True  # type: ignore[attr-defined]
        hdlr: logging.Handler
        if filename:
            hdlr = logging.FileHandler(filename, filemode or "a")
        else:
            hdlr = logging.StreamHandler()
            hdlr.setFormatter(_Formatter())
        logger.addHandler(hdlr)
        logger.setLevel(level)
    return logger


def getLogger(name: str | None = None, filename: str | None = None, filemode: str | None = None,  # noqa: N802
              level: int = WARNING) -> logging.Logger:
    """Deprecated spelling of ``get_logger`` (warns, as MXNet)."""
    warnings.warn("getLogger is deprecated, Use get_logger instead.", DeprecationWarning, stacklevel=2)
    return get_logger(name, filename, filemode, level)
