"""Helpers for the routing tests: a fake Workspace Service uploader, calls.

Result and process checks are the tool runtime tests' own (``tests.agent_runtime.tool_runtime.support``).
"""

from __future__ import annotations

import base64
import hashlib
from datetime import UTC, datetime
from typing import Any

from contracts.errors import CoworkError, ErrorCode
from contracts.rest.workspaces import ArtifactUploadRequest, ArtifactUploadResponse
from contracts.tools import ToolCall

IDS = {"session_id": "sess-1", "task_id": "task-1", "step_id": "step-1"}


def tool_call(name: str, call_id: str = "call-1", **arguments: Any) -> ToolCall:
    return ToolCall(tool_call_id=call_id, tool_name=name, arguments=arguments)


class FakeUploader:
    """The Workspace Service as the dispatch sees it: stores uploads, or fails as told."""

    def __init__(self, *, fail_with: BaseException | None = None) -> None:
        self.fail_with = fail_with
        self.uploads: list[tuple[ArtifactUploadRequest, bytes]] = []

    async def upload_artifact(
        self, request: ArtifactUploadRequest, *, idempotency_key: str | None = None
    ) -> ArtifactUploadResponse:
        if self.fail_with is not None:
            raise self.fail_with
        content = base64.b64decode(request.content_base64, validate=True)
        self.uploads.append((request, content))
        artifact_id = f"art_{len(self.uploads)}"
        now = datetime.now(UTC)
        return ArtifactUploadResponse(
            artifact_id=artifact_id,
            artifact_uri=f"cowork://workspaces/{request.workspace_id}/artifacts/{artifact_id}",
            workspace_id=request.workspace_id,
            session_id=request.session_id,
            task_id=request.task_id,
            step_id=request.step_id,
            artifact_type=request.artifact_type,
            artifact_name=request.artifact_name,
            content_type=request.content_type,
            size_bytes=len(content),
            sha256=hashlib.sha256(content).hexdigest(),
            created_at=now,
            updated_at=now,
            outcome="created",
        )


class Unreachable(CoworkError):
    def __init__(self) -> None:
        super().__init__(
            ErrorCode.WORKSPACE_UPLOAD_FAILED, "The Workspace Service is unreachable", retryable=True
        )
