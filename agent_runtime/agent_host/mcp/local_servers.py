"""Local (stdio) MCP servers under ``RunCommand``'s command policy (seed 000 §8.4).

A local server is a program the runtime starts; its command line must pass the same checks a
``RunCommand`` of it would — the ``Shell.Exec`` grant, its blocked and allowed programs, the programs
the bundle always asks about. It starts with the session, before any task, so nobody could be asked:
a command line the policy would only run with approval is refused too. The bundle's floors decide here,
not the task's approval mode (there is no task yet).
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable, Sequence
from datetime import datetime
from types import MappingProxyType

from agent_runtime.agent_host.policy import (
    Allowed,
    ApprovalRequired,
    Denied,
    PolicyEnforcer,
    PolicyExpired,
    ToolCallFacts,
)
from contracts.enums import ApprovalMode, Capability, OsFamily, ToolName
from contracts.mcp_boundary import LocalCommandCheck

__all__ = ["command_line", "local_command_check"]


def command_line(command: Sequence[str], os_family: OsFamily) -> str:
    """``command`` as the one line a shell would run it from (what the policy's analyser reads)."""
    if os_family is OsFamily.WINDOWS:
        return subprocess.list2cmdline(list(command))
    return shlex.join(command)


def local_command_check(
    enforcer: Callable[[], PolicyEnforcer],
    *,
    now: Callable[[], datetime],
    workspace_roots: tuple[str, ...],
) -> LocalCommandCheck:
    """The check the MCP client asks before it starts a local server (``McpHooks.check_local_command``).
    ``enforcer`` is read at each check: a resumed session may hold a refreshed bundle."""

    def check(command: Sequence[str], cwd: str | None) -> str | None:
        policy = enforcer()
        line = command_line(command, policy.os_family)
        facts = ToolCallFacts(
            tool_name=ToolName.RUN_COMMAND.value,
            arguments=MappingProxyType({"command": line, "cwd": cwd}),
            workspace_roots=workspace_roots,
        )
        outcome = policy.check(facts, Capability.SHELL_EXEC, now=now(), approval_mode=ApprovalMode.NEVER)
        if isinstance(outcome, Allowed):
            return None
        if isinstance(outcome, Denied | PolicyExpired):
            return f"the command policy refuses it: {outcome.reason}"
        assert isinstance(outcome, ApprovalRequired)
        notes = f" ({' '.join(outcome.notes)})" if outcome.notes else ""
        return (
            "the command policy runs it only with the user's approval, and a local server starts with"
            f" the session, before anyone could be asked{notes}"
        )

    return check
