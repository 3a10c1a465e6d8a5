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
from desktop.i18n import QT_TRANSLATE_NOOP, translate

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


_LABELS = {  # translated where shown
    BannerAction.RESUME: QT_TRANSLATE_NOOP("Banners", "Resume"),
    BannerAction.NEW_SESSION: QT_TRANSLATE_NOOP("Banners", "Continue in a new session"),
    BannerAction.RESTART_RUNTIME: QT_TRANSLATE_NOOP("Banners", "Try again"),
    BannerAction.SETTINGS: QT_TRANSLATE_NOOP("Banners", "Open Settings"),
    BannerAction.OPEN_LOGS: QT_TRANSLATE_NOOP("Banners", "Open logs folder"),
    BannerAction.UPDATE_RUNTIME: QT_TRANSLATE_NOOP("Banners", "Download a compatible runtime"),
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
        return translate("Banners", _LABELS[self.action]) if self.action is not None else ""

    @property
    def more_label(self) -> str:
        return translate("Banners", _LABELS[self.more]) if self.more is not None else ""


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
            translate(
                "Banners",
                "This conversation has used up its token budget. Continue in a new session: it keeps the"
                " conversation's history and starts with a fresh budget.",
            ),
            action=BannerAction.NEW_SESSION,
        )
    if reason == "guardrail_blocked":
        # The runtime's message already opens with "The LLM gateway blocked the request": said once.
        said = _said(message, "")
        for prefix in ("The LLM gateway blocked the request:", "The LLM gateway blocked the request"):
            said = said.removeprefix(prefix).strip()
        return Banner(
            translate(
                "Banners",
                "The LLM gateway's guardrail blocked the request: {reason}. Rephrase the request and send it"
                " again.",
            ).format(reason=said or _no_reason())
        )
    if reason == "max_steps_exceeded":
        text = (
            translate(
                "Banners",
                "The task stopped after {count} steps, its step limit. Send “continue” to let it go on, or"
                " raise the step limit in Settings.",
            ).format(count=max_steps)
            if max_steps
            else translate(
                "Banners",
                "The task stopped at its step limit. Send “continue” to let it go on, or raise the step"
                " limit in Settings.",
            )
        )
        return Banner(
            text,
            tone=Tone.WARNING,
            action=BannerAction.SETTINGS,
        )
    if reason == "repeated_tool_call":
        return Banner(
            translate(
                "Banners",
                "The task stopped because the agent kept repeating the same action ({action}). Rephrase the"
                " request or add detail, then send it again.",
            ).format(action=_said(message, translate("Banners", "the same tool call")))
        )
    if reason == "context_window_exceeded":
        return Banner(
            translate(
                "Banners",
                "The latest message and its tool results are too large for the model's input window. Ask"
                " for a smaller piece of work, or continue in a new session.",
            ),
            action=BannerAction.NEW_SESSION,
        )
    if reason == "llm_denied":
        return Banner(
            translate(
                "Banners",
                "The policy does not allow this model call: {reason}. Choose an allowed model in Settings.",
            ).format(reason=_said(message, _no_reason())),
            action=BannerAction.SETTINGS,
        )
    if reason == "llm_failed":
        return Banner(
            translate(
                "Banners",
                "The model call failed: {problem}. Check the LLM gateway in Settings, then send the request"
                " again.",
            ).format(problem=gateway_problem(error, message, endpoint)),
            action=BannerAction.SETTINGS,
        )
    if reason == "internal_error":
        return Banner(
            translate(
                "Banners",
                "The agent runtime hit an internal error and stopped the task. Send the request again; if"
                " it keeps happening, the logs say why.",
            ),
            action=BannerAction.OPEN_LOGS,
        )
    said = _said(message, reason or _no_reason())
    if step_count:
        return Banner(
            translate("Banners", "The task failed at step {step}: {reason}.").format(
                step=step_count, reason=said
            )
        )
    return Banner(translate("Banners", "The task failed: {reason}.").format(reason=said))


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
        problem = gateway_problem(error, message, endpoint)
        text = (
            translate(
                "Banners",
                "Paused after {count} attempts: {problem}. Fix the gateway or its settings, then resume — the"
                " task goes on from its last step.",
            ).format(count=attempts, problem=problem)
            if isinstance(attempts, int) and attempts > 1
            else translate(
                "Banners",
                "Paused: {problem}. Fix the gateway or its settings, then resume — the task goes on from its"
                " last step.",
            ).format(problem=problem)
        )
        return Banner(
            text,
            tone=Tone.WARNING,
            action=BannerAction.RESUME,
            more=BannerAction.SETTINGS,
        )
    if reason == "policy_revoked":
        details = error.get("details") if isinstance(error, Mapping) else None
        why = details.get("revocationReason") if isinstance(details, Mapping) else None
        return Banner(
            translate(
                "Banners",
                "Paused: the organisation revoked this session's policy ({reason}). Resume once an"
                " administrator has installed a valid policy, or close the conversation.",
            ).format(reason=_said(str(why or ""), translate("Banners", "no reason"))),
            tone=Tone.WARNING,
            action=BannerAction.RESUME,
            topic="policy_revoked",
        )
    if reason == "policy_expired":
        text = translate(
            "Banners", "Paused: the session's policy expired. Resume to fetch a renewed policy and go on."
        )
    else:
        text = translate("Banners", "Paused: {reason}. Resume when the problem is fixed.").format(
            reason=_said(message, reason or _no_reason())
        )
    return Banner(text, tone=Tone.WARNING, action=BannerAction.RESUME)


