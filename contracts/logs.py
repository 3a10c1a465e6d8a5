"""The one log line format of every Cowork program (docs/architecture/index.md, "Conventions"): a JSON
object per line.

The desktop keeps the runtime's stderr in its logs folder next to its own log, and the backend writes
the same shape, so one reader (``jq``, a log shipper) takes them all.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

__all__ = ["JsonLinesFormatter"]

# What every LogRecord carries by itself (plus what Formatter.format adds); anything else on a record
# came from ``extra=`` — ``sessionId``, ``approvalId``, ``path``, ``count`` — and belongs on the line.
_RECORD_ATTRIBUTES = frozenset(logging.LogRecord("", logging.INFO, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "taskName",
}


class JsonLinesFormatter(logging.Formatter):
    """``{"time", "level", "logger", "message"[, "exception"], **extra}``; ``time`` is ISO 8601 in UTC.

    Every ``extra=`` field is kept: JSON values as they are, anything else (a path, an enum, NaN) as
    its text, so the line is always strict JSON. The four fixed fields win over an extra of that name.
    """

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            key: _jsonable(value)
            for key, value in record.__dict__.items()
            if key not in _RECORD_ATTRIBUTES and not key.startswith("_")
        }
        line.update(
            time=datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            level=record.levelname.lower(),
            logger=record.name,
            message=record.getMessage(),
        )
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        try:
            return str(value)
        except Exception:
            # A log line must never fail because of what it describes.
            return object.__repr__(value)
    return value
