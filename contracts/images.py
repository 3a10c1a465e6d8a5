"""Images in a user's message, and the limits of what a prompt may carry.

An image travels as its media type and its bytes in base64 (``StartTask.images``), is kept with the
user message in the thread, and is sent to the model as image content in either dialect. Where it is
stored, only a name for its bytes is kept with the message, so the document stays small: in an
uploaded history the bytes are an ``attachment`` artifact of the session (``artifactName``); in the
runtime's checkpoint they are a file beside it named by their SHA-256 (``sha256``).

The limits are set by the wire and by the models:

* :data:`MAX_IMAGE_BYTES` — Anthropic's Messages API refuses an image over 5 MB *once encoded*;
  3.75 MiB of bytes is 5 MiB of base64;
* :data:`MAX_IMAGES_PER_MESSAGE` — with the prompt, the images fit one 16 MiB JSON-RPC frame
  (``contracts.ipc.framing.DEFAULT_MAX_FRAME_BYTES``): 3 × 5 MiB + :data:`MAX_PROMPT_CHARS` escaped;
* :data:`MAX_PROMPT_CHARS` — the text of one prompt, about 25,000 tokens: the desktop says so before
  sending, ``StartTask`` refuses a longer one.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from enum import StrEnum

from pydantic import Field, model_validator

from contracts._base import WireModel
from contracts.errors import CoworkError, ErrorCode
from contracts.validation import FieldProblem

__all__ = [
    "IMAGE_TOKEN_ESTIMATE",
    "MAX_IMAGES_PER_MESSAGE",
    "MAX_IMAGE_BYTES",
    "MAX_PROMPT_CHARS",
    "ImageContent",
    "ImageMediaType",
    "ImageRejected",
    "attachment_name",
    "check_image_bytes",
    "media_type_of",
]

MAX_PROMPT_CHARS = 100_000
MAX_IMAGE_BYTES = 3 * 1024 * 1024 + 768 * 1024
MAX_IMAGES_PER_MESSAGE = 3

IMAGE_TOKEN_ESTIMATE = 1_600
"""Tokens counted for one image, whatever its size. Anthropic documents ``width × height / 750`` and
scales an image down until its long edge is at most 1568 px (about 1.15 megapixels), so no image it
reads costs much more than 1,600 tokens; OpenAI's high-detail figure for a 2048 × 2048 image is 1,105.
Counting the largest case keeps the context selection and the budget on the safe side."""


class ImageMediaType(StrEnum):
    PNG = "image/png"
    JPEG = "image/jpeg"
    GIF = "image/gif"
    WEBP = "image/webp"


def media_type_of(head: bytes) -> ImageMediaType | None:
    """The format the first bytes of a file say it is, or None for anything else. Read from the bytes,
    not the file name: a model refuses an image whose declared type does not match its content."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return ImageMediaType.PNG
    if head.startswith(b"\xff\xd8\xff"):
        return ImageMediaType.JPEG
    if head.startswith((b"GIF87a", b"GIF89a")):
        return ImageMediaType.GIF
    if len(head) >= 12 and head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return ImageMediaType.WEBP
    return None


def attachment_name(data: bytes, media_type: ImageMediaType) -> str:
    """The name of the ``attachment`` artifact that stores an image's bytes."""
    return _attachment_name(hashlib.sha256(data).hexdigest(), media_type)


def _attachment_name(digest: str, media_type: ImageMediaType) -> str:
    extension = media_type.value.split("/", 1)[1].replace("jpeg", "jpg")
    return f"image-{digest}.{extension}"


class ImageRejected(CoworkError):
    """An image that cannot be sent: ``FILE_TOO_LARGE`` over the size limit, ``INVALID_REQUEST`` for
    anything that is not a PNG, JPEG, GIF or WebP image."""


def _size(count: int) -> str:
    return f"{count / (1024 * 1024):.2f}".rstrip("0").rstrip(".") + " MB"


