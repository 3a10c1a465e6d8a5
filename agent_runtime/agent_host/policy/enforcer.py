"""The Local Policy Enforcer (seed 000 §8): pure checks of tool calls and LLM calls against the bundle.

Built once per session from a validated bundle: grants indexed by capability and approval rules by
id (§8.1), every scope list compiled for look-up, every entry checked so a bundle that cannot be
enforced as written is refused at load rather than misapplied later. No I/O and no clock: the caller
resolves paths (symlinks, ``..``) and file sizes beforehand and passes ``now``.

``check`` follows §8.2: expiry (§8.6), then the grant, then the scope of the capability — paths
(§8.3), every command of a command line (§8.4, extended), the URL's host — then approval. A denial
always wins. Approval combines the bundle, which is the organisation's floor, with the task's mode:

* ``requiresApproval`` in the grant: always asks, in every mode, ``never`` included;
* a command line that cannot be verified against the grant's command lists: asks if the grant names
  an approval rule, else is denied — in every mode, since the lists are the organisation's;
* ``on_risky_actions``: also asks for high-risk actions (§8.5);
* ``always``: asks for every call except reading a file inside the project folders and uploading
  an artifact to the session's own workspace. Asking for each read would train users to approve
  without looking, which would cost the prompts that matter their weight;
* ``never``: asks only where the two floors above require it.

MCP tools (``Mcp.Invoke``, seed 003 §9.4, :mod:`contracts.mcp`): the tool must match the grant's
``allowedToolNames``; an approval rule whose ``toolNames`` match it asks in every mode (another floor
of the bundle); the risk is medium, high when the server does not say the tool is harmless (the MCP
spec's defaults: a tool is destructive unless it says ``readOnlyHint`` or ``destructiveHint: false``).

Remote tools (``BackendTool.Invoke``, seed 000 §7.6) follow the same rules by exact name: the grant's
``allowedToolNames`` (when set) must list the tool, and an approval rule whose ``toolNames`` lists it
asks in every mode.

Uploads (``Workspace.Upload``, seed 001 §5: workspace, size limits): ``UploadArtifact`` reads a file,
so its path passes the File.Read grant's path and size rules (and asks where File.Read asks) and its
size the upload grant's ``maxFileSizeBytes``; ``check_upload`` judges the runtime's own uploads (tool
artifacts, the session history) by the grant and its size limit alone.
"""

from __future__ import annotations

import copy
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from pydantic import ValidationError

from agent_runtime.agent_host.policy.commands import MODIFIERS, CommandAnalysis, analyse_command
from agent_runtime.agent_host.policy.commands.programs import base_name
from agent_runtime.agent_host.policy.domains import DomainRules, UrlRejected, normalise_entry, parse_url_host
from agent_runtime.agent_host.policy.errors import PolicyBundleInvalid, PolicyExpiredError
from agent_runtime.agent_host.policy.outcomes import (
    Allowed,
    ApprovalReason,
    ApprovalRequired,
    CheckOutcome,
    Denied,
    LlmCheckOutcome,
    PolicyExpired,
)
from agent_runtime.agent_host.policy.paths import PathError, PathRules
from agent_runtime.agent_host.policy.redaction import Redactor, RedactorError
from contracts.approvals import ApprovalDetails
from contracts.enums import ApprovalMode, Capability, OsFamily, RiskLevel
from contracts.errors import ErrorCode
from contracts.mcp import split_tool_name, tool_pattern_matches
from contracts.policy import SUPPORTED_POLICY_SCHEMA_VERSIONS, ApprovalRule, CapabilityGrant, PolicyBundle
from contracts.validation import invalid_request, validate_json_value

__all__ = ["IMPLICIT_COMMANDS", "PolicyEnforcer", "SessionBudget", "ToolCallFacts"]

