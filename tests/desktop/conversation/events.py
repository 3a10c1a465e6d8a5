"""SessionEvent params as the runtime sends them, for the state tests."""

from __future__ import annotations

from typing import Any


def event(
    kind: str, payload: dict[str, Any] | None = None, *, task: str = "task_1", step: str | None = "step_1"
) -> dict[str, Any]:
    return {
        "eventId": f"evt_{kind}",
        "eventType": kind,
        "timestamp": "2026-01-01T00:00:00Z",
        "workspaceId": "ws_1",
        "sessionId": "sess_1",
        "taskId": task,
        "stepId": step,
        "payload": payload or {},
    }


def chunk(text: str, step: str = "step_1") -> dict[str, Any]:
    return event("text_chunk", {"text": text}, step=step)
