"""Artifact content as files under the data directory, written atomically and durably.

A key ``{workspaceId}/{artifactId}/{sha256}`` is the file ``<root>/{workspaceId}/{artifactId}.{sha256}``:
one directory per workspace, so deleting a workspace is one ``rmtree`` and a new artifact creates no
directory. Writes go to a temporary file in the same directory, are fsynced, then renamed over the
target (and the directory fsynced), so a reader or a crash sees the whole file or none of it. A crash
can leave a temporary file behind: the server removes every one when it starts
(:meth:`FileContentStore.remove_interrupted_writes`), and :meth:`FileContentStore.list` reports them as
``{workspaceId}/.tmp-…`` so the orphan sweep removes old ones too. Keys are made by the service but are
still checked against exactly these shapes: nothing can name a path outside the root.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from backend.common.errors import StorageError
from backend.common.files import write_atomically
from backend.workspace.repository import StoredObject

__all__ = ["FileContent", "FileContentStore"]

logger = logging.getLogger(__name__)

_ID = r"[A-Za-z0-9_-]{1,128}"
_KEY = re.compile(rf"({_ID})/({_ID})/([0-9a-f]{{64}})")
_TEMPORARY = re.compile(rf"({_ID})/(\.tmp-[A-Za-z0-9_]+)")
_PREFIX = re.compile(rf"{_ID}/")
_FILE = re.compile(rf"({_ID})\.([0-9a-f]{{64}})")
_CHUNK = 256 * 1024


class FileContent:
    def __init__(self, handle: BinaryIO) -> None:
        self._handle = handle
        self.size = os.fstat(handle.fileno()).st_size

    def chunks(self) -> Iterator[bytes]:
        while chunk := self._handle.read(_CHUNK):
            yield chunk

    def close(self) -> None:
        self._handle.close()


class FileContentStore:
    def __init__(self, root: Path) -> None:
        self._root = root
        root.mkdir(parents=True, exist_ok=True, mode=0o700)

    def _path(self, key: str) -> Path:
        if match := _KEY.fullmatch(key):
            workspace, artifact, digest = match.groups()
            return self._root / workspace / f"{artifact}.{digest}"
        if match := _TEMPORARY.fullmatch(key):
            return self._root / match[1] / match[2]
        raise StorageError("invalid content key")

    def put(self, key: str, data: bytes, content_type: str) -> None:
        target = self._path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(target, data, temp_prefix=".tmp-")
        except OSError as exc:
            logger.exception("writing artifact content failed")
            raise StorageError("the artifact content could not be written") from exc

    def open(self, key: str) -> FileContent | None:
        try:
            return FileContent(self._path(key).open("rb"))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError("the artifact content could not be read") from exc

    def delete(self, key: str) -> None:
        try:
            self._path(key).unlink(missing_ok=True)
        except OSError:
            # On Windows a file being streamed to a reader cannot be deleted yet; the orphan sweep
            # removes it later.
            logger.warning("could not delete artifact content %s now; the sweep will", key, exc_info=True)

    def delete_prefix(self, prefix: str) -> None:
        if not _PREFIX.fullmatch(prefix):
            raise StorageError("invalid content prefix")
        shutil.rmtree(self._root / prefix, ignore_errors=True)

    def remove_interrupted_writes(self) -> int:
        """Remove the temporary files of writes that never finished; how many were removed.

        Only for a server starting on this directory: until it serves, no write of its own is under
        way, and one data directory has one server, so every temporary file is an interrupted one.
        (Maintenance commands, which may run beside a server, leave them to the orphan sweep.)
        """
        removed = 0
        for directory in (entry for entry in self._root.iterdir() if entry.is_dir()):
            for path in directory.glob(".tmp-*"):
                try:
                    path.unlink()
                except FileNotFoundError:
                    continue
                except OSError:
                    logger.warning("could not remove %s; the orphan sweep will", path, exc_info=True)
                    continue
                removed += 1
        return removed

    def list(self, prefix: str = "") -> Iterator[StoredObject]:
        if prefix and not _PREFIX.fullmatch(prefix):
            raise StorageError("invalid content prefix")
        base = self._root / prefix if prefix else self._root
        directories = [base] if prefix else [entry for entry in base.iterdir() if entry.is_dir()]
        for directory in directories:
            try:
                entries = list(os.scandir(directory))
            except FileNotFoundError:
                continue
            for entry in entries:
                if match := _FILE.fullmatch(entry.name):
                    key = f"{directory.name}/{match[1]}/{match[2]}"
                elif entry.name.startswith(".tmp-"):
                    key = f"{directory.name}/{entry.name}"
                else:
                    continue
                try:
                    stat = entry.stat()
                except FileNotFoundError:
                    continue
                yield StoredObject(key, datetime.fromtimestamp(stat.st_mtime, UTC), stat.st_size)
