"""How ``wordjudge serve`` logs: plain text lines (the default) or JSON lines for a log collector.

A JSON line holds ``time`` (UTC, ISO 8601 with milliseconds and ``Z``), ``level``, ``logger``,
``message`` and the record's structured fields (what the code passed as ``extra``); uvicorn's
access lines get ``client``, ``method``, ``path``, ``http_version`` and ``status`` too.
:func:`uvicorn_json_config` makes uvicorn's own loggers (``uvicorn.error``, ``uvicorn.access``)
write the same lines, so that the whole server speaks one format.

Logs may end up where players see them: no log line carries a challenge's words or per-word
results (the audit log holds those).
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, Literal

LogFormat = Literal["text", "json"]
LogLevel = Literal["critical", "error", "warning", "info", "debug"]

TEXT_FORMAT = "%(levelname)s: %(name)s: %(message)s"
# Attributes every LogRecord has; anything else on a record came from ``extra``. uvicorn adds a
# coloured copy of some messages, which a JSON line does not need.
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "color_message",
    "taskName",
}
_ACCESS_FIELDS = ("client", "method", "path", "http_version", "status")
_HANDLER = "wordjudge"


class JsonFormatter(logging.Formatter):
    """Formats a log record as one JSON object on one line."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as JSON: time, level, logger, message, then its structured fields and any exception."""
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.name == "uvicorn.access" and isinstance(record.args, tuple) and len(record.args) == 5:
            line.update(zip(_ACCESS_FIELDS, record.args, strict=True))
        for key, value in record.__dict__.items():
            if key not in _STANDARD and key not in line:
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def configure_logging(level: str, log_format: LogFormat) -> None:
    """Send wordjudge's own log records (the root logger) to stderr, as text or JSON lines, from ``level`` up."""
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(_HANDLER)
    handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == _HANDLER]:  # a second call replaces the first's
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())


def uvicorn_json_config() -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for ``uvicorn.run(log_config=...)``: its logs as JSON lines on stderr.

    uvicorn sets its loggers' levels from its own ``log_level`` after applying this.
    """
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter}},
        "handlers": {"json": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}},
        "loggers": {
            "uvicorn": {"handlers": ["json"], "level": "INFO", "propagate": False},
            "uvicorn.error": {"level": "INFO"},
            "uvicorn.access": {"handlers": ["json"], "level": "INFO", "propagate": False},
        },
    }
