"""The sidebar's conversations: project conversations grouped by folder, general chats below, newest
first (seed 004: a session is a conversation; history lives in the Workspace Service). Qt-free.

A conversation continued in a new session (seed 004 scenario B) has a history that starts with the
earlier sessions' messages, each keeping its own ``sessionId``. Those earlier sessions are the
conversation's past, not conversations of their own: the sidebar shows only the newest session of a
chain, and remembers the chain so an open conversation is found again after a refresh.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

__all__ = [
    "ConversationSummary",
    "ProjectGroup",
    "Sidebar",
    "build_sidebar",
    "filter_sidebar",
    "summarize_history",
    "title_of",
]

TITLE_LENGTH = 80
SEARCH_TEXT_CHARS = 200_000
"""How much of a conversation's text the sidebar's search looks through (its start: prompts and
replies, most recognisable, come first; huge tool outputs would only make the search slow)."""


@dataclass(frozen=True)
class ConversationSummary:
    session_id: str
    workspace_id: str
    title: str
    updated_at: datetime
    folder: str | None
    """The project folder of a project conversation; ``None`` for a general chat."""
    message_count: int
    earlier_sessions: frozenset[str] = frozenset()
    """Sessions this one continued (their messages open its history)."""
    search_text: str = ""
    """The prompts and replies, folded to lower case, for the sidebar's search."""
    renamed: bool = False
    """The title is one the user gave it, not its first prompt's."""

    @property
    def chain(self) -> frozenset[str]:
        return self.earlier_sessions | {self.session_id}

    def matches(self, query: str) -> bool:
        """Every word of ``query`` is in the title or the text (case-insensitive)."""
        words = query.casefold().split()
        title = self.title.casefold()
        return all(word in title or word in self.search_text for word in words)


@dataclass(frozen=True)
class ProjectGroup:
    folder: str
    conversations: list[ConversationSummary]

    @property
    def name(self) -> str:
        """The folder's own name, for the group's heading (the full path is its tooltip)."""
        trimmed = self.folder.rstrip("/\\")
        return trimmed.replace("\\", "/").rsplit("/", 1)[-1] or self.folder


@dataclass(frozen=True)
class Sidebar:
    projects: list[ProjectGroup] = field(default_factory=list)
    general: list[ConversationSummary] = field(default_factory=list)

    def find(self, session_id: str) -> ConversationSummary | None:
        """The conversation whose chain holds ``session_id``."""
        for summary in self.all():
            if session_id in summary.chain:
                return summary
        return None

    def all(self) -> list[ConversationSummary]:
        return [c for group in self.projects for c in group.conversations] + list(self.general)


def title_of(messages: Iterable[Mapping[str, Any]]) -> str:
    """The first line of the first prompt, shortened; what the user will recognise the chat by."""
    for message in messages:
        if message.get("role") != "user":
            continue
        for line in str(message.get("content") or "").splitlines():
            # Markdown's marks would only clutter a title.
            text = " ".join(line.replace("`", "").replace("**", "").split())
            if text:
                return text if len(text) <= TITLE_LENGTH else text[: TITLE_LENGTH - 1] + "…"
    return "Conversation"


def summarize_history(
    history: Mapping[str, Any], *, folder: str | None, updated_at: datetime
) -> ConversationSummary:
    """A summary of one ``session_history`` (its wire dict)."""
    messages: Sequence[Mapping[str, Any]] = history.get("messages") or []
    session_id = str(history["sessionId"])
    earlier = frozenset(str(m.get("sessionId")) for m in messages if m.get("sessionId") != session_id)
    return ConversationSummary(
        session_id=session_id,
        workspace_id=str(history["workspaceId"]),
        title=title_of(messages),
        updated_at=updated_at,
        folder=folder,
        message_count=len(messages),
        earlier_sessions=earlier,
        search_text=_search_text(messages),
    )


def _search_text(messages: Sequence[Mapping[str, Any]]) -> str:
    parts: list[str] = []
    size = 0
    for message in messages:
        if message.get("role") not in ("user", "assistant"):
            continue
        text = str(message.get("content") or "")
        parts.append(text)
        size += len(text) + 1
        if size >= SEARCH_TEXT_CHARS:
            break
    return "\n".join(parts)[:SEARCH_TEXT_CHARS].casefold()


def build_sidebar(
    summaries: Iterable[ConversationSummary],
    titles: Callable[[Iterable[str]], str | None] | None = None,
) -> Sidebar:
    """``titles``: the name the user gave a conversation (by its sessions), if any."""
    every = list(summaries)
    continued = {session for summary in every for session in summary.earlier_sessions}
    shown = [summary for summary in every if summary.session_id not in continued]
    if titles is not None:
        shown = [_renamed(summary, titles(sorted(summary.chain))) for summary in shown]
    return _grouped(shown)


def filter_sidebar(sidebar: Sidebar, query: str) -> Sidebar:
    """Only the conversations whose title or text holds every word of ``query``; all for ``""``."""
    if not query.strip():
        return sidebar
    return _grouped(summary for summary in sidebar.all() if summary.matches(query))


def _renamed(summary: ConversationSummary, title: str | None) -> ConversationSummary:
    return summary if title is None else replace(summary, title=title, renamed=True)


def _grouped(shown: Iterable[ConversationSummary]) -> Sidebar:
    """Grouped by project folder, newest first."""
    shown = sorted(shown, key=lambda summary: summary.updated_at, reverse=True)
    groups: dict[str, list[ConversationSummary]] = {}
    general: list[ConversationSummary] = []
    for summary in shown:
        if summary.folder is None:
            general.append(summary)
        else:
            groups.setdefault(summary.folder, []).append(summary)
    # Dicts keep insertion order: the folder with the newest conversation comes first.
    return Sidebar([ProjectGroup(folder, items) for folder, items in groups.items()], general)
