"""Artifact upload after a tool ran (seed 000 §7.5): best-effort, bounded, never in the way.

Each artifact a ``ToolResult`` carries (a ``file_diff`` from WriteFile, a ``tool_output`` from a
command printing more than 10 KB) is sent to the Workspace Service and its URI appended to the
result's ``artifactUris``. An upload that fails — service unreachable, rejected, too slow, unreadable
spool file — is reported through a callback and a logged warning; the tool result still goes to the
thread, with the truncated ``outputText`` the model sees anyway.

The runtime does not wait for the upload (:func:`queue_artifacts`): each artifact's content is handed
to an :class:`ArtifactQueue` — the session's upload queue, which spools it and sends it in the
background — and the step goes on. The result then carries no ``artifactUris``: the URI exists only
once the service has stored the artifact, which the step no longer waits for; the artifact is found by
its session, task and step IDs. :func:`upload_artifacts` is the waiting form, for a dispatch without a
queue.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import ValidationError

from contracts.enums import ArtifactType
from contracts.errors import CoworkError
from contracts.rest.workspaces import ArtifactUploadRequest, ArtifactUploadResponse
from contracts.tools import ToolArtifact
from contracts.validation import invalid_request

__all__ = [
    "MAX_UPLOAD_BYTES",
    "ArtifactQueue",
    "ArtifactUploader",
    "UploadOutcome",
    "queue_artifacts",
    "upload_artifacts",
]

logger = logging.getLogger(__name__)

#: At most this much of one artifact is read and sent (the tool runtime already stops spooled files
#: at 32 MiB; this bounds the host's memory whatever a router hands it).
MAX_UPLOAD_BYTES = 50 * 1024 * 1024


class ArtifactUploader(Protocol):
    """Where artifacts go: ``services.BackendClient`` is one."""

    async def upload_artifact(
        self, request: ArtifactUploadRequest, *, idempotency_key: str | None = None
    ) -> ArtifactUploadResponse: ...


class ArtifactQueue(Protocol):
    """Where artifacts wait to be uploaded: ``uploads.UploadQueue`` is one. ``put`` spools and returns
    the upload's ticket (it never raises; a failure is reported by the queue itself). The runtime's
    one description of that queue: the ``UploadArtifact`` tool, which waits for its ticket, uses it too."""

    async def put(
        self,
        *,
        workspace_id: str,
        session_id: str,
        task_id: str | None,
        step_id: str | None,
        artifact_type: ArtifactType,
        artifact_name: str,
        content_type: str,
        content: bytes,
        durable: bool = False,
    ) -> asyncio.Future[str]: ...


@dataclass
class UploadOutcome:
    uris: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Lines for the result's ``outputText`` (an artifact cut to the upload limit)."""
    failures: list[tuple[str, str]] = field(default_factory=list)
    """(artifact name, reason) of each upload that did not succeed."""


@dataclass(frozen=True, slots=True)
class UploadContext:
    workspace_id: str
    session_id: str
    task_id: str
    step_id: str


async def upload_artifacts(
    uploader: ArtifactUploader,
    artifacts: Sequence[ToolArtifact],
    context: UploadContext,
    *,
    max_bytes: int = MAX_UPLOAD_BYTES,
    timeout_s: float = 120.0,
    on_failed: Callable[[str, str], None] | None = None,
) -> UploadOutcome:
    """Upload each artifact in turn; never raises except for cancellation."""
    outcome = UploadOutcome()
    for artifact in artifacts:
        name = artifact.artifact_name
        reason = await _upload_one(uploader, artifact, context, max_bytes, timeout_s, outcome)
        if reason is None:
            continue
        outcome.failures.append((name, reason))
        logger.warning("artifact %s of step %s was not uploaded: %s", name, context.step_id, reason)
        if on_failed is not None:
            try:
                on_failed(name, reason)
            except Exception:
                logger.exception("the upload-failure callback failed for artifact %s", name)
    return outcome