IMPLICIT_COMMANDS: Mapping[bool, frozenset[str]] = {
    False: frozenset(
        {"cd", "pushd", "popd", "dirs", "pwd", "true", "false", ":", "echo", "printf", "test", "["}
        | {"exit", "return", "shift", "wait", "export", "unset", "read"}
        | MODIFIERS
    ),
    True: frozenset({"cd", "chdir", "echo", "pushd", "popd", "call"}),
}
"""Shell builtins an ``allowedCommands`` list need not name (POSIX: False, Windows: True): they move
around, print, test or only modify how the next command runs, and every command they lead to is
still checked. ``blockedCommands`` applies to them like to any other."""

_DEFAULT_TITLES: Mapping[Capability, tuple[str, str]] = {
    Capability.FILE_READ: ("Read a file", "The agent wants to read a file on this computer."),
    Capability.FILE_WRITE: ("Write a file", "The agent wants to create or change a file on this computer."),
    Capability.FILE_DELETE: ("Delete a file", "The agent wants to delete a file on this computer."),
    Capability.SHELL_EXEC: ("Run a local command", "The agent wants to run a command on this computer."),
    Capability.NETWORK_HTTP: ("Make an HTTP request", "The agent wants to send a request over the network."),
    Capability.WORKSPACE_UPLOAD: ("Upload an artifact", "The agent wants to upload output to the workspace."),
    Capability.BACKEND_TOOL_INVOKE: (
        "Use a remote tool",
        "The agent wants to call a tool run by the backend.",
    ),
    Capability.MCP_INVOKE: (
        "Use an MCP server's tool",
        "The agent wants to call a tool of an MCP server, which receives the arguments shown.",
    ),
}

_DEFAULT_RISK: Mapping[Capability, RiskLevel] = {
    Capability.FILE_READ: RiskLevel.LOW,
    Capability.FILE_WRITE: RiskLevel.MEDIUM,
    Capability.FILE_DELETE: RiskLevel.HIGH,
    Capability.SHELL_EXEC: RiskLevel.MEDIUM,
    Capability.NETWORK_HTTP: RiskLevel.MEDIUM,
    Capability.WORKSPACE_UPLOAD: RiskLevel.LOW,
    Capability.BACKEND_TOOL_INVOKE: RiskLevel.MEDIUM,
    # What an MCP server does with a call is the server's business: never rated low. A tool the
    # server itself marks destructive is rated high (see _check_mcp_tool).
    Capability.MCP_INVOKE: RiskLevel.MEDIUM,
}
"""Tool capabilities only: ``check`` refuses LLM.Call before it looks a title or a risk level up."""
_RISKS = (RiskLevel.LOW, RiskLevel.MEDIUM, RiskLevel.HIGH)  # in increasing order
_FILE_CAPABILITIES = frozenset({Capability.FILE_READ, Capability.FILE_WRITE, Capability.FILE_DELETE})


@dataclass(frozen=True, slots=True)
class ToolCallFacts:
    """A tool call and the facts about it that the caller resolved before asking the policy."""

    tool_name: str
    arguments: Mapping[str, Any]
    resolved_path: str | None = None
    """File tools: the absolute path with symlinks and ``..`` resolved (seed 000 §8.3, 003 §6.1)."""
    file_size: int | None = None
    """File tools: the size in bytes of the file at ``resolved_path`` if it exists."""
    workspace_roots: tuple[str, ...] = field(default=())
    """The session's project folders, resolved like ``resolved_path`` (writing outside → high risk)."""
    destructive: bool = False
    """MCP tools: the server marks the tool ``destructiveHint`` (a hint from the server, only ever used
    to ask more, never less)."""


class SessionBudget(Protocol):
    """The session's token budget as the LLM pre-check sees it (``thread.TokenBudget`` is one)."""

    @property
    def used(self) -> int: ...

    @property
    def limit(self) -> int: ...

    def allows(self, estimate: int) -> bool: ...


def _fold(name: str) -> str:
    if name.isascii():
        return name.lower()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


