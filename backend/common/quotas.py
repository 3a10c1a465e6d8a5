"""Enforcing the tenants' quotas (seed 001 Phase 4), where the services act:

==================  ==========================================  ===============================  ============
quota               checked                                     frees up                          Retry-After
==================  ==========================================  ===============================  ============
sessionsPerUser     ``POST /sessions``: the user's sessions      when one ends (cancel/complete)  until enough
                    neither ended nor past their bundle's        or its bundle expires            expire
                    expiry
tokensPerDay        ``POST /sessions`` and ``/resume``; and      at 00:00 UTC                     until then
                    counted where usage is reported
                    (``POST /telemetry/events``)
storageBytes        ``POST /workspaces/{id}/artifacts``: what    when workspaces are deleted or   none
                    the tenant keeps plus the new content        purged
==================  ==========================================  ===============================  ============

A refusal is HTTP 429 with the seed's error shape, code ``RATE_LIMITED``, a message that names the
limit and when to try again, and ``details``: ``quota``, ``limit``, ``used`` and — when waiting helps —
``retryAfterSeconds`` and ``retryAt`` (also the ``Retry-After`` header; then ``retryable`` is true).
Storage does not free up by waiting, so its refusal has no ``Retry-After`` and ``retryable: false``:
a client must not retry it on its own.

Limits are checked before the work and usage recorded after it, without a lock between the two, so
requests racing past a check together can overshoot a limit by what they add: these are budgets, not
security boundaries.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, time, timedelta
from typing import Any

from backend.common.clock import Clock
from backend.common.errors import BackendError
from backend.common.ids import timestamp
from backend.common.quota_config import QuotaDirectory, TenantQuotas
from backend.common.usage import STORAGE_COUNTER, UsageRepository, token_counter
from contracts.errors import ErrorCode, ErrorShape

__all__ = ["TOKEN_COUNTER_KEPT", "Quotas", "describe_bytes", "describe_wait", "quota_exceeded"]

TOKEN_COUNTER_KEPT = timedelta(days=35)
"""How long after its day a day's token counter is kept (``quota show`` and support questions)."""


