"""Identifiers and the one timestamp format stores sort by."""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import UTC, datetime

__all__ = ["derived_id", "new_id", "parse_timestamp", "timestamp"]


def new_id(prefix: str) -> str:
    """A fresh random ID such as ``sess_4f0c…`` (122 random bits)."""
    return f"{prefix}_{uuid.uuid4().hex}"


def derived_id(prefix: str, *parts: str) -> str:
    """An ID that is the same every time for the same ``parts`` (what makes retries idempotent).

    The parts are hashed as a JSON array, so no choice of separator can make two different tuples
    collide (``("a|b", "c")`` vs ``("a", "b|c")``).
    """
    digest = hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()
    return f"{prefix}_{digest[:32]}"


def timestamp(moment: datetime) -> str:
    """Fixed-width UTC ISO 8601 with microseconds and ``Z``: strings sort in time order."""
    # isoformat is several times faster than strftime, and this runs for every stored record.
    return moment.astimezone(UTC).isoformat(timespec="microseconds")[:-6] + "Z"


def parse_timestamp(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)
