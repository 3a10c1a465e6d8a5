"""Artifact content in a dictionary."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime

from backend.workspace.repository import StoredObject

__all__ = ["MemoryContent", "MemoryContentStore"]


class MemoryContent:
    def __init__(self, data: bytes) -> None:
        self._data = data
        self.size = len(data)

    def chunks(self) -> Iterator[bytes]:
        yield self._data

    def close(self) -> None:
        return None


class MemoryContentStore:
    def __init__(self) -> None:
        self._objects: dict[str, tuple[bytes, datetime]] = {}
        self._lock = threading.Lock()

    def put(self, key: str, data: bytes, content_type: str) -> None:
        with self._lock:
            self._objects[key] = (bytes(data), datetime.now(UTC))

    def open(self, key: str) -> MemoryContent | None:
        found = self._objects.get(key)
        return None if found is None else MemoryContent(found[0])

    def delete(self, key: str) -> None:
        with self._lock:
            self._objects.pop(key, None)

    def delete_prefix(self, prefix: str) -> None:
        with self._lock:
            for key in [k for k in self._objects if k.startswith(prefix)]:
                del self._objects[key]

    def list(self, prefix: str = "") -> Iterator[StoredObject]:
        with self._lock:
            items = [(k, v[1], len(v[0])) for k, v in self._objects.items() if k.startswith(prefix)]
        for key, modified, size in items:
            yield StoredObject(key, modified, size)