def policy_restored_banner() -> Banner:
    """The policy was revoked, and now a valid one is in force: the paused session may go on."""
    return Banner(
        translate("Banners", "A valid policy is in force again. Resume to go on from where the task paused."),
        tone=Tone.INFO,
        action=BannerAction.RESUME,
    )


def stopped_banner(reason: str | None) -> Banner:
    """An administrator stopped the session (remote admin stop): it ends; the conversation can go on
    in a new session."""
    said = _said(reason, "")
    if said.lower().startswith("stopped by an administrator"):
        said = said[len("stopped by an administrator") :].lstrip(" :")
    text = (
        translate(
            "Banners",
            "Stopped by an administrator: {reason}. The session has ended; continue in a new session — its"
            " history comes along.",
        ).format(reason=said)
        if said
        else translate(
            "Banners",
            "Stopped by an administrator. The session has ended; continue in a new session — its history"
            " comes along.",
        )
    )
    return Banner(
        text,
        tone=Tone.WARNING,
        action=BannerAction.NEW_SESSION,
    )


_CAPABILITY_WORDS = {  # translated where shown
    "File.Read": QT_TRANSLATE_NOOP("Banners", "reading files"),
    "File.Write": QT_TRANSLATE_NOOP("Banners", "writing files"),
    "File.Delete": QT_TRANSLATE_NOOP("Banners", "deleting files"),
    "Shell.Exec": QT_TRANSLATE_NOOP("Banners", "running commands"),
    "Network.Http": QT_TRANSLATE_NOOP("Banners", "web requests"),
    "Workspace.Upload": QT_TRANSLATE_NOOP("Banners", "saving artifacts"),
    "BackendTool.Invoke": QT_TRANSLATE_NOOP("Banners", "remote tools"),
    "MCP.Invoke": QT_TRANSLATE_NOOP("Banners", "MCP tools"),
    "LLM.Call": QT_TRANSLATE_NOOP("Banners", "model calls"),
}


def policy_updated_text(payload: Mapping[str, Any]) -> str:
    """The notice for ``policy_updated``: what the organisation's new policy allows or no longer does."""

    def words(key: str) -> str:
        names = payload.get(key)
        listed = [str(n) for n in names if isinstance(n, str)] if isinstance(names, list) else []
        return ", ".join(
            translate("Banners", _CAPABILITY_WORDS[name]) if name in _CAPABILITY_WORDS else name
            for name in listed
        )

    added, removed = words("added"), words("removed")
    parts = [translate("Banners", "now allowed: {capabilities}").format(capabilities=added)] if added else []
    if removed:
        parts.append(translate("Banners", "no longer allowed: {capabilities}").format(capabilities=removed))
    if not parts:
        return translate(
            "Banners", "The organisation's policy was updated; what this session may do is unchanged."
        )
    return translate("Banners", "The organisation's policy was updated — {changes}.").format(
        changes="; ".join(parts)
    )


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
    where = (
        translate("Banners", "the LLM gateway at {endpoint}").format(endpoint=endpoint)
        if endpoint
        else translate("Banners", "the LLM gateway")
    )
    status = details.get("status")
    if isinstance(status, int) and not isinstance(status, bool):
        # The gateway's own words follow the status in the runtime's message: "… (HTTP 500): why".
        _, marker, words = said.partition(f"(HTTP {status})")
        words = words.strip().lstrip(":").strip() if marker else ""
        words = words.removesuffix("Check LLM_GATEWAY_AUTH_TOKEN.").strip().rstrip(".")
        answered = (
            translate("Banners", "{gateway} refused the credentials with HTTP {status}")
            if status in (401, 403)
            else translate("Banners", "{gateway} answered HTTP {status}")
        ).format(gateway=where, status=status)
        words = _said(words, "")
        return answered + (f" ({words})" if words else "")
    network = details.get("networkError")
    if isinstance(network, str) and network.strip():
        return translate("Banners", "{gateway} could not be reached: {error}").format(
            gateway=where, error=_said(network, translate("Banners", "no answer"))
        )
    said = _said(said, "")
    if said.startswith(_SUBJECT):
        # "The LLM gateway did not answer in time": the URL goes where the runtime named the gateway.
        return f"{where}{said[len(_SUBJECT) :]}"
    return translate("Banners", "{gateway} failed: {reason}").format(
        gateway=where, reason=said or _no_reason()
    )


_SUBJECT = "The LLM gateway"


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _no_reason() -> str:
    return translate("Banners", "no reason given")


def runtime_lost_banner(why: str) -> Banner:
    """The runtime process died; the desktop is starting another one from the checkpoint."""
    return Banner(
        translate(
            "Banners", "The agent runtime stopped unexpectedly ({reason}). Resuming from the last checkpoint…"
        ).format(reason=_said(why, _no_reason())),
        tone=Tone.WARNING,
    )


def runtime_not_recovered_banner(why: str) -> Banner:
    return Banner(
        translate(
            "Banners",
            "The agent runtime stopped and could not be resumed: {reason}. Try again, or open the logs folder"
            " to see why.",
        ).format(reason=_said(why, _no_reason())),
        action=BannerAction.RESTART_RUNTIME,
    )
