"""What the user attaches to a message, before it is sent. Qt-free.

* **Files** are referenced by path in the prompt ("Attached files:" and one absolute path a line): the
  agent reads them with its own tools, so the policy and ReadFile's checks decide as for any other
  path. A file outside the conversation's project folder is marked, and the composer says that the
  agent may not be allowed to read it.
* **Images** (PNG, JPEG, GIF, WebP, by their bytes, within ``contracts.images.MAX_IMAGE_BYTES``) are
  sent as image content with the prompt (``StartTask.images``), at most
  ``contracts.images.MAX_IMAGES_PER_MESSAGE`` of them, to models that accept images.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from contracts.images import (
    MAX_IMAGE_BYTES,
    MAX_IMAGES_PER_MESSAGE,
    MAX_PROMPT_CHARS,
    ImageContent,
    ImageRejected,
    attachment_name,
    media_type_of,
)
from desktop.i18n import translate

__all__ = [
    "AttachedFile",
    "AttachedImage",
    "AttachmentError",
    "Attachments",
    "ShownImage",
    "prompt_problem",
    "prompt_with_files",
]


class AttachmentError(ValueError):
    """Something the user tried to attach that cannot be: the message says what and why."""


@dataclass(frozen=True, slots=True)
class AttachedFile:
    path: Path
    outside: bool
    """Outside the conversation's project folder (or a general chat, which has none): the policy may
    not let the agent read it."""

    @property
    def name(self) -> str:
        return self.path.name or str(self.path)


@dataclass(frozen=True, slots=True)
class AttachedImage:
    image: ImageContent
    data: bytes

    @property
    def name(self) -> str:
        return self.image.name or translate("Attachments", "Pasted image")


@dataclass(frozen=True, slots=True)
class ShownImage:
    """An image of a sent message, as the conversation shows it: its bytes when the desktop has them
    (it sent them, or fetched the ``attachment`` artifact a history names), else only its name."""

    name: str | None
    media_type: str
    data: bytes | None = None
    artifact_name: str | None = None

    @classmethod
    def of_content(cls, image: ImageContent) -> ShownImage:
        if image.data is None:
            return cls(image.name, image.media_type.value, None, image.artifact_name)
        data = image.raw_bytes()
        # Named as the runtime stores it, so the history that names it finds these bytes.
        return cls(image.name, image.media_type.value, data, attachment_name(data, image.media_type))

    @classmethod
    def from_history(cls, wire: object) -> ShownImage | None:
        """An image of a history message (its wire form); None for something that is not one."""
        if not isinstance(wire, dict) or not isinstance(wire.get("mediaType"), str):
            return None
        name, artifact = wire.get("name"), wire.get("artifactName")
        return cls(
            name if isinstance(name, str) else None,
            wire["mediaType"],
            None,
            artifact if isinstance(artifact, str) else None,
        )


def prompt_problem(text: str) -> str | None:
    """Why ``text`` cannot be sent as a prompt (too long for the runtime), or None."""
    if len(text) > MAX_PROMPT_CHARS:
        return translate(
            "Attachments", "Your message is {count:,} characters; the limit is {limit:,}."
        ).format(count=len(text), limit=MAX_PROMPT_CHARS)
    return None


def prompt_with_files(text: str, paths: Sequence[Path]) -> str:
    """The prompt as sent: the user's text, then the attached files' paths for the agent to read."""
    if not paths:
        return text
    listing = "\n".join(f"- {path}" for path in paths)
    return f"{text.rstrip()}\n\nAttached files:\n{listing}"


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


@dataclass(slots=True)
class Attachments:
    """The files and images attached to the message being written, in the order attached."""

    folder: Path | None = None
    """The conversation's project folder; None for a general chat."""
    files: list[AttachedFile] = field(default_factory=list)
    images: list[AttachedImage] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.files or self.images)

    @property
    def outside(self) -> list[AttachedFile]:
        """The attached files outside the project folder."""
        return [file for file in self.files if file.outside]

    def add_path(self, path: Path) -> AttachedFile | AttachedImage:
        """Attach the file at ``path``: an image by its bytes, any other file by its path. Raises
        :class:`AttachmentError` for a folder, a missing file, or an image that cannot be sent."""
        resolved = Path(os.path.realpath(path))
        if resolved.is_dir():
            raise AttachmentError(
                translate("Attachments", "{name} is a folder; attach files one by one.").format(
                    name=path.name
                )
            )
        try:
            with resolved.open("rb") as stream:
                head = stream.read(16)
        except OSError as exc:
            raise AttachmentError(
                translate("Attachments", "{name} cannot be read: {reason}").format(
                    name=path.name, reason=exc.strerror or exc
                )
            ) from None
        if media_type_of(head) is not None:
            size = resolved.stat().st_size
            if size > MAX_IMAGE_BYTES:  # refused before the whole file is read
                raise AttachmentError(_too_large(path.name, size))
            return self.add_image(resolved.read_bytes(), name=path.name)
        for known in self.files:
            if known.path == resolved:
                return known
        attached = AttachedFile(resolved, outside=self._outside(resolved))
        self.files.append(attached)
        return attached

    def set_folder(self, folder: Path | None) -> None:
        """Another conversation is shown: the attached files are checked against its folder."""
        self.folder = folder
        self.files = [AttachedFile(file.path, outside=self._outside(file.path)) for file in self.files]

    def _outside(self, resolved: Path) -> bool:
        if self.folder is None:
            return True
        return not _inside(resolved, Path(os.path.realpath(self.folder)))

    def add_image(self, data: bytes, *, name: str | None = None) -> AttachedImage:
        """Attach an image (a pasted screenshot has no name). Raises :class:`AttachmentError`."""
        if len(self.images) >= MAX_IMAGES_PER_MESSAGE:
            raise AttachmentError(
                translate("Attachments", "A message can carry at most {count} images.").format(
                    count=MAX_IMAGES_PER_MESSAGE
                )
            )
        try:
            image = ImageContent.from_bytes(data, name=name)
        except ImageRejected as exc:
            raise AttachmentError(_rejection(exc, name)) from None
        attached = AttachedImage(image, data)
        self.images.append(attached)
        return attached

    def remove(self, attached: AttachedFile | AttachedImage) -> None:
        if isinstance(attached, AttachedFile):
            self.files = [file for file in self.files if file is not attached]
        else:
            self.images = [image for image in self.images if image is not attached]

    def clear(self) -> None:
        self.files = []
        self.images = []


def _too_large(name: str, size: int) -> str:
    return translate("Attachments", "{name} is {size:.1f} MB; images are limited to {limit:.2f} MB.").format(
        name=name, size=size / 2**20, limit=MAX_IMAGE_BYTES / 2**20
    )


def _rejection(exc: ImageRejected, name: str | None) -> str:
    shown = name or translate("Attachments", "The pasted image")
    if "limit" in exc.shape.details:
        return _too_large(shown, int(exc.shape.details["size"]))
    return translate("Attachments", "{name} is not a PNG, JPEG, GIF or WebP image.").format(name=shown)