@dataclass(frozen=True, slots=True)
class _Grant:
    grant: CapabilityGrant
    allowed_paths: PathRules | None
    blocked_paths: PathRules | None
    allowed_commands: frozenset[str] | None
    blocked_commands: frozenset[str] | None
    approval_commands: Mapping[str, tuple[tuple[str, ...], ...]] | None
    domains: DomainRules | None
    tool_names: frozenset[str] | None
    rule: ApprovalRule | None


class PolicyEnforcer:
    """Checks against one policy bundle. Pure: every method is a function of its arguments."""

    def __init__(self, bundle: PolicyBundle, *, os_family: OsFamily) -> None:
        self._bundle = bundle
        self._os = os_family
        self._revoked: str | None = None
        self._windows = os_family is OsFamily.WINDOWS
        self._rules = {rule.approval_rule_id: rule for rule in bundle.approval_rules}
        self._grants = {grant.name: self._compile(grant) for grant in bundle.capabilities}
        self._roots: dict[tuple[str, ...], PathRules] = {}
        redaction = bundle.llm_policy.redaction
        try:
            self._redactor = Redactor(redaction)
        except RedactorError as exc:
            raise PolicyBundleInvalid(
                f"llmPolicy.redaction.extraPatterns: {exc}", field="llmPolicy.redaction.extraPatterns"
            ) from exc

    @classmethod
    def load(
        cls, data: Mapping[str, Any] | str | bytes, *, session_id: str, now: datetime, os_family: OsFamily
    ) -> PolicyEnforcer:
        """Validate a bundle as it came off the wire (seed 000 §3.2 step 5) and build the enforcer.

        Raises :class:`PolicyBundleInvalid` (bad shape, another session's bundle, unsupported
        ``schemaVersion``, unenforceable entries) or :class:`PolicyExpiredError`.
        """
        try:
            if isinstance(data, str | bytes):
                bundle = PolicyBundle.model_validate_json(data)
            else:
                bundle = validate_json_value(PolicyBundle, dict(data))
        except ValidationError as exc:
            shape = invalid_request(exc, prefix="policyBundle")
            raise PolicyBundleInvalid(
                f"The policy bundle is invalid: {shape.message}", field=shape.details.get("field")
            ) from exc
        if bundle.session_id != session_id:
            raise PolicyBundleInvalid(
                f"The policy bundle is for session {bundle.session_id}, not {session_id}.",
                field="policyBundle.sessionId",
            )
        if bundle.schema_version not in SUPPORTED_POLICY_SCHEMA_VERSIONS:
            raise PolicyBundleInvalid(
                f"Policy schema version {bundle.schema_version} is not supported by this agent runtime.",
                field="policyBundle.schemaVersion",
            )
        _require_aware(now)
        if bundle.expires_at <= now:
            raise PolicyExpiredError(bundle.expires_at)
        return cls(bundle, os_family=os_family)

    def _compile(self, grant: CapabilityGrant) -> _Grant:
        name = grant.name.value

        def invalid(list_name: str, entry: str, problem: str) -> PolicyBundleInvalid:
            return PolicyBundleInvalid(
                f"capabilities[{name}].{list_name}: {entry!r} {problem}",
                capability=name,
                field=list_name,
                entry=entry,
            )

        def paths(entries: list[str] | None, list_name: str, *, blocked: bool) -> PathRules | None:
            if entries is None:
                return None
            for entry in entries:  # one at a time, to name the entry that cannot be used
                try:
                    PathRules([entry], self._os, blocked=blocked)
                except PathError as exc:
                    raise invalid(list_name, entry, f"is not a usable path entry ({exc})") from exc
            return PathRules(entries, self._os, blocked=blocked)

        def commands(entries: list[str] | None, list_name: str) -> frozenset[str] | None:
            if entries is None:
                return None
            names = set()
            for entry in entries:
                text = entry.strip()
                if not text or any(ch.isspace() for ch in text):
                    raise invalid(
                        list_name, entry, "is not a program name (one name per entry, no arguments)"
                    )
                base = base_name(text, windows=self._windows)
                if base is None:
                    raise invalid(list_name, entry, "is not a program name")
                names.add(base if self._windows or list_name == "allowedCommands" else _fold(base))
            return frozenset(names)

        def asked(entries: list[str] | None) -> dict[str, tuple[tuple[str, ...], ...]] | None:
            if entries is None:
                return None
            index: dict[str, tuple[tuple[str, ...], ...]] = {}
            for entry in entries:
                words = entry.split()
                base = base_name(words[0], windows=self._windows) if words else None
                if base is None:
                    raise invalid("approvalCommands", entry, "is not a program name (then argument words)")
                key = base if self._windows else _fold(base)
                index[key] = (*index.get(key, ()), tuple(words[1:]))
            return index

        domains = None
        if grant.allowed_domains is not None:
            for entry in grant.allowed_domains:
                try:
                    normalise_entry(entry)
                except UrlRejected as exc:
                    raise invalid("allowedDomains", entry, f"cannot be matched ({exc})") from exc
            domains = DomainRules(grant.allowed_domains)
        rule = None
        if grant.approval_rule_id is not None:
            rule = self._rules.get(grant.approval_rule_id)  # the bundle's validator guarantees it exists
        return _Grant(
            grant=grant,
            allowed_paths=paths(grant.allowed_paths, "allowedPaths", blocked=False),
            blocked_paths=paths(grant.blocked_paths, "blockedPaths", blocked=True),
            allowed_commands=commands(grant.allowed_commands, "allowedCommands"),
            blocked_commands=commands(grant.blocked_commands, "blockedCommands"),
            approval_commands=asked(grant.approval_commands),
            domains=domains,
            tool_names=frozenset(grant.allowed_tool_names) if grant.allowed_tool_names is not None else None,
            rule=rule,
        )

    # ------------------------------------------------------------------ look-ups (§8.1)

    @property
    def bundle(self) -> PolicyBundle:
        return self._bundle

    @property
    def os_family(self) -> OsFamily:
        return self._os

    @property
    def redactor(self) -> Redactor:
        """Redaction of outbound prompts as the bundle configures it (§8.7)."""
        return self._redactor

    @property
    def granted(self) -> frozenset[Capability]:
        """Granted capabilities: the tools offered to the model are those whose capability is here."""
        return frozenset(self._grants)

    def grant(self, capability: Capability) -> CapabilityGrant | None:
        entry = self._grants.get(capability)
        return entry.grant if entry else None

    def approval_rule(self, rule_id: str) -> ApprovalRule | None:
        return self._rules.get(rule_id)

    def is_expired(self, now: datetime) -> bool:
        """§8.6: checked before every LLM call and every tool call. A revoked policy counts as expired."""
        _require_aware(now)
        return self._revoked is not None or self._bundle.expires_at <= now

    @property
    def revocation(self) -> str | None:
        """Why the organisation revoked this enforcer's policy; None while it stands."""
        return self._revoked

    def revoked(self, reason: str) -> PolicyEnforcer:
        """This enforcer with its policy revoked: every check from now on is :class:`PolicyExpired` with
        ``reason`` (the session pauses until a valid bundle is in force). ``self`` is left as it is."""
        twin = copy.copy(self)
        twin._revoked = reason
        return twin

    def lapsed(self) -> PolicyExpired:
        """What a check answers once :meth:`is_expired` holds: the expiry, or the revocation."""
        return PolicyExpired(self._bundle.expires_at, revoked_reason=self._revoked)

    # ------------------------------------------------------------------ checks

    def check_llm_call(
        self, model: str, *, now: datetime, budget: SessionBudget | None = None, estimated_tokens: int = 0
    ) -> LlmCheckOutcome:
        """§8.7 and §6.5: ``LLM.Call`` granted, policy not expired, model allowed, budget not passed."""
        if self.is_expired(now):
            return self.lapsed()
        if Capability.LLM_CALL not in self._grants:
            return Denied("Capability not granted: LLM.Call")
        if not self._bundle.llm_policy.allows_model(model):
            return Denied(f"Model not allowed by the policy: {model}")
        if budget is not None and not budget.allows(estimated_tokens):
            return Denied(
                f"The session's token budget would be exceeded: {budget.used:,} tokens used, about"
                f" {estimated_tokens:,} more needed, {budget.limit:,} allowed.",
                ErrorCode.LLM_BUDGET_EXCEEDED,
            )
        return Allowed(RiskLevel.LOW)

    def check(
        self,
        call: ToolCallFacts,
        capability: Capability,
        *,
        now: datetime,
        approval_mode: ApprovalMode,
        allow_network: bool = True,
    ) -> CheckOutcome:
        """§8.2 for one tool call. ``allow_network`` is the task's ``allowNetwork`` option."""
        if self.is_expired(now):
            return self.lapsed()
        if capability is Capability.LLM_CALL:
            return Denied("LLM.Call is not a tool capability")
        entry = self._grants.get(capability)
        if entry is None:
            return Denied(f"Capability not granted: {capability.value}")
        scope = _Scope(risk=_DEFAULT_RISK[capability])
        if capability in _FILE_CAPABILITIES:
            denial = self._check_path(entry, capability, call, scope)
        elif capability is Capability.SHELL_EXEC:
            denial = self._check_command(entry, call, scope)
        elif capability is Capability.NETWORK_HTTP:
            denial = (
                Denied("Network access is turned off for this task.")
                if not allow_network
                else self._check_url(entry, call, scope)
            )
        elif capability is Capability.MCP_INVOKE:
            denial = self._check_mcp_tool(entry, call, scope)
        elif capability is Capability.BACKEND_TOOL_INVOKE:
            denial = self._check_remote_tool(entry, call, scope)
        elif capability is Capability.WORKSPACE_UPLOAD:
            denial = self._check_upload_call(entry, call, scope)
        else:
            denial = None
        if denial is not None:
            return denial

        reasons = list(scope.reasons)
        if entry.grant.requires_approval:
            reasons.insert(0, ApprovalReason.BUNDLE_REQUIRES)
        if approval_mode is ApprovalMode.ON_RISKY_ACTIONS and scope.risk is RiskLevel.HIGH:
            reasons.append(ApprovalReason.RISKY_ACTION)
        if approval_mode is ApprovalMode.ALWAYS and not (
            # An upload of a file outside the project folders reads it: asked, as its ReadFile would be.
            (capability is Capability.WORKSPACE_UPLOAD and (scope.path is None or scope.inside_workspace))
            or (capability is Capability.FILE_READ and scope.inside_workspace)
        ):
            reasons.append(ApprovalReason.ALWAYS_MODE)
        if not reasons:
            return Allowed(scope.risk)
        return self._approval(entry, capability, call, scope, tuple(dict.fromkeys(reasons)))

    # ------------------------------------------------------------------ scope checks

    def _workspace_rules(self, roots: tuple[str, ...]) -> PathRules:
        # The roots are the same for every call of a session: compile them once (a pure memo).
        rules = self._roots.get(roots)
        if rules is None:
            if len(self._roots) > 8:
                self._roots.clear()
            rules = self._roots[roots] = PathRules(roots, self._os, blocked=False)
        return rules

    def _check_path(
        self, entry: _Grant, capability: Capability, call: ToolCallFacts, scope: _Scope
    ) -> Denied | None:
        path = call.resolved_path
        if not path:
            return Denied("The file path was not resolved before the policy check.")
        scope.path = path
        keys: dict[bool, str] = {}

        def key(rules: PathRules) -> str:
            found = keys.get(rules.folds)
            if found is None:
                found = keys[rules.folds] = rules.key(path)
            return found

        try:
            if (
                entry.blocked_paths is not None
                and entry.blocked_paths.match(key(entry.blocked_paths)) is not None
            ):
                return Denied(f"Path is blocked: {path}")
            if (
                entry.allowed_paths is not None
                and entry.allowed_paths.match(key(entry.allowed_paths)) is None
            ):
                return Denied(f"Path not in allowed paths: {path}")
            if call.workspace_roots:
                roots = self._workspace_rules(call.workspace_roots)
                scope.inside_workspace = roots.match(key(roots)) is not None
        except PathError as exc:
            return Denied(f"The path cannot be checked: {exc}.")
        limit = entry.grant.max_file_size_bytes
        if limit is not None:
            size = call.file_size
            if capability is Capability.FILE_WRITE:
                content = call.arguments.get("content")
                size = len(content.encode("utf-8", "surrogatepass")) if isinstance(content, str) else None
            if size is not None and size > limit:
                return Denied(
                    f"File exceeds the size limit of {limit:,} bytes: {path}", ErrorCode.FILE_TOO_LARGE
                )
        if capability is Capability.FILE_WRITE and not scope.inside_workspace:
            scope.risk = RiskLevel.HIGH
            scope.notes.append("The file is outside the project folders.")
        return None

    def _check_command(self, entry: _Grant, call: ToolCallFacts, scope: _Scope) -> Denied | None:
        command = call.arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return Denied("The command is missing or empty.", ErrorCode.INVALID_REQUEST)
        scope.command = command
        cwd = call.arguments.get("cwd")
        scope.cwd = cwd if isinstance(cwd, str) else None
        allowed, blocked = entry.allowed_commands, entry.blocked_commands
        if allowed is None and blocked is None and entry.approval_commands is None:
            scope.risk = RiskLevel.HIGH  # §8.5: any command is "not in allowedCommands"
            return None
        analysis = analyse_command(command, self._os)
        implicit = IMPLICIT_COMMANDS[self._windows]
        for program in analysis.programs:
            if blocked is not None and (program if self._windows else _fold(program)) in blocked:
                return Denied(f"Command is blocked: {program}")
        if allowed is not None:
            for program in analysis.programs:
                if program not in allowed and program not in implicit:
                    return Denied(f"Command not in allowed commands: {program}")
        if entry.approval_commands is not None:
            asked = self._asked_program(entry.approval_commands, analysis)
            if asked is not None:
                scope.reasons.append(ApprovalReason.BUNDLE_REQUIRES)
                scope.notes.append(f"The policy asks before every {asked} command.")
                scope.risk = RiskLevel.HIGH
        if analysis.problems:
            problem = analysis.problems[0]
            if entry.grant.approval_rule_id is None:
                return Denied(
                    f"The command cannot be checked against the policy's command lists: it {problem}."
                )
            scope.reasons.append(ApprovalReason.UNVERIFIABLE_COMMAND)
            scope.notes.extend(f"The command {reason}." for reason in analysis.problems)
            scope.risk = RiskLevel.HIGH
        elif allowed is None:
            scope.risk = RiskLevel.HIGH
        return None

    def _asked_program(
        self, asked: Mapping[str, tuple[tuple[str, ...], ...]], analysis: CommandAnalysis
    ) -> str | None:
        """The first ``approvalCommands`` entry a program of the line falls under, as written."""
        for call in analysis.calls:
            for words in asked.get(call.name if self._windows else _fold(call.name), ()):
                arguments = call.words[1:]
                # Arguments computed or added when it runs could be the listed words: ask.
                unknown = call.extended or any(not word.literal for word in arguments)
                texts = {word.text for word in arguments}
                if unknown or all(word in texts for word in words):
                    return " ".join((call.name, *words))
        return None

    def _check_mcp_tool(self, entry: _Grant, call: ToolCallFacts, scope: _Scope) -> Denied | None:
        """Seed 003 §9.4: only allowlisted MCP tools run (the tool runtime registers no others, and this
        check stands behind it); an approval rule listing the tool asks in every approval mode."""
        parts = split_tool_name(call.tool_name)
        if parts is None:
            return Denied(f"Not an MCP tool name: {call.tool_name}")
        patterns = entry.grant.allowed_tool_names
        if not patterns or not any(tool_pattern_matches(pattern, call.tool_name) for pattern in patterns):
            return Denied(f"MCP tool not allowed by the policy: {call.tool_name}")
        scope.mcp = parts
        if call.destructive:
            scope.risk = RiskLevel.HIGH
            scope.notes.append("The server marks this tool as one that may destroy or overwrite data.")
        rule = self.mcp_approval_rule(call.tool_name)
        if rule is not None:
            scope.rule = rule
            scope.reasons.append(ApprovalReason.BUNDLE_REQUIRES)
        return None

    def mcp_approval_rule(self, qualified_tool_name: str) -> ApprovalRule | None:
        """The first approval rule whose ``toolNames`` covers this MCP tool (contracts.mcp)."""
        for rule in self._bundle.approval_rules:
            if any(tool_pattern_matches(pattern, qualified_tool_name) for pattern in rule.tool_names or ()):
                return rule
        return None

    def _check_remote_tool(self, entry: _Grant, call: ToolCallFacts, scope: _Scope) -> Denied | None:
        """Seed 000 §7.6 step 1: the tool is on the grant's allowlist (no list: every tool the Backend
        Tool Service offers, as the service itself reads it); a rule listing it asks in every mode."""
        if entry.tool_names is not None and call.tool_name not in entry.tool_names:
            return Denied(f"Remote tool not allowed: {call.tool_name}")
        scope.remote = True
        rule = self.remote_approval_rule(call.tool_name)
        if rule is not None:
            scope.rule = rule
            scope.reasons.append(ApprovalReason.BUNDLE_REQUIRES)
        return None

    def remote_approval_rule(self, tool_name: str) -> ApprovalRule | None:
        """The first approval rule whose ``toolNames`` lists this remote tool by name."""
        for rule in self._bundle.approval_rules:
            if tool_name in (rule.tool_names or ()):
                return rule
        return None

    def _check_upload_call(self, entry: _Grant, call: ToolCallFacts, scope: _Scope) -> Denied | None:
        """UploadArtifact: the file is read as ReadFile would read it, then sent within the upload
        grant's size limit."""
        if call.resolved_path is None:
            return None  # nothing read from the disk: only the grant (and its size, below) applies
        read = self._grants.get(Capability.FILE_READ)
        if read is None:
            return Denied("Capability not granted: File.Read (the file to upload must be read)")
        denial = self._check_path(read, Capability.FILE_READ, call, scope)
        if denial is not None:
            return denial
        if read.grant.requires_approval:
            scope.reasons.append(ApprovalReason.BUNDLE_REQUIRES)
            scope.notes.append("The policy asks before the agent reads a file.")
        limit = entry.grant.max_file_size_bytes
        if limit is not None and call.file_size is not None and call.file_size > limit:
            return _too_large_to_upload(call.file_size, limit, scope.path or call.tool_name)
        return None

    def check_upload(self, size_bytes: int) -> Allowed | Denied:
        """The runtime's own uploads — tool artifacts, the session history (seed 000 §7.5, §5.5): the
        grant and its ``maxFileSizeBytes``. Never an approval: they are the record of actions the user
        already allowed, made between steps with nobody to ask (the model's UploadArtifact asks through
        ``check``). Not the bundle's expiry either, which stops actions (§8.6), not the record of them."""
        entry = self._grants.get(Capability.WORKSPACE_UPLOAD)
        if entry is None:
            return Denied("Capability not granted: Workspace.Upload")
        limit = entry.grant.max_file_size_bytes
        if limit is not None and size_bytes > limit:
            return _too_large_to_upload(size_bytes, limit, None)
        return Allowed(_DEFAULT_RISK[Capability.WORKSPACE_UPLOAD])

    def _check_url(self, entry: _Grant, call: ToolCallFacts, scope: _Scope) -> Denied | None:
        url = call.arguments.get("url")
        if not isinstance(url, str) or not url:
            return Denied("The URL is missing.", ErrorCode.INVALID_REQUEST)
        method = call.arguments.get("method")
        scope.url = url
        scope.method = method.upper() if isinstance(method, str) else "GET"
        try:
            host = parse_url_host(url)
        except UrlRejected as exc:
            return Denied(f"URL not allowed: {exc}.")
        if entry.domains is None:
            scope.risk = RiskLevel.HIGH  # §8.5: no list, so the domain is not a recognised one
            return None
        if entry.domains.match(host) is None:
            return Denied(f"Domain not allowed: {host.name}")
        return None

    # ------------------------------------------------------------------ approval (§8.5, §10.1)

    def _approval(
        self,
        entry: _Grant,
        capability: Capability,
        call: ToolCallFacts,
        scope: _Scope,
        reasons: tuple[ApprovalReason, ...],
    ) -> ApprovalRequired:
        title, description = _DEFAULT_TITLES[capability]
        risk = scope.risk
        # A rule naming this very tool (MCP toolNames) says more than the grant's general one.
        rule = scope.rule or entry.rule
        if rule is not None:
            title, description = rule.title, rule.description or description
            if rule.risk_level is not None:  # raises the call's risk level, never lowers it
                risk = max(risk, rule.risk_level, key=_RISKS.index)
        mcp = scope.mcp
        shown_arguments = mcp is not None or scope.remote
        return ApprovalRequired(
            rule_id=rule.approval_rule_id if rule is not None else entry.grant.approval_rule_id,
            risk_level=risk,
            title=title,
            description=description,
            action_summary=_summary(capability, call, scope),
            details=ApprovalDetails(
                tool_name=call.tool_name,
                command=scope.command,
                cwd=scope.cwd,
                path=scope.path,
                url=scope.url,
                method=scope.method,
                mcp_server=mcp[0] if mcp else None,
                mcp_tool=mcp[1] if mcp else None,
                arguments=dict(call.arguments) if shown_arguments else None,
            ),
            reasons=reasons,
            notes=tuple(scope.notes),
        )