def check_image_bytes(data: bytes, *, name: str = "The image") -> ImageMediaType:
    """The media type of ``data``; raises :class:`ImageRejected` saying what is wrong with it."""
    if len(data) > MAX_IMAGE_BYTES:
        size, limit = _size(len(data)), _size(MAX_IMAGE_BYTES)
        if size == limit:  # just over the limit: rounded, both would read the same
            size, limit = f"{len(data):,} bytes", f"{MAX_IMAGE_BYTES:,} bytes"
        raise ImageRejected(
            ErrorCode.FILE_TOO_LARGE,
            f"{name} is {size}; images are limited to {limit}.",
            details={"size": len(data), "limit": MAX_IMAGE_BYTES},
        )
    found = media_type_of(data[:16])
    if found is None:
        raise ImageRejected(
            ErrorCode.INVALID_REQUEST,
            f"{name} is not a PNG, JPEG, GIF or WebP image.",
            details={"accepted": [kind.value for kind in ImageMediaType]},
        )
    return found


class ImageContent(WireModel):
    """One image of a user message: ``data`` (base64) on the live wire and in the thread,
    ``artifactName`` instead in an uploaded history, ``sha256`` instead in a checkpoint."""

    media_type: ImageMediaType
    data: str | None = Field(default=None, min_length=1)
    artifact_name: str | None = Field(default=None, min_length=1, max_length=255)
    """In an uploaded history: the name of the session's ``attachment`` artifact holding the bytes
    (:func:`attachment_name`: the bytes' SHA-256, so one image attached twice is stored once)."""
    sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    """In a checkpoint: the SHA-256 of the bytes, which the runtime keeps in a file of that name
    beside the checkpoint and reads back when it restores the session."""
    name: str | None = Field(default=None, min_length=1, max_length=255)
    """The file name the user attached, shown beside the thumbnail."""

    @model_validator(mode="after")
    def _bytes_are_an_image(self) -> ImageContent:
        if sum(form is not None for form in (self.data, self.artifact_name, self.sha256)) != 1:
            raise ValueError("an image carries one of its data, its artifactName or its sha256")
        if self.data is None:
            return self
        if len(self.data) > (MAX_IMAGE_BYTES + 2) // 3 * 4:
            raise FieldProblem(
                "data", f"holds more than {_size(MAX_IMAGE_BYTES)}, the limit for one image (FILE_TOO_LARGE)"
            )
        try:
            raw = base64.b64decode(self.data, validate=True)
        except (binascii.Error, ValueError):
            raise FieldProblem("data", "is not valid base64") from None
        found = media_type_of(raw[:16])
        if found is None:
            raise FieldProblem("data", "is not a PNG, JPEG, GIF or WebP image")
        if found is not self.media_type:
            raise FieldProblem("data", f"is {found.value} data, not {self.media_type.value}")
        return self

    def stored(self) -> ImageContent:
        """This image as an uploaded history keeps it: its artifact's name instead of its bytes."""
        if self.sha256 is not None:
            digest = self.sha256
        elif self.data is not None:
            digest = hashlib.sha256(self.raw_bytes()).hexdigest()
        else:
            return self
        name = _attachment_name(digest, self.media_type)
        return ImageContent(media_type=self.media_type, artifact_name=name, name=self.name)

    def raw_bytes(self) -> bytes:
        """The image's bytes; only for an image that carries its data."""
        if self.data is None:
            raise ValueError("this image is stored elsewhere; its bytes are not here")
        return base64.b64decode(self.data)

    @classmethod
    def from_bytes(cls, data: bytes, *, name: str | None = None) -> ImageContent:
        """An image of ``data``, its media type read from the bytes; raises :class:`ImageRejected`."""
        media_type = check_image_bytes(data, name=name or "The image")
        return cls(media_type=media_type, data=base64.b64encode(data).decode("ascii"), name=name)
