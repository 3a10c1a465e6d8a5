"""The log line every Cowork program writes: one JSON object a line, time in UTC."""

from __future__ import annotations

import json
import logging
import sys
from datetime import datetime

from contracts.logs import JsonLinesFormatter


def test_a_record_is_one_json_line_with_its_exception() -> None:
    try:
        raise ValueError("bad\nvalue")
    except ValueError:
        failure = sys.exc_info()
    record = logging.LogRecord("cowork.x", logging.ERROR, __file__, 1, "failed: %s", ("ü",), failure)
    line = JsonLinesFormatter().format(record)
    assert "\n" not in line
    entry = json.loads(line)
    assert entry["level"] == "error"
    assert entry["logger"] == "cowork.x"
    assert entry["message"] == "failed: ü"
    assert "ValueError: bad" in entry["exception"]
    assert datetime.fromisoformat(entry["time"]).utcoffset().total_seconds() == 0  # type: ignore[union-attr]
