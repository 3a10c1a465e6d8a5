"""How a ``cowork exec`` run ended, as its exit status (documented in ``cowork exec --help``)."""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ExitCode", "exit_code_for_end"]


class ExitCode(IntEnum):
    COMPLETED = 0
    FAILED = 1
    """The task failed (the model's gateway refused, max steps, a repeated failing call…)."""
    USAGE = 2
    """An invalid flag or argument (argparse's own status)."""
    CONFIGURATION = 3
    """A missing workspace, an unreachable gateway or backend, unusable settings."""
    BUDGET_EXCEEDED = 4
    DENIED = 5
    """The task did not complete because the policy or an approval refused what it needed — or it
    completed without an action it asked for (a refusal the model worked around still counts)."""
    PAUSED = 6
    """The session paused (the gateway or backend kept failing): ``--resume SESSION_ID`` continues."""
    RUNTIME_LOST = 7
    """The runtime process ended unexpectedly: ``--resume SESSION_ID`` continues from the checkpoint."""
    CANCELLED = 130
    """Ctrl-C: the task was cancelled (128 + SIGINT, as shells report an interrupted command)."""


_DENIAL_REASONS = frozenset({"llm_denied"})  # the policy refused the model call itself


def exit_code_for_end(event_type: str, reason: str | None, refusals: int) -> ExitCode:
    """The status for the event that ended the task and the number of refused tool calls."""
    if event_type == "task_completed":
        return ExitCode.DENIED if refusals else ExitCode.COMPLETED
    if event_type == "task_cancelled":
        return ExitCode.CANCELLED
    if reason == "budget_exceeded":
        return ExitCode.BUDGET_EXCEEDED
    if reason in _DENIAL_REASONS or refusals:
        return ExitCode.DENIED
    return ExitCode.FAILED
