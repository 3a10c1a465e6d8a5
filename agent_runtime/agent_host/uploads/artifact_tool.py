"""``UploadArtifact`` (seed 000 §7.2: ``Workspace.Upload``, handled by the agent host directly).

The model names a file on this computer; the host reads it and uploads it to the Workspace Service as
a ``tool_output`` artifact of the current step, through the session's upload queue (spooled durably,
sent in the background, :mod:`.queue`). Before that, the dispatch resolved the path like a ReadFile's
and the policy checked it (:meth:`PolicyEnforcer.check` for ``Workspace.Upload``: the File.Read paths
and size limit, the upload grant's ``maxFileSizeBytes``, approvals).

The call waits for the upload while the service answers (:meth:`UploadQueue.settle`, bounded), so the
model learns whether it arrived; when the service cannot be reached the file stays spooled and is sent
later, and the result says so.
"""

from __future__ import annotations

import asyncio
import mimetypes
import os
import stat
from collections.abc import Sequence
from typing import Protocol

from pydantic import ValidationError

from agent_runtime.agent_host.routing.artifacts import ArtifactQueue
from contracts.enums import ArtifactType, ToolName, ToolStatus
from contracts.errors import ErrorCode
from contracts.rest.workspaces import ArtifactUploadRequest
from contracts.tools import ReadScope, ToolArtifact, ToolDefinition, ToolError, ToolRequest, ToolResult
from contracts.urls import RedirectCheck
from contracts.validation import invalid_request, validate_json_value

from .queue import SENT

__all__ = ["MAX_ARTIFACT_FILE_BYTES", "UPLOAD_ARTIFACT_DEFINITION", "ArtifactSink", "UploadArtifactTool"]

MAX_ARTIFACT_FILE_BYTES = 50 * 1024 * 1024
"""The largest file UploadArtifact reads, whatever the policy allows: the content is held in memory
once and base64-encoded for the Workspace Service (the limit of ``routing.MAX_UPLOAD_BYTES``)."""

_DEFAULT_CONTENT_TYPE = "application/octet-stream"

UPLOAD_ARTIFACT_DEFINITION = ToolDefinition(
    tool_name=ToolName.UPLOAD_ARTIFACT.value,
    description=(
        "Save a file from this computer to the workspace as an artifact of this session, so the user can"
        " find it in Cowork and later sessions can search it: a report, a build log, a generated file."
        " The file is read under the same rules as ReadFile."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "The file to upload: absolute, or relative to the first project folder",
            },
            "artifactName": {
                "type": "string",
                "maxLength": 255,
                "description": "The name it is saved under. Default: the file's name",
            },
            "contentType": {
                "type": "string",
                "description": "Its media type, e.g. text/markdown. Default: guessed from the name",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    },
)


class ArtifactSink(ArtifactQueue, Protocol):
    """Where the file goes: ``uploads.UploadQueue`` is one. ``put`` as the router's queue has it, and
    the ticket it returns is waited for here."""

    async def settle(self, ticket: asyncio.Future[str], *, timeout_s: float = ...) -> str | None: ...


