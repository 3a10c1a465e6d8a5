"""The banner above a conversation: what went wrong, in words that say what to do next.

One banner at a time per conversation, replaced by the next problem and cleared when the user acts
(sends, resumes) or the problem goes away (the session resumed). The texts come from the runtime's
reasons (seed 000 §11: budget exceeded, guardrail blocked, paused, …) and from the desktop's own
failures (the runtime process died, a call failed).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from desktop.conversation.items import Tone

__all__ = [
    "Banner",
    "BannerAction",
    "pause_banner",
    "runtime_lost_banner",
    "runtime_not_recovered_banner",
    "task_failed_banner",
]


class BannerAction(StrEnum):
    RESUME = "resume"
    """ResumeSession: a paused session goes on."""
    NEW_SESSION = "new_session"
    """Continue this conversation in a new session (its history comes along, the budget is fresh)."""
    RESTART_RUNTIME = "restart_runtime"
    """Start the runtime again and resume from the checkpoint."""
    SETTINGS = "settings"
    OPEN_LOGS = "open_logs"


_LABELS = {
    BannerAction.RESUME: "Resume",
    BannerAction.NEW_SESSION: "Continue in a new session",
    BannerAction.RESTART_RUNTIME: "Try again",
    BannerAction.SETTINGS: "Open Settings",
    BannerAction.OPEN_LOGS: "Open logs folder",
}


@dataclass(frozen=True)
class Banner:
    text: str
    tone: Tone = Tone.ERROR
    action: BannerAction | None = None

    @property
    def action_label(self) -> str:
        return _LABELS[self.action] if self.action is not None else ""


def _said(message: str | None, fallback: str) -> str:
    text = " ".join((message or "").split()).rstrip(".")
    if len(text) > 400:
        text = text[:399] + "…"
    return text or fallback


def task_failed_banner(
    reason: str | None, message: str | None, *, step_count: int | None, max_steps: int | None
) -> Banner:
    """Why a task failed (``task_failed``'s ``reason`` and error message) and what the user can do."""
    if reason == "budget_exceeded":
        return Banner(
            "This conversation has used up its token budget. Continue in a new session: it keeps the"
            " conversation's history and starts with a fresh budget.",
            action=BannerAction.NEW_SESSION,
        )
    if reason == "guardrail_blocked":
        return Banner(
            f"The LLM gateway's guardrail blocked the request: {_said(message, 'no reason given')}."
            " Rephrase the request and send it again."
        )
    if reason == "max_steps_exceeded":
        limit = f" after {max_steps} steps" if max_steps else ""
        return Banner(
            f"The task stopped{limit}, its step limit. Send “continue” to let it go on, or raise the"
            " step limit in Settings.",
            tone=Tone.WARNING,
            action=BannerAction.SETTINGS,
        )
    if reason == "repeated_tool_call":
        return Banner(
            f"The task stopped because the agent kept repeating the same action"
            f" ({_said(message, 'the same tool call')}). Rephrase the request or add detail, then send"
            " it again."
        )
    if reason == "context_window_exceeded":
        return Banner(
            "The latest message and its tool results are too large for the model's input window. Ask"
            " for a smaller piece of work, or continue in a new session.",
            action=BannerAction.NEW_SESSION,
        )
    if reason == "llm_denied":
        return Banner(
            f"The policy does not allow this model call: {_said(message, 'no reason given')}. Choose an"
            " allowed model in Settings.",
            action=BannerAction.SETTINGS,
        )
    if reason == "llm_failed":
        return Banner(
            f"The model call failed: {_said(message, 'no reason given')}. Check the LLM gateway in"
            " Settings, then send the request again.",
            action=BannerAction.SETTINGS,
        )
    if reason == "internal_error":
        return Banner(
            "The agent runtime hit an internal error and stopped the task. Send the request again; if"
            " it keeps happening, the logs say why.",
            action=BannerAction.OPEN_LOGS,
        )
    steps = f" at step {step_count}" if step_count else ""
    return Banner(f"The task failed{steps}: {_said(message, reason or 'no reason given')}.")


def pause_banner(reason: str | None, message: str | None) -> Banner:
    """The session paused (seed 000 §3.3 RUNNING → PAUSED): the task waits for ResumeSession."""
    if reason == "llm_unreachable":
        text = (
            f"Paused: the LLM gateway could not be reached ({_said(message, 'no answer')}). Check the"
            " connection or the gateway, then resume — the task goes on from its last step."
        )
    elif reason == "policy_expired":
        text = "Paused: the session's policy expired. Resume to fetch a renewed policy and go on."
    else:
        text = f"Paused: {_said(message, reason or 'no reason given')}. Resume when the problem is fixed."
    return Banner(text, tone=Tone.WARNING, action=BannerAction.RESUME)


def runtime_lost_banner(why: str) -> Banner:
    """The runtime process died; the desktop is starting another one from the checkpoint."""
    return Banner(
        f"The agent runtime stopped unexpectedly ({_said(why, 'no reason given')}). Resuming from the"
        " last checkpoint…",
        tone=Tone.WARNING,
    )


def runtime_not_recovered_banner(why: str) -> Banner:
    return Banner(
        f"The agent runtime stopped and could not be resumed: {_said(why, 'no reason given')}. Try"
        " again, or open the logs folder to see why.",
        action=BannerAction.RESTART_RUNTIME,
    )
