"""Which sessions are open, kept on disk, so the next start knows which ones a crash interrupted
(seed 004 scenario A: the runtime kept its checkpoint; the desktop must ask for it). Qt-free.

A session is written down once it exists and struck off when it ends in order (``Shutdown``). What
is left when the app starts — and not held by another Cowork window still running — was open when
the desktop stopped without closing it: the window offers to resume it from its checkpoint.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

__all__ = ["OpenSession", "SessionJournal"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class OpenSession:
    session_id: str
    workspace_id: str
    folder: str | None
    pid: int
    """The desktop process that holds it."""


class SessionJournal:
    def __init__(
        self, path: Path, *, pid: int | None = None, alive: Callable[[int], bool] | None = None
    ) -> None:
        self.path = path
        self._pid = os.getpid() if pid is None else pid
        self._alive = alive or _alive

    def add(self, session_id: str, workspace_id: str, folder: str | None) -> None:
        entries = [e for e in self._read() if e.session_id != session_id]
        entries.append(OpenSession(session_id, workspace_id, folder, self._pid))
        self._write(entries)

    def remove(self, session_id: str) -> None:
        entries = self._read()
        kept = [e for e in entries if e.session_id != session_id]
        if len(kept) != len(entries):
            self._write(kept)

    def interrupted(self) -> list[OpenSession]:
        """Sessions left open by a desktop that is gone, now this process's to resume (or drop)."""
        entries = self._read()
        orphaned = [e for e in entries if e.pid != self._pid and not self._alive(e.pid)]
        if orphaned:
            adopted = [OpenSession(e.session_id, e.workspace_id, e.folder, self._pid) for e in orphaned]
            self._write([e for e in entries if e not in orphaned] + adopted)
        return [OpenSession(e.session_id, e.workspace_id, e.folder, self._pid) for e in orphaned]

    def _read(self) -> list[OpenSession]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return [
                OpenSession(
                    str(entry["sessionId"]),
                    str(entry["workspaceId"]),
                    entry.get("folder") if isinstance(entry.get("folder"), str) else None,
                    int(entry["pid"]),
                )
                for entry in data["sessions"]
            ]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, KeyError, TypeError) as exc:
            # A damaged journal only costs the offer to resume; it must never stop the app.
            logger.warning("the open-sessions journal %s is unreadable: %s", self.path, exc)
            return []

    def _write(self, entries: list[OpenSession]) -> None:
        data = {
            "sessions": [
                {"sessionId": e.session_id, "workspaceId": e.workspace_id, "folder": e.folder, "pid": e.pid}
                for e in entries
            ]
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=".open-sessions.", dir=self.path.parent)
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(data, stream)
            os.replace(temporary, self.path)
        except OSError as exc:
            logger.warning("could not update the open-sessions journal: %s", exc)
            with contextlib.suppress(OSError, UnboundLocalError):
                os.unlink(temporary)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