async def _upload_one(
    uploader: ArtifactUploader,
    artifact: ToolArtifact,
    context: UploadContext,
    max_bytes: int,
    timeout_s: float,
    outcome: UploadOutcome,
) -> str | None:
    """Upload one artifact; the reason it failed, or None."""
    try:
        content, full_size = await asyncio.to_thread(_content, artifact, max_bytes)
    except OSError as exc:
        return f"its content could not be read ({exc.strerror or type(exc).__name__})"
    if len(content) < full_size:
        outcome.notes.append(
            f"[The {artifact.artifact_name} artifact was cut to its first {len(content):,} of"
            f" {full_size:,} bytes for upload.]"
        )
    encoded = await asyncio.to_thread(base64.b64encode, content)
    try:
        request = ArtifactUploadRequest(
            workspace_id=context.workspace_id,
            session_id=context.session_id,
            task_id=context.task_id,
            step_id=context.step_id,
            artifact_type=artifact.artifact_type,
            artifact_name=artifact.artifact_name,
            content_type=artifact.content_type,
            content_base64=encoded.decode("ascii"),
        )
    except ValidationError as exc:
        return f"it cannot be described to the Workspace Service: {invalid_request(exc).message}"
    try:
        # No idempotency key: the service derives the artifact's ID from the IDs, name and content,
        # so a retry of the same upload is already no duplicate.
        async with asyncio.timeout(timeout_s):
            response = await uploader.upload_artifact(request)
    except TimeoutError:
        return f"the Workspace Service did not answer within {timeout_s:g} seconds"
    except CoworkError as exc:
        return f"{exc.shape.code.value}: {exc.shape.message}"
    except Exception as exc:
        # The uploader is a boundary: whatever it raises must not cost the tool result.
        logger.exception("uploading artifact %s failed unexpectedly", artifact.artifact_name)
        return f"the upload failed unexpectedly ({type(exc).__name__})"
    outcome.uris.append(response.artifact_uri)
    return None


async def queue_artifacts(
    queue: ArtifactQueue,
    artifacts: Sequence[ToolArtifact],
    context: UploadContext,
    *,
    max_bytes: int = MAX_UPLOAD_BYTES,
    on_failed: Callable[[str, str], None] | None = None,
) -> UploadOutcome:
    """Hand each artifact's content to ``queue``; never raises except for cancellation. The outcome
    has notes (an artifact cut to the upload limit) and the artifacts whose content could not be read,
    but no URIs (module docstring)."""
    outcome = UploadOutcome()
    for artifact in artifacts:
        name = artifact.artifact_name
        try:
            if artifact.text is not None:
                content, full_size = _content(artifact, max_bytes)
            else:
                content, full_size = await asyncio.to_thread(_content, artifact, max_bytes)
        except OSError as exc:
            reason = f"its content could not be read ({exc.strerror or type(exc).__name__})"
            outcome.failures.append((name, reason))
            logger.warning("artifact %s of step %s was not uploaded: %s", name, context.step_id, reason)
            if on_failed is not None:
                on_failed(name, reason)
            continue
        if len(content) < full_size:
            outcome.notes.append(
                f"[The {name} artifact was cut to its first {len(content):,} of {full_size:,} bytes"
                " for upload.]"
            )
        await queue.put(
            workspace_id=context.workspace_id,
            session_id=context.session_id,
            task_id=context.task_id,
            step_id=context.step_id,
            artifact_type=artifact.artifact_type,
            artifact_name=name,
            content_type=artifact.content_type,
            content=content,
        )
    return outcome


def _content(artifact: ToolArtifact, max_bytes: int) -> tuple[bytes, int]:
    """(content, full size): at most ``max_bytes`` of the artifact's inline text or spooled file."""
    if artifact.text is not None:
        data = artifact.text.encode("utf-8", errors="surrogatepass")
        return data[:max_bytes], len(data)
    assert artifact.data_path is not None  # the model guarantees one of the two
    with open(artifact.data_path, "rb") as handle:
        data = handle.read(max_bytes)
        if len(data) < max_bytes:
            return data, len(data)
        handle.seek(0, 2)
        return data, handle.tell()
