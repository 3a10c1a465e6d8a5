"""What ``cowork exec`` shows of a session's events.

Text mode: the assistant's words on stdout as they stream, everything else (tool activity, warnings,
how the task ended) as short lines on stderr, so ``cowork exec … > answer.md`` keeps just the answer.
``--json``: every ``SessionEvent`` as one JSON line on stdout, unchanged, for machines.
"""

from __future__ import annotations

import json
from typing import Any, Protocol, TextIO

__all__ = ["JsonRenderer", "Renderer", "TextRenderer"]


class Renderer(Protocol):
    def event(self, event: dict[str, Any]) -> None: ...

    def note(self, text: str) -> None:
        """A line from ``cowork exec`` itself (start-up, warnings, how to resume)."""

    def finish(self) -> None:
        """The run is over: end a partial line of output."""


class JsonRenderer:
    def __init__(self, out: TextIO, err: TextIO) -> None:
        self._out = out
        self._err = err

    def event(self, event: dict[str, Any]) -> None:
        self._out.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._out.flush()

    def note(self, text: str) -> None:
        self._err.write(f"cowork: {text}\n")
        self._err.flush()

    def finish(self) -> None:
        self._out.flush()


class TextRenderer:
    def __init__(self, out: TextIO, err: TextIO) -> None:
        self._out = out
        self._err = err
        self._mid_line = False  # stdout holds a partial line of assistant text

    def event(self, event: dict[str, Any]) -> None:
        kind = event.get("eventType")
        payload = event.get("payload") or {}
        if kind == "text_chunk":
            text = str(payload.get("text", ""))
            self._out.write(text)
            self._out.flush()
            if text:
                self._mid_line = not text.endswith("\n")
            return
        line = _describe(str(kind), payload)
        if line is not None:
            self.note(line)

    def finish(self) -> None:
        if self._mid_line:
            self._out.write("\n")
            self._mid_line = False
        self._out.flush()

    def note(self, text: str) -> None:
        if self._mid_line:
            self._out.write("\n")  # the next words start below the tool line, not after it
            self._out.flush()
            self._mid_line = False
        self._err.write(f"{text}\n")
        self._err.flush()


def _describe(kind: str, payload: dict[str, Any]) -> str | None:
    if kind == "tool_requested":
        target = payload.get("target")
        return f"→ {payload.get('toolName')}" + (f" {_short(target)}" if target else "")
    if kind == "tool_completed":
        name, status = payload.get("toolName"), payload.get("status")
        if status == "succeeded":
            return f"✓ {name} ({payload.get('latencyMs', 0)} ms)"
        error = payload.get("error") or {}
        return f"✗ {name} {status}: {_short(error.get('message', ''), 300)}"
    if kind == "step_limit_approaching":
        return f"! step {payload.get('stepCount')} of {payload.get('maxSteps')}: the step limit is near"
    if kind == "approval_timeout":
        return "! an approval request timed out and was denied"
    if kind == "approval_resolved" and payload.get("savedRule"):
        return f"  allowed without asking by the project's saved rule {_short(str(payload['savedRule']))}"
    if kind == "policy_expired":
        return "! the session's policy expired; the session pauses until it is renewed"
    if kind == "policy_revoked":
        return (
            f"! the organisation revoked the policy: {_short(payload.get('reason', ''))}; the session pauses"
        )
    if kind == "policy_updated":
        added, removed = payload.get("added") or [], payload.get("removed") or []
        changes = [f"+{name}" for name in added] + [f"-{name}" for name in removed]
        return "! the organisation's policy was updated" + (f": {' '.join(changes)}" if changes else "")
    if kind == "session_stop_requested":
        return f"! {_short(payload.get('reason', ''), 500)}; the session ends"
    if kind == "artifact_upload_failed":
        return f"! could not upload {payload.get('artifactName')}: {_short(payload.get('reason', ''))}"
    if kind == "upload_skipped":
        return f"! not uploaded by policy: {payload.get('artifactName')}: {_short(payload.get('reason', ''))}"
    if kind == "redaction_applied":
        return "! sensitive values were redacted from what was sent to the model"
    if kind == "mcp_server_state_changed":
        return _mcp_state(payload)
    if kind == "mcp_config_warning":
        return f"! MCP configuration: {_short(payload.get('message', ''), 400)}"
    if kind == "checkpoint_recovery_failed":
        return "! the saved state of this session could not be read; it starts fresh"
    if kind == "task_failed":
        error = payload.get("error") or {}
        message = error.get("message")
        return f"✗ task failed: {payload.get('reason')}" + (f" — {_short(message, 500)}" if message else "")
    if kind == "task_cancelled":
        return "task cancelled"
    if kind == "session_paused":
        error = payload.get("error") or {}
        return f"! session paused: {_short(error.get('message') or payload.get('reason', ''), 500)}"
    return None


def _mcp_state(payload: dict[str, Any]) -> str | None:
    """A server connecting is not news; connected, unavailable and waiting for a sign-in are."""
    name, state = payload.get("name"), payload.get("state")
    if state == "connected":
        count = payload.get("toolCount", 0)
        return f"  MCP server {name} connected ({count} tool{'s' if count != 1 else ''})"
    if state == "unavailable":
        return f"! MCP server {name} unavailable: {_short(payload.get('lastError') or '', 300)}"
    if state == "authorizing":
        return f"  MCP server {name} is waiting for you to sign in"
    return None


def _short(value: object, limit: int = 160) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
