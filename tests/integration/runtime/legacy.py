"""The checkpoint a runtime before the session runtime (seed 002) wrote — ``checkpointVersion: "1.0"`` —
made from a ``session_runtime_v2`` snapshot of the same session, field for field, so a test can put an
older runtime's file in place of the current one's (the golden files in
tests/agent_runtime/agent_host/session_runtime/golden were written by that runtime itself)."""

from __future__ import annotations

from typing import Any

__all__ = ["legacy_checkpoint"]


def legacy_checkpoint(snapshot: dict[str, Any]) -> dict[str, Any]:
    loop = snapshot.get("loop", {})
    task = dict(loop["task"]) if loop.get("task") else None
    cursor = task.pop("stepCursor", None) if task else None
    document: dict[str, Any] = {
        "checkpointVersion": "1.0",
        **{key: snapshot[key] for key in ("sessionId", "workspaceId", "tenantId", "userId", "sessionStatus")},
        "task": task,
        "stepCursor": cursor,
        "thread": snapshot["transcript"]["messages"],
        "sessionTokensUsed": snapshot["transcript"]["sessionTokensUsed"],
        "policyBundleVersion": snapshot["policyBundleVersion"],
        "checkpointedAt": snapshot["checkpointedAt"],
        "approvalDecisions": snapshot.get("permissions", {}).get("approvalDecisions", []),
        "workspacePaths": snapshot.get("workspacePaths", []),
        "taskCount": loop.get("taskCount"),
        "sessionStartedAt": loop.get("sessionStartedAt"),
    }
    return {key: value for key, value in document.items() if value is not None}
