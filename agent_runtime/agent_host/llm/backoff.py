"""How long to wait before the next attempt (seed 000 §6.4): full jitter, or what the gateway asked."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime

from .config import RetrySettings

__all__ = ["backoff_delay", "parse_retry_after"]


def parse_retry_after(headers: Mapping[str, str], now: Callable[[], float]) -> float | None:
    """Seconds the gateway asked us to wait, or ``None`` when it did not say (or said nonsense).

    ``retry-after-ms`` (sent by OpenAI and Anthropic) wins over ``Retry-After``, which is either
    delta-seconds or an HTTP-date (RFC 9110 §10.2.3); a date in the past means "now".
    """
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        value = _number(milliseconds)
        if value is not None:
            return value / 1000.0
    raw = headers.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(raw.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now())


def _number(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return value


def backoff_delay(
    retry: int,
    settings: RetrySettings,
    random: Callable[[], float],
    retry_after_s: float | None = None,
) -> float:
    """The wait before retry number ``retry`` (1-based)."""
    if retry_after_s is not None:
        return min(retry_after_s, settings.retry_after_cap_s)
    ceiling = min(settings.cap_s, settings.base_s * 2.0 ** (retry - 1))
    return random() * ceiling
