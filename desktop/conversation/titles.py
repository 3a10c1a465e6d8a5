"""The titles the user gave conversations, kept on this computer. Qt-free.

The backend stores a conversation's history but no title (seed 004: a title is not part of a
session or its ``session_history``), so a conversation is named after its first prompt
(:func:`desktop.conversation.sidebar.title_of`) unless the user renamed it. Renames live in a small
JSON file beside the session journal, keyed by the session that started the conversation's chain and
by every later session of it, so a conversation continued in a new session keeps its name.

The same file remembers which sessions the user deleted. A runtime sends a session's history in the
background and, when it cannot before it exits, the next runtime sends it (seed 000 §3.4): a history
can reach the backend after its conversation was deleted. The sidebar never shows such a history, and
the window deletes it again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path

from desktop.i18n import translate
from desktop.updater.layout import atomic_write

__all__ = ["MAX_TITLE_CHARS", "TitleError", "TitleStore", "clean_title"]

logger = logging.getLogger(__name__)

MAX_TITLE_CHARS = 200
KEPT_DELETIONS = 2000
"""The most recent deletions remembered; a late history arrives within minutes, not months."""


class TitleError(ValueError):
    """A title that cannot be used; ``str()`` says why, for the user."""


def clean_title(text: str) -> str:
    """``text`` on one line without surrounding space; :class:`TitleError` if empty or too long."""
    title = " ".join(text.split())
    if not title:
        raise TitleError(translate("Conversation", "A conversation's name cannot be empty."))
    if len(title) > MAX_TITLE_CHARS:
        raise TitleError(
            translate("Conversation", "A conversation's name can be at most {count} characters.").format(
                count=MAX_TITLE_CHARS
            )
        )
    return title


class TitleStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._titles: dict[str, str] | None = None
        self._deleted: list[str] = []

    def title_of(self, sessions: Iterable[str]) -> str | None:
        """The name given to the conversation made of ``sessions``, if it was renamed."""
        titles = self._load()
        for session_id in sessions:
            if session_id in titles:
                return titles[session_id]
        return None

    def rename(self, sessions: Iterable[str], title: str) -> str:
        """Name the conversation made of ``sessions``; the cleaned title. :class:`TitleError` for an
        unusable one, :class:`OSError` when the file cannot be written."""
        cleaned = clean_title(title)
        titles = dict(self._load())
        for session_id in sessions:
            titles[session_id] = cleaned
        self._save(titles)
        return cleaned

    def forget(self, sessions: Iterable[str]) -> None:
        """The conversation made of ``sessions`` was deleted: its name goes, and the deletion is kept
        (:meth:`was_deleted`)."""
        titles = dict(self._load())
        gone = list(sessions)
        for session_id in gone:
            titles.pop(session_id, None)
        self._deleted = [s for s in self._deleted if s not in gone] + gone
        self._save(titles)

    def was_deleted(self, sessions: Iterable[str]) -> bool:
        """Whether the user deleted a conversation holding any of ``sessions``."""
        self._load()
        deleted = set(self._deleted)
        return any(session_id in deleted for session_id in sessions)

    def _load(self) -> dict[str, str]:
        if self._titles is not None:
            return self._titles
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            data = {}
        except (OSError, ValueError) as exc:
            # The names are a convenience: an unreadable file leaves the first-prompt titles.
            logger.warning("the conversation names in %s cannot be read: %s", self.path, exc)
            data = {}
        titles = data.get("titles") if isinstance(data, dict) else None
        self._titles = (
            {str(k): v for k, v in titles.items() if isinstance(v, str)} if isinstance(titles, dict) else {}
        )
        deleted = data.get("deleted") if isinstance(data, dict) else None
        self._deleted = [str(s) for s in deleted if isinstance(s, str)] if isinstance(deleted, list) else []
        return self._titles

    def _save(self, titles: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._deleted = self._deleted[-KEPT_DELETIONS:]
        document = {"version": 1, "titles": titles, "deleted": self._deleted}
        atomic_write(self.path, json.dumps(document, indent=2, ensure_ascii=False).encode() + b"\n")
        self._titles = titles
