"""One way to retry: exponential backoff with full jitter, what a server asked for with
``Retry-After`` honoured up to a cap, and cancellation left alone (seed 001 §11's retry helpers).

``call_with_retries`` runs an async operation until it succeeds, the caller's ``retry_on`` says an
error is not worth another attempt, or the retries run out. Only ``Exception`` is caught:
``asyncio.CancelledError`` (a ``BaseException``) always goes straight through, and every wait is a
plain awaited sleep, so cancelling the caller cancels the wait at once.

Hand-written rather than taken from tenacity or backoff: both would be a new dependency of the
runtime for some forty lines, and neither parses an HTTP-date ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import random as random_module
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import NoReturn, TypeVar

__all__ = ["RetryAfter", "RetryPolicy", "call_with_retries", "parse_retry_after"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to wait: at most ``max_retries`` retries (``max_retries + 1``
    attempts); retry ``n`` waits ``random() * min(cap_s, base_s * 2 ** (n - 1))`` unless the server
    said how long, which is honoured up to ``retry_after_cap_s``."""

    max_retries: int = 3
    base_s: float = 1.0
    cap_s: float = 30.0
    retry_after_cap_s: float = 60.0

    def __post_init__(self) -> None:
        values = (self.max_retries, self.base_s, self.cap_s, self.retry_after_cap_s)
        if any(value < 0 or not math.isfinite(value) for value in values):
            raise ValueError("retry settings must be finite and not negative")

    def delay(self, retry: int, random: Callable[[], float], retry_after_s: float | None = None) -> float:
        """The wait before retry number ``retry`` (1-based); ``random`` returns a float in [0, 1)."""
        if retry_after_s is not None:
            return min(retry_after_s, self.retry_after_cap_s)
        return random() * min(self.cap_s, self.base_s * 2.0 ** (retry - 1))


@dataclass(frozen=True, slots=True)
class RetryAfter:
    """``retry_on``'s answer "try again": after ``seconds`` when the server said so (capped by the
    policy), otherwise after the policy's backoff."""

    seconds: float | None = None


def parse_retry_after(headers: Mapping[str, str], now: Callable[[], float]) -> float | None:
    """Seconds a server asked us to wait, or None when it did not say (or said nonsense).

    ``retry-after-ms`` (sent by OpenAI and Anthropic) wins over ``Retry-After``, which is either
    delta-seconds or an HTTP-date (RFC 9110 §10.2.3); a date in the past means "now". ``now`` is the
    wall clock (``time.time``), which an HTTP-date is compared with.
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


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    retry_on: Callable[[Exception, int], RetryAfter | None],
    give_up: Callable[[Exception, int], NoReturn] | None = None,
    before_wait: Callable[[int, float, Exception], Awaitable[None] | None] | None = None,
    after_wait: Callable[[], Awaitable[None] | None] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    random: Callable[[], float] = random_module.random,
) -> T:
    """``attempt()``'s result, trying again while ``retry_on(error, attempts)`` says so.

    ``retry_on`` returns None to let the error propagate as it is (or raises an error of its own);
    when the retries are used up, ``give_up(error, attempts)`` raises the final error (without it, the
    last error propagates). ``before_wait(retry, delay, error)`` runs before each wait (to tell the
    user), ``after_wait()`` after it, right before the next attempt (a last check that it may still be
    made); an exception from either ends the retries and propagates. ``sleep`` and ``random`` are the
    clock and the dice, for tests.
    """
    attempts = 0
    while True:
        attempts += 1
        try:
            return await attempt()
        except Exception as exc:
            advice = retry_on(exc, attempts)
            if advice is None:
                raise
            if attempts > policy.max_retries:
                if give_up is not None:
                    give_up(exc, attempts)
                raise
            error = exc
        # Outside the except block: a cancellation of the wait must not carry the failed attempt's
        # error as its context.
        delay = policy.delay(attempts, random, advice.seconds)
        if before_wait is not None:
            await _call(before_wait(attempts, delay, error))
        del error
        await sleep(delay)
        if after_wait is not None:
            await _call(after_wait())


def _number(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return value


async def _call(result: Awaitable[None] | None) -> None:
    if inspect.isawaitable(result):
        await result
