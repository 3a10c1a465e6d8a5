"""Artifacts (seed 003 §7.2): output kept whole for the host to upload, spooled to files, never to RAM.

A ``Spool`` is one router's directory of artifact files. The host uploads an artifact from its
``dataPath`` and then calls ``release_artifacts``; ``close`` removes the directory with whatever is
left. A ``SpoolFile`` writes one artifact with a hard size cap: past it, writing stops and the file
ends with a line saying so.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

from contracts.enums import ArtifactType
from contracts.tools import ToolArtifact

__all__ = [
    "ARTIFACT_THRESHOLD_BYTES",
    "MAX_ARTIFACT_BYTES",
    "Spool",
    "SpoolFile",
    "inline_or_spooled",
]

#: Output beyond this many bytes is packaged as an artifact (seed 003 §7.2: "> 10KB").
ARTIFACT_THRESHOLD_BYTES = 10 * 1024
#: The largest artifact the Workspace Service accepts; a spooled file stops growing here.
MAX_ARTIFACT_BYTES = 32 * 1024 * 1024


class Spool:
    """A private directory for one router's artifact files (created on first use, mode 0700)."""

    def __init__(self, directory: Path | None = None) -> None:
        self._requested = directory
        self._directory: Path | None = None
        self._owned = directory is None
        self._files: set[str] = set()
        self._lock = threading.Lock()  # files are created from command-output threads too

    @property
    def directory(self) -> Path:
        with self._lock:
            if self._directory is None:
                if self._requested is None:
                    self._directory = Path(tempfile.mkdtemp(prefix="cowork-tool-artifacts-"))
                else:
                    self._requested.mkdir(mode=0o700, parents=True, exist_ok=True)
                    self._directory = self._requested
            return self._directory

    def create(self, stem: str, suffix: str) -> tuple[Path, int]:
        """A new empty file in the spool, opened for writing: (path, file descriptor)."""
        safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in stem)[:40] or "artifact"
        while True:
            path = self.directory / f"{safe}-{secrets.token_hex(6)}{suffix}"
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
            except FileExistsError:
                continue
            with self._lock:
                self._files.add(str(path))
            return path, fd

    def write_text(self, stem: str, suffix: str, text: str) -> Path:
        path, fd = self.create(stem, suffix)
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8", errors="surrogatepass"))
        return path

    def owns(self, path: str) -> bool:
        with self._lock:
            return path in self._files

    def release(self, paths: Iterable[str]) -> None:
        """Delete spooled files; paths this spool did not create are ignored, never deleted."""
        for path in paths:
            with self._lock:
                if path not in self._files:
                    continue
                self._files.discard(path)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)

    def close(self) -> None:
        with self._lock:
            directory, self._directory = self._directory, None
            files, self._files = self._files, set()
        if directory is None:
            return
        if self._owned:
            shutil.rmtree(directory, ignore_errors=True)
            return
        # A directory we were handed may hold other things: remove only what we put there.
        for path in files:
            with contextlib.suppress(OSError):
                os.unlink(path)


class SpoolFile:
    """One artifact file written in chunks, stopped at ``cap`` bytes with a closing line saying so."""

    def __init__(self, spool: Spool, stem: str, suffix: str, *, cap: int = MAX_ARTIFACT_BYTES) -> None:
        self.path, self._fd = spool.create(stem, suffix)
        self._spool = spool
        self._cap = cap
        self.written = 0
        self.cut = False
        self._closed = False

    def write(self, data: bytes) -> None:
        if self.cut or not data:
            return
        room = self._cap - self.written
        if len(data) > room:
            data, self.cut = data[:room], True
        view = memoryview(data)
        while view:
            count = os.write(self._fd, view)
            view = view[count:]
        self.written += len(data)

    def finish(self, total: int) -> None:
        """Close the file; if it was cut, end it with a line giving the size it would have had."""
        if self._closed:
            return
        try:
            if self.cut:
                note = f"\n[... artifact cut at {self._cap} bytes; the output was {total} bytes ...]\n"
                os.write(self._fd, note.encode())
        finally:
            self._closed = True
            os.close(self._fd)

    def discard(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self._fd)
        self._spool.release([str(self.path)])

    def artifact(self, artifact_type: ArtifactType, name: str, content_type: str) -> ToolArtifact:
        return ToolArtifact(
            artifact_type=artifact_type,
            artifact_name=name,
            content_type=content_type,
            data_path=str(self.path),
            size_bytes=os.path.getsize(self.path),
        )


def inline_or_spooled(
    spool: Spool, artifact_type: ArtifactType, name: str, content_type: str, text: str
) -> ToolArtifact:
    """An artifact holding ``text``: inline up to the 10 KB threshold, in a spooled file beyond it."""
    data = text.encode("utf-8", errors="surrogatepass")
    if len(data) <= ARTIFACT_THRESHOLD_BYTES:
        return ToolArtifact(
            artifact_type=artifact_type,
            artifact_name=name,
            content_type=content_type,
            text=text,
            size_bytes=len(data),
        )
    path = spool.write_text(name, "", text)
    return ToolArtifact(
        artifact_type=artifact_type,
        artifact_name=name,
        content_type=content_type,
        data_path=str(path),
        size_bytes=len(data),
    )
