"""The images of a session's thread, kept once each beside its checkpoint instead of inside it.

A prompt may carry up to three images of up to 5 MB of base64 each, and the thread keeps them with
the user message so the model sees them on every later turn. Inline, they would be rewritten with
every checkpoint and every step-journal record — 15 MB a step for the rest of the session. So the
checkpoint's messages hold only each image's SHA-256 and media type (``ImageContent.sha256``), and
the bytes are a file ``<checkpoints>/<sessionId>.images/<sha256>``, written once.

Crash safety (seed 002): an image file is written atomically and durably (fsync of the file and its
directory) before the message that references it is encoded, so no checkpoint or journal record on
disk ever names a file that is not there. The files go with the session's checkpoint
(:meth:`ImageFiles.delete`); images of messages compaction dropped stay until then.

Restoring reads each referenced file back into the message (checking its digest). One that is
missing or damaged is not fatal: the image becomes unavailable (``artifactName`` form, which the
model reads as a note that the image is no longer available) and the rest of the session resumes.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import logging
import os
import shutil
from pathlib import Path

from agent_runtime.agent_host.state.files import private_directory, replace_file
from agent_runtime.agent_host.state.location import safe_session_id
from contracts.images import MAX_IMAGE_BYTES, ImageContent
from contracts.messages import ConversationMessage

__all__ = ["IMAGES_SUFFIX", "ImageFiles"]

logger = logging.getLogger(__name__)

IMAGES_SUFFIX = ".images"
"""``<sessionId>.images``: the directory of a session's image files, beside its checkpoint."""


class ImageFiles:
    """Image files of the sessions whose checkpoints are in ``directory``. Called under the
    checkpoint store's lock."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        # Per session: digests whose files are known to be on disk, durably (written by this process
        # or found there — a file under its final name was renamed there only after its fsync).
        self._durable: dict[str, set[str]] = {}

    def directory_for(self, session_id: str) -> Path:
        return self.directory / f"{safe_session_id(session_id)}{IMAGES_SUFFIX}"

    def referenced(self, session_id: str, message: ConversationMessage) -> ConversationMessage:
        """``message`` with each image that carries its bytes replaced by a reference to its file,
        written first if it is not on disk yet. Raises ``OSError`` when the file cannot be written."""
        if not message.images or all(image.data is None for image in message.images):
            return message
        return message.model_copy(
            update={"images": [self._reference(session_id, image) for image in message.images]}
        )

    def resolved(self, session_id: str, messages: list[ConversationMessage]) -> list[ConversationMessage]:
        """``messages`` with each referenced image's bytes read back from its file; an image whose
        file is missing or damaged becomes unavailable (logged), the rest are restored."""
        return [self._resolve_message(session_id, message) for message in messages]

    def delete(self, session_id: str) -> None:
        """Remove the session's image files; absence is fine."""
        self._durable.pop(session_id, None)
        path = self.directory_for(session_id)
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(path)

    def _reference(self, session_id: str, image: ImageContent) -> ImageContent:
        if image.data is None:
            return image
        data = image.raw_bytes()
        digest = hashlib.sha256(data).hexdigest()
        known = self._durable.setdefault(session_id, set())
        if digest not in known:
            folder = self.directory_for(session_id)
            path = folder / digest
            if not path.is_file():
                private_directory(self.directory)  # owner-only, as the checkpoint store makes it
                private_directory(folder)
                replace_file(path, data)
            known.add(digest)
        return ImageContent(media_type=image.media_type, sha256=digest, name=image.name)

    def _resolve_message(self, session_id: str, message: ConversationMessage) -> ConversationMessage:
        if not message.images or all(image.sha256 is None for image in message.images):
            return message
        return message.model_copy(
            update={"images": [self._resolve(session_id, image) for image in message.images]}
        )

    def _resolve(self, session_id: str, image: ImageContent) -> ImageContent:
        if image.sha256 is None:
            return image
        path = self.directory_for(session_id) / image.sha256
        problem = None
        try:
            with path.open("rb") as file:
                data = file.read(MAX_IMAGE_BYTES + 1)
        except FileNotFoundError:
            problem = "its file is missing"
        except OSError as exc:
            problem = f"its file could not be read ({exc.strerror or type(exc).__name__})"
        else:
            if hashlib.sha256(data).hexdigest() != image.sha256:
                problem = "its file does not hold the image it was written with"
        if problem is not None:
            logger.warning(
                "session %s: an image of the thread is no longer available: %s",
                session_id,
                problem,
                extra={"sessionId": session_id, "path": os.fspath(path)},
            )
            return image.stored()
        self._durable.setdefault(session_id, set()).add(image.sha256)
        return ImageContent(
            media_type=image.media_type, data=base64.b64encode(data).decode("ascii"), name=image.name
        )
