"""Per-category tool timeouts (seed 000 §7.4), the host's backstop over the tool's own limits."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contracts.enums import Capability

__all__ = ["DEFAULT_TIMEOUTS", "MAX_TOOL_TIMEOUT_S", "ToolTimeouts"]

#: The longest ``timeout`` argument RunCommand and HttpRequest accept (seed 003 §8.2).
MAX_TOOL_TIMEOUT_S = 600

_FILE = frozenset({Capability.FILE_READ, Capability.FILE_WRITE, Capability.FILE_DELETE})
_OWN_TIMEOUT = frozenset({Capability.SHELL_EXEC, Capability.NETWORK_HTTP})


@dataclass(frozen=True, slots=True)
class ToolTimeouts:
    """Seconds a tool call may take before the host stops it with ``TOOL_EXECUTION_TIMEOUT``.

    RunCommand and HttpRequest take a ``timeout`` argument (1–600 s) and enforce it themselves, with a
    result that keeps the output so far. When the model gives one, it replaces the category default
    and the host waits ``grace_s`` longer, so the tool's own, more informative timeout wins — a
    command's tree kill takes up to a few seconds (TERM, then KILL) before its output is drained.
    """

    file_s: float = 30.0
    shell_s: float = 300.0
    network_s: float = 60.0
    other_s: float = 120.0
    """Any other tool (the seed's remote tools, Phase 3; MCP servers' tools, seed 003 §9.3)."""
    grace_s: float = 15.0
    upload_s: float = 120.0
    """One artifact upload to the Workspace Service, retries included."""

    def for_call(self, capability: Capability | None, arguments: Mapping[str, Any]) -> float:
        """The limit for one call of a tool with ``capability`` and these arguments."""
        if capability in _OWN_TIMEOUT:
            own = arguments.get("timeout")
            if isinstance(own, int) and not isinstance(own, bool) and 1 <= own <= MAX_TOOL_TIMEOUT_S:
                return own + self.grace_s
            return self.shell_s if capability is Capability.SHELL_EXEC else self.network_s
        if capability in _FILE:
            return self.file_s
        if capability is Capability.MCP_INVOKE:
            # The MCP client enforces other_s itself (and tells the server it gave up, and counts the
            # failure against the server): the host's backstop waits grace_s longer so that one wins.
            return self.other_s + self.grace_s
        return self.other_s


DEFAULT_TIMEOUTS = ToolTimeouts()