class _Refused(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class UploadArtifactTool:
    """The host's own tool router for ``UploadArtifact`` (the ``ToolRouter`` protocol), one per session."""

    def __init__(self, sink: ArtifactSink, *, workspace_id: str, max_bytes: int = MAX_ARTIFACT_FILE_BYTES):
        self._sink = sink
        self._workspace_id = workspace_id
        self._max_bytes = max_bytes

    def get_available_tools(self) -> list[ToolDefinition]:
        return [UPLOAD_ARTIFACT_DEFINITION]

    async def execute(
        self,
        request: ToolRequest,
        *,
        check_redirect: RedirectCheck | None = None,
        read_scope: ReadScope | None = None,
    ) -> ToolResult:
        try:
            path, name, content_type = self._arguments(request)
            content = await asyncio.to_thread(_read, path, self._max_bytes)
        except _Refused as exc:
            return _result(request, ToolStatus.FAILED, error=ToolError(code=exc.code, message=exc.message))
        ticket = await self._sink.put(
            workspace_id=self._workspace_id,
            session_id=request.session_id,
            task_id=request.task_id,
            step_id=request.step_id,
            artifact_type=ArtifactType.TOOL_OUTPUT,
            artifact_name=name,
            content_type=content_type,
            content=content,
            durable=True,  # asked for by name: kept through a power cut until the service has it
        )
        outcome = await self._sink.settle(ticket)
        described = f"{name} ({len(content):,} bytes, {content_type})"
        if outcome == SENT:
            text = f"Uploaded {described} to the workspace as an artifact of this session."
            return _result(request, ToolStatus.SUCCEEDED, output=text)
        if outcome is None:
            text = (
                f"{described} is saved on this computer and will be uploaded to the workspace when the"
                " Workspace Service can be reached; nothing more to do."
            )
            return _result(request, ToolStatus.SUCCEEDED, output=text)
        message = f"{name} was not uploaded: {outcome}"
        return _result(
            request,
            ToolStatus.FAILED,
            error=ToolError(code=ErrorCode.WORKSPACE_UPLOAD_FAILED, message=message),
        )

    def _arguments(self, request: ToolRequest) -> tuple[str, str, str]:
        arguments = request.arguments
        path = arguments.get("path")
        if not isinstance(path, str) or not os.path.isabs(path):
            # The dispatch resolves the path before the policy check; anything else is a routing bug.
            raise _Refused(ErrorCode.INVALID_REQUEST, "arguments.path must name a file")
        name = arguments.get("artifactName", os.path.basename(path))
        content_type = (
            arguments.get("contentType") or mimetypes.guess_type(str(name))[0] or _DEFAULT_CONTENT_TYPE
        )
        try:
            # The Workspace Service's own rules for the name and the media type, checked before reading.
            validate_json_value(
                ArtifactUploadRequest,
                {
                    "workspaceId": self._workspace_id,
                    "sessionId": request.session_id,
                    "taskId": request.task_id,
                    "stepId": request.step_id,
                    "artifactType": ArtifactType.TOOL_OUTPUT.value,
                    "artifactName": name,
                    "contentType": content_type,
                    "contentBase64": "",
                },
            )
        except ValidationError as exc:
            details = invalid_request(exc).details
            raise _Refused(
                ErrorCode.INVALID_REQUEST, f"arguments.{details['field']} {details['problem']}"
            ) from None
        return path, str(name), str(content_type)

    def release_artifacts(self, artifacts: Sequence[ToolArtifact]) -> None:
        """Nothing to release: the file read is the user's own, not a spooled artifact."""

    async def aclose(self) -> None:
        """Nothing runs in the background here: the queue belongs to the session."""


def _read(path: str, max_bytes: int) -> bytes:
    """The file's content; :class:`_Refused` with the seed's code when it cannot be uploaded."""
    try:
        # Non-blocking open: a FIFO named here must not hang the worker thread (the file type is
        # checked on the open descriptor, so nothing can be swapped in between).
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with open(descriptor, "rb") as handle:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                raise _Refused(ErrorCode.INVALID_REQUEST, f"{path} is not a regular file")
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise _Refused(ErrorCode.FILE_NOT_FOUND, f"No such file: {path}") from None
    except IsADirectoryError:
        raise _Refused(ErrorCode.INVALID_REQUEST, f"{path} is a directory, not a file") from None
    except PermissionError:
        raise _Refused(ErrorCode.PERMISSION_DENIED, f"Permission denied reading {path}") from None
    except OSError as exc:
        raise _Refused(ErrorCode.TOOL_EXECUTION_FAILED, f"{path} could not be read: {exc.strerror}") from None
    if len(data) > max_bytes:
        raise _Refused(
            ErrorCode.FILE_TOO_LARGE, f"{path} is larger than the {max_bytes:,} bytes UploadArtifact can send"
        )
    return data


def _result(
    request: ToolRequest, status: ToolStatus, *, output: str | None = None, error: ToolError | None = None
) -> ToolResult:
    return ToolResult.answering(request, status, output_text=output, error=error)
