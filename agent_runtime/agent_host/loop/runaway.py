"""The runaway guard (beyond seed 000 §4; users of other agents ask for it) and, beside it, seed 002's
loop fingerprints and no-progress streak.

A model stuck in a rut calls the same tool with the same arguments again and again — the same failing
command, the same denied path — and burns the step and token budget doing it. The guard ends the task
with a clear reason instead: after ``failing_limit`` identical calls in a row that failed or were
denied, or ``any_limit`` identical calls in a row whatever their results.

A rut can also be a cycle the guard does not see — read A, read B, read A, read B — each call
different from the one before. Every step with tool calls gets a *loop fingerprint*: a hash of its
calls and their results. A step whose fingerprint matches an earlier step of the same task made no
progress: it did exactly what was done before and learned exactly the same. The *no-progress streak*
counts such steps in a row (a step with a new fingerprint resets it). At ``NO_PROGRESS_WARNING`` the
model gets a note in the thread saying so; at ``NO_PROGRESS_LIMIT`` the task ends failed with reason
``no_progress``, as the runaway guard ends it. Both states live in the session runtime and are
checkpointed, so a resumed task goes on counting.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence

from agent_runtime.agent_host.session_runtime.runtime import FINGERPRINTS_KEPT, FailureMemory, LoopState
from contracts.enums import ToolStatus
from contracts.tools import ToolCall, ToolResult

__all__ = ["NO_PROGRESS_LIMIT", "NO_PROGRESS_WARNING", "NoProgressWatch", "RunawayGuard", "loop_fingerprint"]

NO_PROGRESS_WARNING = 3
"""Steps in a row that repeat earlier ones before the model is told."""
NO_PROGRESS_LIMIT = 6
"""Steps in a row that repeat earlier ones before the task ends (``no_progress``)."""

# Artifact links name a new artifact on every call: not part of what a step learned.
_ARTIFACT_LINK = re.compile(r"cowork://\S+")


def loop_fingerprint(calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> str:
    """SHA-256 (hex, 16 characters) of a step's tool calls and their results, in order."""
    parts = [
        [
            call.tool_name,
            call.arguments,
            result.status.value,
            result.error.code if result.error is not None else None,
            _ARTIFACT_LINK.sub("", result.output_text or ""),
        ]
        for call, result in zip(calls, results, strict=True)
    ]
    encoded = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()[:16]


class NoProgressWatch:
    """The no-progress streak over the loop bucket's fingerprints (see the module docstring)."""

    def __init__(self, state: LoopState | None = None) -> None:
        self._state = state if state is not None else LoopState()

    def observe(self, fingerprint: str) -> int:
        """Record one step's fingerprint; the streak after it."""
        state = self._state
        if fingerprint in state.fingerprints:
            state.no_progress_streak += 1
        else:
            state.no_progress_streak = 0
        state.fingerprints.append(fingerprint)
        del state.fingerprints[:-FINGERPRINTS_KEPT]
        return state.no_progress_streak

    def warning(self) -> str:
        return (
            f"Your last {self._state.no_progress_streak} steps repeated earlier steps of this task exactly:"
            " the same tool calls with the same results. Doing them again will not change anything; try a"
            " different approach or finish with what you have."
        )

    def stopped(self) -> str:
        return (
            f"The model repeated earlier steps exactly {self._state.no_progress_streak} times in a row"
            " (the same tool calls with the same results); the task was stopped."
        )


class RunawayGuard:
    def __init__(
        self, state: FailureMemory | None = None, *, failing_limit: int = 3, any_limit: int = 5
    ) -> None:
        """``state``: where the guard keeps its memory (the session runtime's tooling bucket)."""
        self._failing_limit = failing_limit
        self._any_limit = any_limit
        self._state = state if state is not None else FailureMemory()

    def observe(self, calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> str | None:
        """Record one step's calls in order; a sentence saying why the task must stop, or None."""
        for call, result in zip(calls, results, strict=True):
            state = self._state
            key = call.tool_name + "\0" + json.dumps(call.arguments, sort_keys=True, default=str)
            if key == state.last_call:
                state.repeats += 1
            else:
                state.last_call, state.repeats, state.failing_repeats = key, 1, 0
            if result.status is ToolStatus.SUCCEEDED:
                state.failing_repeats = 0
            else:
                state.failing_repeats += 1
            if state.failing_repeats >= self._failing_limit:
                return (
                    f"The model called {call.tool_name} with the same arguments {state.failing_repeats}"
                    " times in a row and it failed every time; the task was stopped."
                )
            if state.repeats >= self._any_limit:
                return (
                    f"The model called {call.tool_name} with the same arguments {state.repeats} times in"
                    " a row; the task was stopped."
                )
        return None

    def reset(self) -> None:
        self._state.reset()
