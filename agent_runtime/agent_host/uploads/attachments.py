"""The images of a prompt, stored as ``attachment`` artifacts of the session.

The thread and its checkpoint keep each image's bytes (the model is sent them at every step); the
uploaded ``session_history`` names them instead (``ConversationThread.to_session_history``), so a
history stays a small JSON document however many screenshots the conversation holds. The images are
queued when the task starts, before the history that names them, and the queue sends in order.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from contracts.enums import ArtifactType
from contracts.images import ImageContent, attachment_name

from .queue import UploadQueue

__all__ = ["store_attachments"]

logger = logging.getLogger(__name__)


async def store_attachments(
    uploads: UploadQueue | None,
    images: Sequence[ImageContent],
    *,
    workspace_id: str,
    session_id: str,
    task_id: str,
) -> None:
    """Queue each image carrying its bytes for upload (durably: the history names it). Returns once
    they are spooled, not sent; a refusal (the policy's ``Workspace.Upload``) is reported by the queue
    and the reopened conversation shows the image as unavailable."""
    if uploads is None:
        return
    for image in images:
        if image.data is None:
            continue
        data = image.raw_bytes()
        await uploads.put(
            workspace_id=workspace_id,
            session_id=session_id,
            task_id=task_id,
            step_id=None,
            artifact_type=ArtifactType.ATTACHMENT,
            artifact_name=attachment_name(data, image.media_type),
            content_type=image.media_type.value,
            content=data,
            durable=True,
        )
