"""The MCP servers of one conversation's session as Settings lists them. Qt-free.

``GetMcpServers`` gives the whole list (:meth:`McpServers.replace`); each ``mcp_server_state_changed``
event updates one server (:meth:`McpServers.update`). Values come off the wire as plain dicts
(``McpServerState`` of :mod:`contracts.mcp`) and are read leniently: a field a newer runtime adds is
ignored, a missing one shows as unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from contracts.mcp import McpServerStatus
from desktop.i18n import QT_TRANSLATE_NOOP, translate

__all__ = [
    "EMPTY_TEXT",
    "McpServers",
    "McpServersSource",
    "ServerRow",
    "describe_state",
]

EMPTY_TEXT = QT_TRANSLATE_NOOP(
    "McpServers",
    "No MCP servers in this conversation. Servers come from your organisation's policy and from the"
    " project's .cowork/mcp.json file; a conversation connects to them when it starts.",
)

_STATE_WORDS = {
    McpServerStatus.CONNECTING.value: QT_TRANSLATE_NOOP("McpServers", "Connecting…"),
    McpServerStatus.CONNECTED.value: QT_TRANSLATE_NOOP("McpServers", "Connected"),
    McpServerStatus.UNAVAILABLE.value: QT_TRANSLATE_NOOP("McpServers", "Unavailable"),
    McpServerStatus.CLOSED.value: QT_TRANSLATE_NOOP("McpServers", "Closed"),
    McpServerStatus.AUTHORIZING.value: QT_TRANSLATE_NOOP("McpServers", "Waiting for you to sign in"),
}


def describe_state(state: str) -> str:
    """A server's state in words (``connected`` → ``Connected``); unknown states as they came."""
    known = _STATE_WORDS.get(state)
    if known is not None:
        return translate("McpServers", known)
    return state or translate("McpServers", "Unknown")


@dataclass(frozen=True)
class ServerRow:
    name: str
    state: str
    url: str = ""
    tool_count: int = 0
    last_error: str = ""
    protocol_version: str = ""
    source: str = ""
    """``policy`` or ``workspace`` (the project's ``.cowork/mcp.json``), when the runtime says."""
    rejected_tools: tuple[tuple[str, str], ...] = ()
    """(tool, why) for each tool the server offered that was not registered."""

    @property
    def state_text(self) -> str:
        return describe_state(self.state)

    @property
    def source_text(self) -> str:
        if self.source == "policy":
            return translate("McpServers", "Organisation policy")
        if self.source == "workspace":
            return translate("McpServers", "Project (.cowork/mcp.json)")
        return self.source

    @property
    def unavailable(self) -> bool:
        return self.state == McpServerStatus.UNAVAILABLE.value

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> ServerRow | None:
        """A row from an ``McpServerState`` dict; ``None`` when it names no server."""
        name = wire.get("name")
        if not isinstance(name, str) or not name:
            return None
        count = wire.get("toolCount")
        rejected = wire.get("rejectedTools")
        return cls(
            name=name,
            state=str(wire.get("state") or ""),
            url=_text(wire.get("url")),
            tool_count=count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else 0,
            last_error=_text(wire.get("lastError")),
            protocol_version=_text(wire.get("protocolVersion")),
            source=_text(wire.get("source")),
            rejected_tools=tuple(
                (_text(entry.get("toolName")), _text(entry.get("reason")))
                for entry in (rejected if isinstance(rejected, list) else ())
                if isinstance(entry, Mapping)
            ),
        )


def _text(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


@dataclass
class McpServers:
    """The servers of one session, in the order the runtime lists them; observers hear each change."""

    rows: list[ServerRow] = field(default_factory=list)
    loaded: bool = False
    """``GetMcpServers`` answered at least once (before that, only events filled the list)."""
    refreshing: bool = False
    problem: str = ""
    """Why the last ``GetMcpServers`` failed; ``""`` when it did not."""
    _observers: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def find(self, name: str) -> ServerRow | None:
        for row in self.rows:
            if row.name == name:
                return row
        return None

    def replace(self, servers: Iterable[Any]) -> None:
        """The whole list, as ``GetMcpServers`` answered it."""
        self.rows = [
            row for row in (ServerRow.from_wire(s) for s in servers if isinstance(s, Mapping)) if row
        ]
        self.loaded = True
        self.refreshing = False
        self.problem = ""
        self._changed()

    def update(self, wire: Mapping[str, Any]) -> tuple[ServerRow | None, ServerRow | None]:
        """One server's new state (an ``mcp_server_state_changed`` payload): (before, after).
        A server not listed yet is added at the end."""
        row = ServerRow.from_wire(wire)
        if row is None:
            return None, None
        for index, existing in enumerate(self.rows):
            if existing.name == row.name:
                self.rows[index] = row
                self._changed()
                return existing, row
        self.rows.append(row)
        self._changed()
        return None, row

    def start_refresh(self) -> None:
        self.refreshing = True
        self._changed()

    def failed(self, problem: str) -> None:
        self.refreshing = False
        self.problem = problem
        self._changed()

    def clear(self) -> None:
        """A new runtime starts: the servers connect again and say so."""
        self.rows = []
        self.loaded = False
        self.problem = ""
        self._changed()

    def subscribe(self, callback: Callable[[], None]) -> None:
        if callback not in self._observers:
            self._observers.append(callback)

    def unsubscribe(self, callback: Callable[[], None]) -> None:
        if callback in self._observers:
            self._observers.remove(callback)

    def _changed(self) -> None:
        for callback in list(self._observers):
            callback()


@dataclass(frozen=True)
class McpServersSource:
    """What Settings shows on its MCP page: the shown conversation's servers and how to ask again."""

    conversation: str
    """The conversation, as the user knows it (its title or folder)."""
    servers: McpServers
    refresh: Callable[[], object]
    """Ask the runtime (``GetMcpServers``); the answer lands in ``servers``."""
