"""The words of the status strip, one table from the session's and the task's state (seed 000 §3.3) to
what the user reads. Qt-free.

The session's state decides first — paused or ended, nothing a task does matters — then the task's:

==================================  ==========================================
session / task                      wording
==================================  ==========================================
no session yet, no task             Ready for your message
SESSION_CREATED                     Starting…
SESSION_RUNNING, no task / IDLE     Ready for your message
TASK_RUNNING                        Working…
WAITING_FOR_LLM                     Waiting for the model…
PROCESSING_RESPONSE                 Reading the model's answer…
CHECKING_POLICY                     Checking the policy…
WAITING_FOR_APPROVAL                Waiting for your approval
EXECUTING_TOOLS                     Running tools…
TASK_COMPLETED                      Done — ready for your next message
TASK_FAILED                         The task failed
TASK_CANCELLED                      Cancelled — ready for your next message
SESSION_PAUSED                      Session paused
SESSION_COMPLETED / _CANCELLED      Session ended
SESSION_FAILED                      Session ended with an error
==================================  ==========================================

The step counter counts the step under way from 1 ("Step 1 of 40" while the first step's tools
run, never "Step 0"); once the task has ended it says how many steps it used.
"""

from __future__ import annotations

from desktop.i18n import translate

__all__ = ["ACTIVE_TASK_STATES", "state_text", "steps_text"]

ACTIVE_TASK_STATES = frozenset(
    {
        "TASK_RUNNING",
        "WAITING_FOR_LLM",
        "PROCESSING_RESPONSE",
        "CHECKING_POLICY",
        "WAITING_FOR_APPROVAL",
        "EXECUTING_TOOLS",
    }
)


def _session_words(session: str | None) -> str | None:
    if session == "SESSION_CREATED":
        return translate("Status", "Starting…")
    if session == "SESSION_PAUSED":
        return translate("Status", "Session paused")
    if session in ("SESSION_COMPLETED", "SESSION_CANCELLED"):
        return translate("Status", "Session ended")
    if session == "SESSION_FAILED":
        return translate("Status", "Session ended with an error")
    return None


def _task_words(task: str | None) -> str:
    if task == "TASK_RUNNING":
        return translate("Status", "Working…")
    if task == "WAITING_FOR_LLM":
        return translate("Status", "Waiting for the model…")
    if task == "PROCESSING_RESPONSE":
        return translate("Status", "Reading the model's answer…")
    if task == "CHECKING_POLICY":
        return translate("Status", "Checking the policy…")
    if task == "WAITING_FOR_APPROVAL":
        return translate("Status", "Waiting for your approval")
    if task == "EXECUTING_TOOLS":
        return translate("Status", "Running tools…")
    if task == "TASK_COMPLETED":
        return translate("Status", "Done — ready for your next message")
    if task == "TASK_FAILED":
        return translate("Status", "The task failed")
    if task == "TASK_CANCELLED":
        return translate("Status", "Cancelled — ready for your next message")
    return translate("Status", "Ready for your message")


def state_text(session: str | None, task: str | None) -> str:
    """What the conversation is doing now, in a few words."""
    if session == "SESSION_CREATED" and task in ACTIVE_TASK_STATES:
        return _task_words(task)  # a task accepted before session_started arrived
    return _session_words(session) or _task_words(task)


def steps_text(task: str | None, step_count: int, max_steps: int | None, *, near_limit: bool) -> str:
    """The step counter: the step under way while a task runs, the steps used once it has ended;
    ``""`` when there is nothing to count."""
    if not max_steps:
        return ""
    if task in ACTIVE_TASK_STATES:
        text = translate("Status", "Step {n} of {total}").format(n=max(step_count, 1), total=max_steps)
    elif step_count > 0 and task in ("TASK_COMPLETED", "TASK_FAILED", "TASK_CANCELLED"):
        text = translate("Status", "{n} of {total} steps used").format(n=step_count, total=max_steps)
    else:
        return ""
    if near_limit:
        text += translate("Status", " — near the limit")
    return text
