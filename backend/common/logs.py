"""Structured JSON log lines (docs/architecture/index.md "Conventions"), one object per line."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from contracts.logs import JsonLinesFormatter

__all__ = ["configure_logging"]


def configure_logging(level: str = "info", file: Path | None = None) -> None:
    handler: logging.Handler
    if file is not None:
        file.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(file, encoding="utf-8")
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLinesFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # One line per request is the access log's job elsewhere; here it would cost the hot path.
    logging.getLogger("uvicorn.access").disabled = True
