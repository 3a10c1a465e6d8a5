"""Seed 002 "Task Projection": the runtime-owned loop figures reflected outside the session runtime.

Carried by ``GetSessionState`` (:class:`~contracts.methods.SessionState`) and by the uploaded
``session_history`` document, so the desktop and the Workspace Service see the same numbers the
runtime checkpoints, without the rest of the session state.
"""

from __future__ import annotations

from pydantic import Field

from contracts._base import WireModel

__all__ = ["TaskProjection"]


class TaskProjection(WireModel):
    session_tokens_used: int = Field(ge=0)
    """Budget usage: the session's tokens so far (``sessionTokensUsed``)…"""
    max_session_tokens: int = Field(ge=0)
    """…out of the policy's ``maxSessionTokens``."""
    continuation_count: int = Field(ge=0)
    """Steps that asked the model to go on after an answer cut off by its output limit."""
    lifetime_turns: int = Field(ge=0)
    """LLM turns (steps that called the model) over the whole session, across restarts."""
    compaction_count: int = Field(ge=0)
    """Times the thread was compacted (seed 000 §5.4)."""
    no_progress_streak: int = Field(ge=0)
    """Steps in a row whose tool calls and results repeated an earlier step of the task exactly."""
    last_loop_fingerprint: str | None = None
    """SHA-256 (hex, 16 characters) of the last step's tool calls and results; null before any."""
