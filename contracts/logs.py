"""The one log line format of every Cowork program (DESIGN.md "Conventions"): a JSON object per line.

The desktop keeps the runtime's stderr in its logs folder next to its own log, and the backend writes
the same shape, so one reader (``jq``, a log shipper) takes them all.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

__all__ = ["JsonLinesFormatter"]


class JsonLinesFormatter(logging.Formatter):
    """``{"time", "level", "logger", "message"[, "exception"]}``; ``time`` is ISO 8601 in UTC."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)