def describe_wait(wait: timedelta) -> str:
    seconds = max(1, round(wait.total_seconds()))
    if seconds < 60:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def describe_bytes(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{size} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def quota_exceeded(
    quota: str,
    message: str,
    *,
    limit: int,
    used: int,
    now: datetime,
    retry_after: timedelta | None,
    **details: Any,
) -> BackendError:
    """``RATE_LIMITED`` (429); with ``Retry-After`` when waiting frees the limit, else not retryable."""
    shape_details: dict[str, Any] = {"quota": quota, "limit": limit, "used": used, **details}
    headers: dict[str, str] = {}
    if retry_after is not None:
        # Rounded up: a client that waits exactly this long finds the limit freed.
        seconds = max(1, -int(-retry_after.total_seconds() // 1))
        shape_details["retryAfterSeconds"] = seconds
        shape_details["retryAt"] = timestamp(now + timedelta(seconds=seconds))
        headers["Retry-After"] = str(seconds)
    return BackendError(
        ErrorCode.RATE_LIMITED,
        message,
        status_code=429,
        retryable=retry_after is not None,
        details=shape_details,
        headers=headers,
    )


def _next_midnight(now: datetime) -> datetime:
    day = now.astimezone(UTC).date()
    return datetime.combine(day + timedelta(days=1), time(0), tzinfo=UTC)


class Quotas:
    """The checks and the bookkeeping; every method is cheap when the tenant has no such limit."""

    def __init__(self, directory: QuotaDirectory, usage: UsageRepository, clock: Clock) -> None:
        self._directory = directory
        self._usage = usage
        self._clock = clock

    def limits(self, tenant_id: str) -> TenantQuotas:
        return self._directory.for_tenant(tenant_id)

    # ------------------------------------------------------------------ sessions per user

    def check_sessions(self, tenant_id: str, active_expiries: Callable[[], Sequence[datetime]]) -> None:
        """Refuse a new session when the user already has ``sessionsPerUser`` active ones;
        ``active_expiries`` (asked only when there is a limit) gives when each of them expires."""
        limit = self.limits(tenant_id).sessions_per_user
        if limit is None:
            return
        expiries = sorted(active_expiries())
        if len(expiries) < limit:
            return
        now = self._clock.now()
        if limit == 0:
            raise quota_exceeded(
                "sessionsPerUser",
                "This organisation allows no sessions at the moment (sessionsPerUser = 0); "
                "ask an administrator.",
                limit=limit,
                used=len(expiries),
                now=now,
                retry_after=None,
            )
        # Below the limit again once enough of them have expired on their own.
        frees_at = expiries[len(expiries) - limit]
        wait = max(frees_at - now, timedelta(seconds=1))
        raise quota_exceeded(
            "sessionsPerUser",
            f"You already have {len(expiries)} active sessions, the most this organisation allows per "
            f"user (sessionsPerUser = {limit}). End one of them (close its conversation), or try again "
            f"in {describe_wait(wait)}, when {'the oldest expires' if limit == 1 else 'enough expire'}.",
            limit=limit,
            used=len(expiries),
            now=now,
            retry_after=wait,
        )

    # ------------------------------------------------------------------ tokens per day

    def tokens_today(self, tenant_id: str) -> int:
        return self._usage.get(tenant_id, token_counter(self._clock.now().astimezone(UTC).date()))

    def check_tokens(self, tenant_id: str) -> None:
        """Refuse when the tenant has used up today's tokens (new sessions, resumes)."""
        limit = self.limits(tenant_id).tokens_per_day
        if limit is None:
            return
        used = self.tokens_today(tenant_id)
        if used >= limit:
            raise self._tokens_exceeded(limit, used)

    def record_tokens(self, tenant_id: str, amount: int) -> ErrorShape | None:
        """Count ``amount`` tokens for today; the refusal new work now gets, if the limit is reached."""
        now = self._clock.now()
        limit = self.limits(tenant_id).tokens_per_day
        if amount > 0:
            used = self._usage.add(
                tenant_id,
                token_counter(now.astimezone(UTC).date()),
                amount,
                expires_at=_next_midnight(now) + TOKEN_COUNTER_KEPT,
            )
        elif limit is not None:
            used = self.tokens_today(tenant_id)
        else:
            return None
        if limit is None or used < limit:
            return None
        return self._tokens_exceeded(limit, used).shape

    def _tokens_exceeded(self, limit: int, used: int) -> BackendError:
        now = self._clock.now()
        wait = _next_midnight(now) - now
        return quota_exceeded(
            "tokensPerDay",
            f"This organisation has used {used:,} of its {limit:,} LLM tokens for today (tokensPerDay). "
            f"New sessions can start after 00:00 UTC, in {describe_wait(wait)}.",
            limit=limit,
            used=used,
            now=now,
            retry_after=wait,
        )

    # ------------------------------------------------------------------ artifact storage

    def storage_used(self, tenant_id: str) -> int:
        return self._usage.get(tenant_id, STORAGE_COUNTER)

    def check_storage(self, tenant_id: str, adding: int) -> None:
        """Refuse content that would take the tenant's stored bytes past ``storageBytes``."""
        limit = self.limits(tenant_id).storage_bytes
        if limit is None or adding <= 0:
            return
        used = self.storage_used(tenant_id)
        if used + adding <= limit:
            return
        raise quota_exceeded(
            "storageBytes",
            f"Artifact storage for this organisation is full: {describe_bytes(used)} of "
            f"{describe_bytes(limit)} used, and this upload needs {describe_bytes(adding)} more "
            "(storageBytes). Delete workspaces that are no longer needed, or ask an administrator to "
            "raise the limit.",
            limit=limit,
            used=used,
            now=self._clock.now(),
            retry_after=None,
            requestedBytes=adding,
        )

    def record_storage(self, tenant_id: str, change: int) -> None:
        if change:
            self._usage.add(tenant_id, STORAGE_COUNTER, change)
