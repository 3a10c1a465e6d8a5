"""Where a step's time goes, read off the session's own events as they are emitted.

A step runs from ``step_started`` to ``step_completed``. Its LLM time runs from the first
``llm_request_started`` to the ``llm_request_completed`` that ends the call (retries and a discarded,
escalated attempt included); its tool time from the first ``tool_requested`` to the last
``tool_completed`` (policy checks, approvals and uploads' spooling included). The rest is the loop's
own overhead: selecting the context, the pre-checks, the thread, checkpoints and events — the figure
seed 000's loop is measured by. A compaction's summary call happens before the step's
``llm_request_started`` and so counts as overhead.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from contracts.events import EventType

__all__ = ["StepTimer", "StepTimes"]


@dataclass(frozen=True, slots=True)
class StepTimes:
    duration_ms: float
    llm_ms: float
    tools_ms: float
    overhead_ms: float

    def to_wire(self) -> dict[str, float]:
        return {
            "durationMs": round(self.duration_ms, 3),
            "llmMs": round(self.llm_ms, 3),
            "toolsMs": round(self.tools_ms, 3),
            "overheadMs": round(self.overhead_ms, 3),
        }


class StepTimer:
    """Follows one session's steps (one at a time, as the loop runs them)."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._step: str | None = None
        self._started = 0.0
        self._llm_since: float | None = None
        self._llm = 0.0
        self._tools_first: float | None = None
        self._tools_last: float | None = None

    def observe(self, event_type: str, step_id: str | None) -> StepTimes | None:
        """Note one event; at ``step_completed`` of the step it followed, that step's times."""
        now = self._clock()
        if event_type == EventType.STEP_STARTED:
            self._step, self._started = step_id, now
            self._llm_since, self._llm = None, 0.0
            self._tools_first = self._tools_last = None
            return None
        if step_id is None or step_id != self._step:
            return None
        if event_type == EventType.LLM_REQUEST_STARTED:
            if self._llm_since is None:
                self._llm_since = now
        elif event_type == EventType.LLM_REQUEST_COMPLETED:
            if self._llm_since is not None:
                self._llm += now - self._llm_since
                self._llm_since = None
        elif event_type == EventType.TOOL_REQUESTED:
            if self._tools_first is None:
                self._tools_first = now
        elif event_type == EventType.TOOL_COMPLETED:
            self._tools_last = now
        elif event_type == EventType.STEP_COMPLETED:
            self._step = None
            duration = now - self._started
            tools = (
                self._tools_last - self._tools_first
                if self._tools_first is not None and self._tools_last is not None
                else 0.0
            )
            overhead = max(0.0, duration - self._llm - tools)
            return StepTimes(duration * 1e3, self._llm * 1e3, tools * 1e3, overhead * 1e3)
        return None
