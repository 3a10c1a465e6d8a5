"""Approval requests as the runtime sends them (the ``approval_requested`` payload's wire dict)."""

from __future__ import annotations

from typing import Any


def request(approval_id: str = "appr_1", **fields: Any) -> dict[str, Any]:
    """A command approval like seed 000 §10.1's example, with ``fields`` replacing its own."""
    base: dict[str, Any] = {
        "approvalId": approval_id,
        "sessionId": "sess_1",
        "taskId": "task_1",
        "stepId": "step_3",
        "title": "Local command execution",
        "actionSummary": "Run: pytest tests/ --verbose",
        "riskLevel": "medium",
        "details": {"toolName": "RunCommand", "command": "pytest tests/ --verbose", "cwd": "/home/me/demo"},
        "timeoutSeconds": 300,
        "expiresAt": "2026-11-23T12:05:00Z",
    }
    base.update(fields)
    return base


WRITE_DIFF = (
    "--- a/src/app.py\n"
    "+++ b/src/app.py\n"
    "@@ -1,3 +1,3 @@\n"
    " import sys\n"
    "-print('hello')\n"
    "+print('hello, world')\n"
    " sys.exit(0)\n"
)


def write_request(approval_id: str = "appr_w", **fields: Any) -> dict[str, Any]:
    return request(
        approval_id,
        title="Write a file",
        actionSummary="Write: /home/me/demo/src/app.py",
        riskLevel="high",
        details={"toolName": "WriteFile", "path": "/home/me/demo/src/app.py", "diff": WRITE_DIFF},
        **fields,
    )
