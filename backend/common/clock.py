"""The clock every service reads, handed in so tests can move time (expiry, purge, token lifetimes)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol

from backend.common.errors import invalid

__all__ = ["Clock", "SystemClock", "not_in_future"]


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware, in UTC."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


def not_in_future(value: datetime, now: datetime, skew: timedelta, field: str) -> None:
    """Raises ``INVALID_REQUEST`` (400) when a client's timestamp lies more than ``skew`` after ``now``.

    For timestamps the server keeps order by ("the newest snapshot wins"): one far in the future
    would win against every later one. ``skew`` allows for a client clock running a little ahead.
    """
    if value <= now + skew:
        return
    minutes = skew.total_seconds() / 60
    raise invalid(
        f"{field} is in the future: {value.isoformat()} is more than {minutes:g} minutes after the "
        f"server's time {now.isoformat()} (check the computer's clock)",
        field=field,
        serverTime=now.isoformat(),
        maxClockSkewSeconds=int(skew.total_seconds()),
    )
