"""Compaction of the conversation (seed 000 §5.4 Phase 2, seed 002 "transcript" and "loop" buckets).

When the thread no longer fits ``llmPolicy.maxInputTokens`` the agent host asks the model, in one
extra call without tools, to summarise the oldest turns. The summary is kept as a *summary block*
beside the thread — the thread itself keeps every message, so the checkpoint and the uploaded
``session_history`` stay complete — and requests send it in place of the turns it covers. When the
extra call is not allowed (budget, policy) or fails, the oldest turns are dropped behind seed 000's
``[Earlier conversation truncated — N messages removed]`` marker instead.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from pydantic import Field

from contracts._base import UtcDatetime, WireModel

__all__ = ["CompactionMode", "CompactionState", "ContextCompactedPayload", "SummaryBlock"]


class SummaryBlock(WireModel):
    """One summary of the oldest turns; it replaces every message up to and including
    ``coversThroughMessageId`` in the requests (earlier summaries included: each new one folds the
    previous in)."""

    summary_id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    covers_through_message_id: str = Field(min_length=1)
    summarized_messages: int = Field(ge=1)
    """Thread messages the summary stands for, from the start of the thread."""
    created_at: UtcDatetime
    task_id: str | None = None


class CompactionState(WireModel):
    """What the agent host keeps about compaction for a session (checkpointed)."""

    summaries: list[SummaryBlock] = Field(default_factory=list)
    """Oldest first; the last one is what requests send."""
    compaction_count: int = Field(default=0, ge=0)
    """Summaries made (seed 002 "compaction counters")."""
    fallback_count: int = Field(default=0, ge=0)
    """Times the oldest turns were dropped instead because summarising failed or was not allowed."""
    last_compacted_at: UtcDatetime | None = None
    last_failure: str | None = None
    failed_task_id: str | None = None
    """The task in which summarising last failed: it is not tried again in that task (each attempt
    would be another failed call), only from the next task on."""

    @property
    def latest(self) -> SummaryBlock | None:
        return self.summaries[-1] if self.summaries else None

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> CompactionState:
        # Through JSON: strict models take date-times as ISO strings only on that path.
        return cls.model_validate_json(json.dumps(data))


class CompactionMode(StrEnum):
    SUMMARIZED = "summarized"
    TRUNCATED = "truncated"


class ContextCompactedPayload(WireModel):
    """``context_compacted``: the conversation outgrew the model's input window."""

    mode: CompactionMode
    messages: int = Field(ge=1)
    """Messages summarised (``summarized``) or left out of the request (``truncated``)."""
    compaction_count: int = Field(ge=0)
    summary_id: str | None = None
    reason: str | None = None
    """Why the turns were dropped rather than summarised."""
