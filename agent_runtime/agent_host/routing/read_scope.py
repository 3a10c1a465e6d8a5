"""The policy's File.Read paths for every file a ListDirectory, Glob or Grep shows or reads.

The policy judged the one path the call names (the directory searched). The files below it pass the
same check a ReadFile of each would: the enforcer's own ``check`` (blocked entries win over allowed
ones, whole-component matching, case folding of blocked entries). A path for which the policy would
ask the user is admitted only inside the directory the call was allowed (or approved) for: approving
a search of a folder approves reading that folder, not what a symbolic link inside it points to.

``allows_all_under`` lets the walk ask once per directory instead of once per file: true when the
directory is readable and no blocked entry lies below it.
"""

from __future__ import annotations

from datetime import datetime
from types import MappingProxyType

from agent_runtime.agent_host.policy import Allowed, ApprovalRequired, PolicyEnforcer, ToolCallFacts
from agent_runtime.agent_host.policy.paths import PathError, path_key
from agent_runtime.agent_host.routing.paths import is_within
from contracts.enums import ApprovalMode, Capability, ToolName

__all__ = ["PolicyReadScope"]


class PolicyReadScope:
    """A ``contracts.tools.ReadScope`` backed by the session's ``PolicyEnforcer``; thread-safe (the
    enforcer is pure), as the tools walk in worker threads."""

    def __init__(
        self,
        enforcer: PolicyEnforcer,
        *,
        approval_mode: ApprovalMode,
        now: datetime,
        workspace_roots: tuple[str, ...],
        searched: str,
    ) -> None:
        self._enforcer = enforcer
        self._mode = approval_mode
        self._now = now
        self._roots = workspace_roots
        self._searched = searched
        self._os = enforcer.os_family
        grant = enforcer.grant(Capability.FILE_READ)
        blocked: list[str] = []
        for entry in (grant.blocked_paths if grant is not None else None) or []:
            try:
                blocked.append(path_key(entry, self._os, fold=True))
            except PathError:
                continue  # the enforcer refused such a bundle already
        self._blocked = tuple(blocked)

    def allows(self, path: str) -> bool:
        facts = ToolCallFacts(
            tool_name=ToolName.READ_FILE.value,
            arguments=MappingProxyType({"path": path}),
            resolved_path=path,
            workspace_roots=self._roots,
        )
        outcome = self._enforcer.check(facts, Capability.FILE_READ, now=self._now, approval_mode=self._mode)
        if isinstance(outcome, Allowed):
            return True
        if isinstance(outcome, ApprovalRequired):
            return is_within(path, self._searched)
        return False

    def allows_all_under(self, directory: str) -> bool:
        if not self.allows(directory):
            return False
        try:
            key = path_key(directory, self._os, fold=True)
        except PathError:
            return False
        return not any(entry.startswith(key) for entry in self._blocked)
