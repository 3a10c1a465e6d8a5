"""Which sessions are open, kept on disk, so the next start knows which ones a crash interrupted
(seed 004 scenario A: the runtime kept its checkpoint; the desktop must ask for it). Qt-free.

A session is written down once it exists and struck off when it ends in order (``Shutdown``). What
is left when the app starts — and not held by another Cowork window still running — was open when
the desktop stopped without closing it: the window offers to resume it from its checkpoint.

Beside it, :class:`CancelledReplies` keeps the answers a cancel cut off: the runtime drops a partial
answer from the conversation's history (the model never finished it), but the user read it, so the
desktop keeps what was shown and draws it again, marked cancelled, when the conversation is reopened.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import psutil

from desktop.updater.layout import atomic_write

__all__ = ["CancelledReplies", "CancelledReply", "OpenSession", "SessionJournal"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class OpenSession:
    session_id: str
    workspace_id: str
    folder: str | None
    pid: int
    """The desktop process that holds it."""


@dataclass(frozen=True)
class CancelledReply:
    """What the user saw of an answer before its task was cancelled."""

    session_id: str
    task_id: str
    step_id: str | None
    text: str


MAX_CANCELLED_REPLIES = 200
"""The newest cancelled answers kept; older ones are forgotten (their conversations show without them)."""
MAX_CANCELLED_CHARS = 256 * 1024
"""The most of one cancelled answer kept."""


class CancelledReplies:
    """Cancelled answers on disk, by task. A damaged or missing file only costs showing them again."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def add(self, reply: CancelledReply) -> None:
        if not reply.text.strip():
            return
        kept = [r for r in self._read() if (r.task_id, r.step_id) != (reply.task_id, reply.step_id)]
        kept.append(
            CancelledReply(reply.session_id, reply.task_id, reply.step_id, reply.text[:MAX_CANCELLED_CHARS])
        )
        self._write(kept[-MAX_CANCELLED_REPLIES:])

    def for_tasks(self, task_ids: Iterable[str]) -> list[CancelledReply]:
        """The cancelled answers of these tasks, oldest first."""
        wanted = set(task_ids)
        return [r for r in self._read() if r.task_id in wanted] if wanted else []

    def _read(self) -> list[CancelledReply]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return [
                CancelledReply(
                    str(entry["sessionId"]),
                    str(entry["taskId"]),
                    entry["stepId"] if isinstance(entry.get("stepId"), str) else None,
                    str(entry["text"]),
                )
                for entry in data["replies"]
            ]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, KeyError, TypeError) as exc:
            logger.warning("the cancelled answers file %s is unreadable: %s", self.path, exc)
            return []

    def _write(self, replies: list[CancelledReply]) -> None:
        data = {
            "replies": [
                {"sessionId": r.session_id, "taskId": r.task_id, "stepId": r.step_id, "text": r.text}
                for r in replies
            ]
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, json.dumps(data).encode("utf-8"))
        except OSError as exc:
            logger.warning("could not keep the cancelled answer: %s", exc)


class SessionJournal:
    def __init__(
        self, path: Path, *, pid: int | None = None, alive: Callable[[int], bool] | None = None
    ) -> None:
        self.path = path
        self._pid = os.getpid() if pid is None else pid
        self._alive = alive or _alive
        self.cancelled = CancelledReplies(path.with_name("cancelled-replies.json"))
        """The answers cancels cut off, kept next to the journal."""

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
            atomic_write(self.path, json.dumps(data).encode("utf-8"))
        except OSError as exc:
            logger.warning("could not update the open-sessions journal: %s", exc)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
