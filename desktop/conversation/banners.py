"""The banner above a conversation: what went wrong, in words that say what to do next.

One banner at a time per conversation, replaced by the next problem and cleared when the user acts
(sends, resumes) or the problem goes away (the session resumed). The texts come from the runtime's
reasons (seed 000 §11: budget exceeded, guardrail blocked, paused, …) and from the desktop's own
failures (the runtime process died, a call failed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from desktop.conversation.items import Tone

__all__ = [
    "Banner",
    "BannerAction",
    "gateway_problem",
    "pause_banner",
    "policy_restored_banner",
    "policy_updated_text",
    "runtime_lost_banner",
    "runtime_not_recovered_banner",
    "stopped_banner",
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
    UPDATE_RUNTIME = "update_runtime"
    """Download the runtime the backend accepts (seed 001 §11), then start the session again."""


_LABELS = {
    BannerAction.RESUME: "Resume",
    BannerAction.NEW_SESSION: "Continue in a new session",
    BannerAction.RESTART_RUNTIME: "Try again",
    BannerAction.SETTINGS: "Open Settings",
    BannerAction.OPEN_LOGS: "Open logs folder",
    BannerAction.UPDATE_RUNTIME: "Download a compatible runtime",
}


@dataclass(frozen=True)
class Banner:
    text: str
    tone: Tone = Tone.ERROR
    action: BannerAction | None = None
    more: BannerAction | None = None
    """A second thing to do, offered beside ``action`` (Open Settings beside Resume)."""
    topic: str | None = None
    """What the banner is about when a later event may answer it (``policy_revoked``)."""

    @property
    def revoked(self) -> bool:
        """The session paused because the organisation revoked its policy."""
        return self.topic == "policy_revoked"

    @property
    def action_label(self) -> str:
        return _LABELS[self.action] if self.action is not None else ""

    @property
    def more_label(self) -> str:
        return _LABELS[self.more] if self.more is not None else ""


def _said(message: str | None, fallback: str) -> str:
    text = " ".join((message or "").split()).rstrip(".")
    if len(text) > 400:
        text = text[:399] + "…"
    return text or fallback


def task_failed_banner(
    reason: str | None,
    message: str | None,
    *,
    step_count: int | None,
    max_steps: int | None,
    error: Mapping[str, Any] | None = None,
    endpoint: str | None = None,
) -> Banner:
    """Why a task failed (``task_failed``'s ``reason`` and error) and what the user can do.
    ``endpoint``: the gateway the conversation's runtime calls, named when the model call failed."""
    if reason == "budget_exceeded":
        return Banner(
            "This conversation has used up its token budget. Continue in a new session: it keeps the"
            " conversation's history and starts with a fresh budget.",
            action=BannerAction.NEW_SESSION,
        )
    if reason == "guardrail_blocked":
        # The runtime's message already opens with "The LLM gateway blocked the request": said once.
        said = _said(message, "")
        for prefix in ("The LLM gateway blocked the request:", "The LLM gateway blocked the request"):
            said = said.removeprefix(prefix).strip()
        return Banner(
            f"The LLM gateway's guardrail blocked the request: {said or 'no reason given'}."
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
            f"The model call failed: {gateway_problem(error, message, endpoint)}. Check the LLM gateway"
            " in Settings, then send the request again.",
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


def pause_banner(
    reason: str | None,
    message: str | None,
    *,
    error: Mapping[str, Any] | None = None,
    endpoint: str | None = None,
) -> Banner:
    """The session paused (seed 000 §3.3 RUNNING → PAUSED): the task waits for ResumeSession.
    ``error``: the event's error shape; ``endpoint``: the gateway the conversation's runtime calls."""
    if reason == "llm_unreachable":
        details = error.get("details") if isinstance(error, Mapping) else None
        attempts = details.get("attempts") if isinstance(details, Mapping) else None
        after = f" after {attempts} attempts" if isinstance(attempts, int) and attempts > 1 else ""
        return Banner(
            f"Paused{after}: {gateway_problem(error, message, endpoint)}. Fix the gateway or its"
            " settings, then resume — the task goes on from its last step.",
            tone=Tone.WARNING,
            action=BannerAction.RESUME,
            more=BannerAction.SETTINGS,
        )
    if reason == "policy_revoked":
        details = error.get("details") if isinstance(error, Mapping) else None
        why = details.get("revocationReason") if isinstance(details, Mapping) else None
        return Banner(
            f"Paused: the organisation revoked this session's policy ({_said(str(why or ''), 'no reason')})."
            " Resume once an administrator has installed a valid policy, or close the conversation.",
            tone=Tone.WARNING,
            action=BannerAction.RESUME,
            topic="policy_revoked",
        )
    if reason == "policy_expired":
        text = "Paused: the session's policy expired. Resume to fetch a renewed policy and go on."
    else:
        text = f"Paused: {_said(message, reason or 'no reason given')}. Resume when the problem is fixed."
    return Banner(text, tone=Tone.WARNING, action=BannerAction.RESUME)


def policy_restored_banner() -> Banner:
    """The policy was revoked, and now a valid one is in force: the paused session may go on."""
    return Banner(
        "A valid policy is in force again. Resume to go on from where the task paused.",
        tone=Tone.INFO,
        action=BannerAction.RESUME,
    )


def stopped_banner(reason: str | None) -> Banner:
    """An administrator stopped the session (remote admin stop): it ends; the conversation can go on
    in a new session."""
    said = _said(reason, "Stopped by an administrator")
    if not said.lower().startswith("stopped by an administrator"):
        said = f"Stopped by an administrator: {said}"
    return Banner(
        f"{said}. The session has ended; continue in a new session — its history comes along.",
        tone=Tone.WARNING,
        action=BannerAction.NEW_SESSION,
    )


_CAPABILITY_WORDS = {
    "File.Read": "reading files",
    "File.Write": "writing files",
    "File.Delete": "deleting files",
    "Shell.Exec": "running commands",
    "Network.Http": "web requests",
    "Workspace.Upload": "saving artifacts",
    "BackendTool.Invoke": "remote tools",
    "MCP.Invoke": "MCP tools",
    "LLM.Call": "model calls",
}


def policy_updated_text(payload: Mapping[str, Any]) -> str:
    """The notice for ``policy_updated``: what the organisation's new policy allows or no longer does."""

    def words(key: str) -> str:
        names = payload.get(key)
        listed = [str(n) for n in names if isinstance(n, str)] if isinstance(names, list) else []
        return ", ".join(_CAPABILITY_WORDS.get(name, name) for name in listed)

    added, removed = words("added"), words("removed")
    parts = [f"now allowed: {added}"] if added else []
    if removed:
        parts.append(f"no longer allowed: {removed}")
    if not parts:
        return "The organisation's policy was updated; what this session may do is unchanged."
    return "The organisation's policy was updated — " + "; ".join(parts) + "."


def gateway_problem(error: Mapping[str, Any] | None, message: str | None, endpoint: str | None) -> str:
    """What went wrong with the LLM gateway, in one clause that names its URL and the HTTP status or
    the network error once: "the LLM gateway at URL answered HTTP 500 (overloaded)".

    ``error`` is the runtime's error shape; when retries ran out, the last attempt's shape is its
    ``details.cause``, and that attempt is what the clause describes."""
    shape: Mapping[str, Any] = error if isinstance(error, Mapping) else {}
    cause = _mapping(_mapping(shape.get("details")).get("cause"))
    if cause:
        shape = cause
    details = _mapping(shape.get("details"))
    said = str(shape.get("message") or message or "")
    where = f"the LLM gateway at {endpoint}" if endpoint else "the LLM gateway"
    status = details.get("status")
    if isinstance(status, int) and not isinstance(status, bool):
        # The gateway's own words follow the status in the runtime's message: "… (HTTP 500): why".
        _, marker, words = said.partition(f"(HTTP {status})")
        words = words.strip().lstrip(":").strip() if marker else ""
        words = words.removesuffix("Check LLM_GATEWAY_AUTH_TOKEN.").strip().rstrip(".")
        refused = " refused the credentials with" if status in (401, 403) else " answered"
        words = _said(words, "")
        return f"{where}{refused} HTTP {status}" + (f" ({words})" if words else "")
    network = details.get("networkError")
    if isinstance(network, str) and network.strip():
        return f"{where} could not be reached: {_said(network, 'no answer')}"
    said = _said(said, "")
    if said.startswith(_SUBJECT):
        # "The LLM gateway did not answer in time": the URL goes where the runtime named the gateway.
        return f"{where}{said[len(_SUBJECT) :]}"
    return f"{where} failed: {said or 'no reason given'}"


_SUBJECT = "The LLM gateway"


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


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
