"""What the updater remembers between runs: ``updater/state.json`` and the last trusted manifest.

* ``installId`` — random, created once; the stable per-install rollout bucket is derived from it.
* ``lastManifestVersion`` — the highest manifest version ever trusted; a lower one is a rollback.
* ``badVersions`` — versions that failed their health check or crash-looped, with the reason; they
  are never installed or started again.

Every change is a read-modify-write under a lock between processes, written atomically.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from desktop.updater.layout import InstallLayout, atomic_write, file_lock, read_json

__all__ = ["UpdaterState", "state_lock"]

_guard = threading.Lock()
_locks: dict[Path, tuple[threading.RLock, list[int]]] = {}


@contextlib.contextmanager
def state_lock(layout: InstallLayout) -> Iterator[None]:
    """Held while the pointer, ``state.json`` or ``runs.json`` is read and rewritten.

    Re-entrant within a thread (a rollback marks a version bad and switches the pointer under one
    hold); between processes it is an OS file lock, taken by the outermost hold only.
    """
    with _guard:
        lock, depth = _locks.setdefault(layout.state_lock, (threading.RLock(), [0]))
    with lock:
        depth[0] += 1
        try:
            if depth[0] > 1:
                yield
            else:
                layout.create()
                with file_lock(layout.state_lock):
                    yield
        finally:
            depth[0] -= 1


class UpdaterState:
    def __init__(self, layout: InstallLayout) -> None:
        self.layout = layout

    # ------------------------------------------------------------------ reading

    def _load(self) -> dict[str, Any]:
        data = read_json(self.layout.state_file)
        return data if isinstance(data, dict) else {}

    def last_manifest_version(self) -> int | None:
        value = self._load().get("lastManifestVersion")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def bad_versions(self) -> dict[str, str]:
        bad = self._load().get("badVersions")
        if not isinstance(bad, dict):
            return {}
        return {str(version): str(reason) for version, reason in bad.items()}

    def last_manifest(self) -> bytes | None:
        """The last trusted release document, exactly as it was received."""
        try:
            return self.layout.manifest_file.read_bytes()
        except OSError:
            return None

    # ------------------------------------------------------------------ changing

    def _update(self, change: Callable[[dict[str, Any]], Any]) -> Any:
        with state_lock(self.layout):
            data = self._load()
            result = change(data)
            atomic_write(self.layout.state_file, json.dumps(data, indent=2, sort_keys=True).encode() + b"\n")
        return result

    def install_id(self) -> str:
        """This installation's random id, created on first use and never changed."""

        def ensure(data: dict[str, Any]) -> str:
            value = data.get("installId")
            if not isinstance(value, str) or len(value) != 32:
                value = data["installId"] = secrets.token_hex(16)
            return value

        current = self._load().get("installId")
        if isinstance(current, str) and len(current) == 32:
            return current
        result: str = self._update(ensure)
        return result

    def trust_manifest(self, manifest_version: int, raw: bytes) -> None:
        """Remember a verified release document; the version never goes down."""
        if self._raise_version(manifest_version):
            atomic_write(self.layout.manifest_file, raw)

    def _raise_version(self, manifest_version: int) -> bool:
        def raise_(data: dict[str, Any]) -> bool:
            current = data.get("lastManifestVersion")
            if isinstance(current, int) and current > manifest_version:
                return False
            data["lastManifestVersion"] = manifest_version
            return True

        accepted: bool = self._update(raise_)
        return accepted

    def mark_bad(self, version: str, reason: str) -> None:
        def mark(data: dict[str, Any]) -> None:
            bad = data.get("badVersions")
            if not isinstance(bad, dict):
                bad = data["badVersions"] = {}
            bad[version] = reason

        self._update(mark)
