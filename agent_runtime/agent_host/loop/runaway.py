"""The runaway guard (beyond seed 000 §4; users of other agents ask for it).

A model stuck in a rut calls the same tool with the same arguments again and again — the same failing
command, the same denied path — and burns the step and token budget doing it. The guard ends the task
with a clear reason instead: after ``failing_limit`` identical calls in a row that failed or were
denied, or ``any_limit`` identical calls in a row whatever their results.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from contracts.enums import ToolStatus
from contracts.tools import ToolCall, ToolResult

__all__ = ["RunawayGuard"]


class RunawayGuard:
    def __init__(self, *, failing_limit: int = 3, any_limit: int = 5) -> None:
        self._failing_limit = failing_limit
        self._any_limit = any_limit
        self._last: str | None = None
        self._repeats = 0
        self._failing_repeats = 0

    def observe(self, calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> str | None:
        """Record one step's calls in order; a sentence saying why the task must stop, or None."""
        for call, result in zip(calls, results, strict=True):
            key = call.tool_name + "\0" + json.dumps(call.arguments, sort_keys=True, default=str)
            if key == self._last:
                self._repeats += 1
            else:
                self._last, self._repeats, self._failing_repeats = key, 1, 0
            if result.status is ToolStatus.SUCCEEDED:
                self._failing_repeats = 0
            else:
                self._failing_repeats += 1
            if self._failing_repeats >= self._failing_limit:
                return (
                    f"The model called {call.tool_name} with the same arguments {self._failing_repeats}"
                    " times in a row and it failed every time; the task was stopped."
                )
            if self._repeats >= self._any_limit:
                return (
                    f"The model called {call.tool_name} with the same arguments {self._repeats} times in"
                    " a row; the task was stopped."
                )
        return None

    def reset(self) -> None:
        self._last, self._repeats, self._failing_repeats = None, 0, 0