@dataclass(slots=True)
class _Scope:
    """What the scope checks learnt about a call, for the risk level and the approval request."""

    risk: RiskLevel
    reasons: list[ApprovalReason] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    inside_workspace: bool = False
    path: str | None = None
    command: str | None = None
    cwd: str | None = None
    url: str | None = None
    method: str | None = None
    mcp: tuple[str, str] | None = None
    """An MCP tool's (server, tool)."""
    rule: ApprovalRule | None = None
    """The approval rule that names this very call's tool, when one does."""
    remote: bool = False
    """A remote tool: the user sees the arguments the Backend Tool Service would receive."""


def _too_large_to_upload(size: int, limit: int, what: str | None) -> Denied:
    subject = f" ({what})" if what else ""
    return Denied(
        f"Upload exceeds the policy's size limit of {limit:,} bytes: {size:,} bytes{subject}",
        ErrorCode.FILE_TOO_LARGE,
    )


def _summary(capability: Capability, call: ToolCallFacts, scope: _Scope) -> str:
    if scope.command is not None:
        return f"Run: {scope.command}"
    if scope.remote:
        # Not ``details.url``: that would read as a grant of the host, and a remote tool's grant is the
        # tool (or this exact call); the arguments are shown whole beside it.
        url = call.arguments.get("url")
        return f"Use remote tool: {call.tool_name}" + (f" on {url}" if isinstance(url, str) and url else "")
    if scope.url is not None:
        return f"{scope.method} {scope.url}"
    if scope.path is not None:
        verb = {
            Capability.FILE_READ: "Read",
            Capability.FILE_WRITE: "Write",
            Capability.FILE_DELETE: "Delete",
            Capability.WORKSPACE_UPLOAD: "Upload",
        }
        return f"{verb.get(capability, 'Use')}: {scope.path}"
    if scope.mcp is not None:
        return f"Use {scope.mcp[1]} of the MCP server {scope.mcp[0]}"
    return f"{call.tool_name}"


def _require_aware(now: datetime) -> None:
    if now.tzinfo is None:
        raise ValueError("now must be a timezone-aware datetime")
