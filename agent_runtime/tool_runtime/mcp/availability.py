"""Whether a server is worth calling (seed 003 §9.3, "MCP server unavailable").

A server that fails ``failures_to_mark`` times in a row is marked unavailable: its tools answer a
clear error at once instead of waiting on a dead server, and the loop goes on. After ``backoff_s``
the next call may try again (one call, not a burst: ``may_try`` lets exactly one through per backoff
period); its success makes the server available again, its failure starts another backoff period.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["ServerHealth"]


class ServerHealth:
    def __init__(
        self,
        *,
        failures_to_mark: int = 3,
        backoff_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if failures_to_mark < 1 or backoff_s < 0:
            raise ValueError("failures_to_mark must be at least 1 and backoff_s not negative")
        self._failures_to_mark = failures_to_mark
        self._backoff_s = backoff_s
        self._clock = clock
        self._failures = 0
        self._retry_at: float | None = None
        self.available = True
        self.last_error: str | None = None

    @property
    def consecutive_failures(self) -> int:
        return self._failures

    def may_try(self) -> bool:
        """Whether a call may go to the server now. While unavailable, ``True`` once per backoff period
        (the trial call); the caller reports its outcome with :meth:`succeeded` or :meth:`failed`."""
        if self.available:
            return True
        assert self._retry_at is not None
        now = self._clock()
        if now < self._retry_at:
            return False
        # One trial per period: until it reports back, other calls wait for the next period.
        self._retry_at = now + self._backoff_s
        return True

    def succeeded(self) -> None:
        self._failures = 0
        self._retry_at = None
        self.available = True
        self.last_error = None

    def failed(self, error: str) -> None:
        self._failures += 1
        self.last_error = error
        if self._failures >= self._failures_to_mark:
            self.available = False
            self._retry_at = self._clock() + self._backoff_s

    def seconds_until_retry(self) -> float:
        """How long until the next trial call (0 when a call may go now)."""
        if self.available or self._retry_at is None:
            return 0.0
        return max(0.0, self._retry_at - self._clock())
