"""The log line every Cowork program writes: one JSON object a line, time in UTC."""

from __future__ import annotations

import io
import json
import logging
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.agent_host.state.errors import CheckpointCorrupt
from agent_runtime.agent_host.state.store import CheckpointStore
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


class _Opaque:
    def __str__(self) -> str:
        return "opaque thing"


def _logged_line(emit: Callable[[logging.Logger], None], name: str = "cowork.test.extras") -> dict[str, Any]:
    """What one call on a real logger writes through the formatter, parsed."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonLinesFormatter())
    logger = logging.getLogger(name)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        emit(logger)
    finally:
        logger.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1, lines
    entry: dict[str, Any] = json.loads(lines[0])
    return entry


def test_extra_fields_reach_the_line_and_record_attributes_do_not() -> None:
    entry = _logged_line(
        lambda log: log.warning(
            "approval decision not persisted",
            extra={
                "approvalId": "apr-1",
                "sessionId": "ses-1",
                "count": 3,
                "nested": {"a": [1, None, True]},
                "where": Path("/var/x"),
                "thing": _Opaque(),
                "ratio": float("nan"),
            },
        )
    )
    assert entry["message"] == "approval decision not persisted"
    assert entry["approvalId"] == "apr-1"
    assert entry["sessionId"] == "ses-1"
    assert entry["count"] == 3
    assert entry["nested"] == {"a": [1, None, True]}
    # Not JSON by nature: written as their text, and the line stays strict JSON.
    assert entry["where"] == str(Path("/var/x"))
    assert entry["thing"] == "opaque thing"
    assert entry["ratio"] == "nan"
    # The record's own attributes (args, lineno, thread, …) are not extras.
    assert set(entry) == {
        "time", "level", "logger", "message",
        "approvalId", "sessionId", "count", "nested", "where", "thing", "ratio",
    }  # fmt: skip


def test_an_extra_cannot_overwrite_the_fixed_fields() -> None:
    entry = _logged_line(lambda log: log.info("hello", extra={"level": "fake", "time": 0, "logger": "x"}))
    assert entry["level"] == "info"
    assert entry["logger"] == "cowork.test.extras"
    assert entry["time"] != 0


def test_the_checkpoint_store_logs_the_session_of_a_corrupt_checkpoint(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    path = store.path_for("ses-corrupt")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json", encoding="utf-8")

    def load(_: logging.Logger) -> None:
        with pytest.raises(CheckpointCorrupt):
            store.load("ses-corrupt")

    entry = _logged_line(load, name="agent_runtime.agent_host.state.store")
    assert entry["level"] == "error"
    assert entry["sessionId"] == "ses-corrupt"
    assert entry["path"] == str(path)
