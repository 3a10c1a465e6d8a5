"""Fire-and-forget persistence of approval decisions to the Approval Service (seed 000 §10.4).

The tool never waits for the backend: each decision is posted from a background task, retried with
exponential backoff and full jitter for a bounded number of attempts, and a failure is logged, never
raised. ``POST /approvals`` is idempotent on ``approvalId`` (``contracts.rest.approvals``), so a retry
after a lost answer never records a decision twice. The decision itself is safe in the checkpoint
whatever happens here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable

from contracts.approvals import ApprovalDecisionRecord
from contracts.errors import CoworkError
from contracts.retry import RetryAfter, RetryPolicy, call_with_retries

__all__ = ["DecisionPersister", "PersistFn"]

PersistFn = Callable[[ApprovalDecisionRecord], Awaitable[object]]
"""``BackendClient.record_approval``, or anything with its shape."""

logger = logging.getLogger(__name__)


class DecisionPersister:
    """Posts decision records in the background; ``aclose`` gives them one bounded last chance.

    With the defaults (5 attempts, delays drawn from 0–1, 0–2, 0–4 and 0–8 s) a record is given up
    after at most ~15 s of waiting plus the attempts themselves (each of which the backend client may
    retry on its own). An error the backend marks as not retryable (a 4xx ``BackendRejected``) is given
    up at once: sending the same record again cannot change the answer.
    """

    def __init__(
        self,
        persist: PersistFn,
        *,
        attempts: int = 5,
        base_delay_s: float = 1.0,
        max_delay_s: float = 8.0,
        rng: random.Random | None = None,
    ) -> None:
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        self._persist = persist
        self._retry = RetryPolicy(max_retries=attempts - 1, base_s=base_delay_s, cap_s=max_delay_s)
        self._rng = rng or random.Random()
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = asyncio.Event()
        self.persisted = 0
        self.abandoned = 0

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    def submit(self, record: ApprovalDecisionRecord) -> None:
        """Start persisting ``record``; returns at once. Must be called from the event loop."""
        task = asyncio.get_running_loop().create_task(
            self._run(record), name=f"persist-approval-{record.approval_id}"
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def wait_idle(self) -> None:
        """Return once every post submitted so far has ended (stored or given up); unbounded, so
        callers bound it themselves."""
        while self._tasks:
            await asyncio.wait(set(self._tasks))

    async def aclose(self, timeout_s: float = 2.0) -> None:
        """Wait at most ``timeout_s`` for posts in flight; backoff waits are cut short so each gets one
        more attempt now. What is still unfinished after that is cancelled and logged."""
        self._closing.set()
        tasks = set(self._tasks)
        if not tasks:
            return
        _, unfinished = await asyncio.wait(tasks, timeout=timeout_s)
        for task in unfinished:
            task.cancel()
        if unfinished:
            await asyncio.wait(unfinished)
            self.abandoned += len(unfinished)
            logger.warning(
                "approval decisions not persisted before shutdown",
                extra={"count": len(unfinished)},
            )

    async def _run(self, record: ApprovalDecisionRecord) -> None:
        def retry_on(error: Exception, _: int) -> RetryAfter | None:
            futile = isinstance(error, CoworkError) and not error.shape.retryable
            return None if futile or self._closing.is_set() else RetryAfter()

        attempts = 0

        async def post() -> object:
            nonlocal attempts
            attempts += 1
            return await self._persist(record)

        try:
            await call_with_retries(
                post, self._retry, retry_on=retry_on, sleep=self._wait, random=self._rng.random
            )
        except Exception as exc:
            self.abandoned += 1
            # The error's class and code only: its message may quote the backend.
            logger.warning(
                "approval decision not persisted: %s after %d attempt(s)",
                exc.shape.code.value if isinstance(exc, CoworkError) else type(exc).__name__,
                attempts,
                extra={"approvalId": record.approval_id},
            )
        else:
            self.persisted += 1

    async def _wait(self, delay: float) -> None:
        # Waiting on the closing flag rather than sleeping lets aclose() cut the wait short.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._closing.wait(), timeout=delay)
