"""The upload spool: artifacts and histories waiting for the Workspace Service, one file each.

``<runtime data dir>/uploads/<time>-<pid>-<n>.upload`` (0600 in a 0700 directory): a first line that
says what the file is, a line of JSON with the upload's description — its IDs, type, name, content
type, size, the ``Idempotency-Key`` it is sent with, and the backend's URL (``origin``: an entry is
only ever sent where it was meant to go) — then the content's bytes as they are. Names sort in the
order the entries were made.

An entry is written all or nothing (temp file, rename: :func:`~agent_runtime.agent_host.state.files.
replace_file`), so a process killed at any instant leaves it whole or absent; ``durable`` adds the
fsyncs that make it survive a power cut as well, and :meth:`UploadSpool.make_durable` adds them later.
A file that does not read back as an entry (cut short by a power cut, or not ours) is removed and
logged.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_runtime.agent_host.state.files import private_directory, replace_file, sync_file
from contracts.enums import ArtifactType

__all__ = ["ENTRY_SUFFIX", "SpooledUpload", "UploadSpool"]

logger = logging.getLogger(__name__)

ENTRY_SUFFIX = ".upload"
_MAGIC = b"COWORK-UPLOAD 1\n"
_MAX_HEADER_BYTES = 64 * 1024
_STALE_TEMP_S = 3600.0
"""A temp file this old was left by a writer that died; younger ones may be another process's."""


@dataclass(frozen=True, slots=True)
class SpooledUpload:
    """One upload: where it goes, what it is, and (read back) its content."""

    origin: str
    idempotency_key: str
    workspace_id: str
    session_id: str
    task_id: str | None
    step_id: str | None
    artifact_type: ArtifactType
    artifact_name: str
    content_type: str
    content: bytes

    def header(self) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "idempotencyKey": self.idempotency_key,
            "workspaceId": self.workspace_id,
            "sessionId": self.session_id,
            "taskId": self.task_id,
            "stepId": self.step_id,
            "artifactType": self.artifact_type.value,
            "artifactName": self.artifact_name,
            "contentType": self.content_type,
            "size": len(self.content),
        }

    def encode(self) -> bytes:
        header = json.dumps(self.header(), ensure_ascii=False, separators=(",", ":")).encode()
        return b"".join((_MAGIC, header, b"\n", self.content))

    @classmethod
    def decode(cls, data: bytes) -> SpooledUpload:
        """The entry in ``data``; ``ValueError`` when it is not a whole entry."""
        if not data.startswith(_MAGIC):
            raise ValueError("not an upload spool entry")
        end = data.find(b"\n", len(_MAGIC), len(_MAGIC) + _MAX_HEADER_BYTES)
        if end < 0:
            raise ValueError("the entry's description is cut short")
        header = json.loads(data[len(_MAGIC) : end])
        content = data[end + 1 :]
        if not isinstance(header, dict) or header.get("size") != len(content):
            raise ValueError("the entry's content is cut short")
        try:
            return cls(
                origin=_text(header, "origin"),
                idempotency_key=_text(header, "idempotencyKey"),
                workspace_id=_text(header, "workspaceId"),
                session_id=_text(header, "sessionId"),
                task_id=_optional_text(header, "taskId"),
                step_id=_optional_text(header, "stepId"),
                artifact_type=ArtifactType(_text(header, "artifactType")),
                artifact_name=_text(header, "artifactName"),
                content_type=_text(header, "contentType"),
                content=content,
            )
        except (TypeError, KeyError, ValueError) as exc:
            raise ValueError(f"the entry's description is not valid: {exc}") from None


def _text(header: dict[str, Any], key: str) -> str:
    value = header[key]
    if not isinstance(value, str) or not value:
        raise TypeError(f"{key} must be a non-empty string")
    return value


def _optional_text(header: dict[str, Any], key: str) -> str | None:
    value = header.get(key)
    return None if value is None else _text(header, key)


class UploadSpool:
    """The entries of one runtime data directory; safe to share between processes (each entry has
    a name nobody else picks, and readers skip what is being written)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._numbers = itertools.count()

    def put(self, upload: SpooledUpload, *, durable: bool) -> Path:
        """Write ``upload`` as a new entry; its path. Raises ``OSError`` (disk full, no directory)."""
        private_directory(self.directory)
        name = f"{time.time_ns():020d}-{os.getpid()}-{next(self._numbers):06d}{ENTRY_SUFFIX}"
        path = self.directory / name
        replace_file(path, upload.encode(), durable=durable)
        return path

    def read(self, path: Path) -> SpooledUpload | None:
        """The entry at ``path``; None when it is gone (sent by another process) or was not a whole
        entry (then it is removed: nothing could ever send it)."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            return SpooledUpload.decode(data)
        except ValueError as exc:
            logger.error("removing the unreadable upload spool entry %s: %s", path.name, exc)
            self.remove(path)
            return None

    def make_durable(self, path: Path) -> None:
        """fsync an entry written without (it must wait: the Workspace Service cannot be reached)."""
        with contextlib.suppress(FileNotFoundError):
            sync_file(path)

    def remove(self, path: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()

    def entries(self) -> list[Path]:
        """Every entry here, oldest first; temp files a dead writer left behind are removed."""
        try:
            scanned = list(os.scandir(self.directory))
        except (FileNotFoundError, NotADirectoryError):
            return []
        found: list[Path] = []
        now = time.time()
        for entry in scanned:
            if entry.name.endswith(ENTRY_SUFFIX) and not entry.name.startswith("."):
                found.append(Path(entry.path))
            elif entry.name.startswith("."):
                with contextlib.suppress(OSError):
                    if now - entry.stat(follow_symlinks=False).st_mtime > _STALE_TEMP_S:
                        os.unlink(entry.path)
        found.sort(key=lambda path: path.name)
        return found
