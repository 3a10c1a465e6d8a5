"""The policy bundle the Session Service hands the runtime (seed 000 §3.2, §8; seed 001 §5).

Capabilities travel as a list of grants, each naming its capability; the enforcer indexes them by
name (seed 000 §8.1). An absent scope list means "no constraint of that kind"; an empty
``allowedPaths`` means nothing is allowed.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from contracts._base import UtcDatetime, WireModel
from contracts.enums import Capability, RiskLevel
from contracts.mcp import MAX_MCP_SERVERS, McpServerConfig, check_tool_patterns, unique_servers
from contracts.rest.tools import is_remote_tool_name

SUPPORTED_POLICY_SCHEMA_VERSIONS = frozenset({"1.0"})


class CapabilityGrant(WireModel):
    """One granted capability and the scope it is limited to (seed 001 §5, seed 000 §8.2)."""

    name: Capability
    allowed_paths: list[str] | None = None
    blocked_paths: list[str] | None = None
    max_file_size_bytes: int | None = Field(default=None, ge=0)
    max_output_bytes: int | None = Field(default=None, ge=1)
    allowed_commands: list[str] | None = None
    blocked_commands: list[str] | None = None
    allowed_domains: list[str] | None = None
    allowed_tool_names: list[str] | None = None
    """BackendTool.Invoke: tool names; Mcp.Invoke: ``"server/tool"`` or ``"server/*"`` patterns — only
    the MCP tools matched here are registered (seed 003 §9.4, :mod:`contracts.mcp`)."""
    approval_commands: list[str] | None = None
    """Shell.Exec: programs that need the user's approval in every mode, as the grant's
    ``requiresApproval`` does for all of them — a program name, optionally followed by words that
    must appear among its arguments (``rm``, ``git push``). Saved permission rules never answer these."""
    requires_approval: bool = False
    approval_rule_id: str | None = Field(default=None, min_length=1)


class ApprovalRule(WireModel):
    """What the user is shown when a capability needs approval (seed 000 §10.1 step 2)."""

    approval_rule_id: str = Field(min_length=1)
    title: str = Field(min_length=1)
    description: str = ""
    risk_level: RiskLevel | None = None
    tool_names: list[str] | None = None
    """MCP tools (``"server/tool"`` or ``"server/*"``) and remote tools (``BackendTool.Invoke``, by their
    name: ``"WebFetch"``) that need approval under this rule in every approval mode (seed 003 §9.4:
    approval rules per MCP tool); saved permission rules never answer them. The first rule, in bundle
    order, that matches a tool is the one shown."""


class RedactionPattern(WireModel):
    """One more secret format the organisation wants scrubbed from outbound prompts (seed 000 §8.7).

    ``pattern`` is RE2 syntax (no backreferences or lookaround), so matching stays linear in the size of
    the prompt whatever the pattern; the runtime refuses a bundle whose pattern does not compile.
    Matches are replaced by ``[REDACTED:<kind>]``.
    """

    kind: str = Field(pattern=r"^[a-z][a-z0-9_]{0,47}$")
    pattern: str = Field(min_length=1, max_length=2000)


class RedactionPolicy(WireModel):
    """Redaction of outbound prompts. Absent from the bundle = the built-in patterns, switched on."""

    enabled: bool = True
    extra_patterns: list[RedactionPattern] = Field(default_factory=list, max_length=100)


ANY_MODEL = "*"
"""In ``allowedModels``: no allowlist — the runtime uses the model the user configured locally."""


class LlmPolicy(WireModel):
    """Model allowlist and token budgets (seed 000 §6.2, §6.5), and prompt redaction (§8.7)."""

    allowed_models: list[str] = Field(min_length=1)
    max_input_tokens: int = Field(ge=1)
    max_output_tokens: int = Field(ge=1)
    max_session_tokens: int = Field(ge=1)
    redaction: RedactionPolicy | None = None

    def allows_model(self, model: str) -> bool:
        return model in self.allowed_models or ANY_MODEL in self.allowed_models

    def choose_model(self, configured: str | None) -> str | None:
        """The model to call (seed 000 §6.2): the locally configured one when the policy allows it,
        else the first allowed model; ``None`` when the policy names none and nothing is configured,
        or the configured model is not allowed and the policy offers no concrete alternative."""
        if configured and self.allows_model(configured):
            return configured
        return next((model for model in self.allowed_models if model != ANY_MODEL), None)


class PolicyBundle(WireModel):
    """Everything the Local Policy Enforcer needs, valid for one session until ``expiresAt``."""

    session_id: str = Field(min_length=1)
    tenant_id: str | None = None
    user_id: str | None = None
    capabilities: list[CapabilityGrant]
    approval_rules: list[ApprovalRule] = Field(default_factory=list)
    llm_policy: LlmPolicy
    expires_at: UtcDatetime
    schema_version: str = Field(min_length=1)
    version: str = Field(min_length=1)
    signature: str | None = None
    """Ed25519 signature (base64url) over the canonical JSON of the bundle without this field; set by
    the Policy Service so the runtime can detect tampering."""
    mcp_servers: list[McpServerConfig] = Field(default_factory=list, max_length=MAX_MCP_SERVERS)
    """MCP servers the organisation provides (seed 003 §9.2); the project's ``.cowork/mcp.json`` may
    add more. Their tools are registered only as ``Mcp.Invoke``'s ``allowedToolNames`` allow."""
    allow_local_mcp_servers: bool = False
    """Whether local (stdio) MCP servers may be started; their command line still passes the command
    policy of ``Shell.Exec``."""

    @model_validator(mode="after")
    def _consistent(self) -> PolicyBundle:
        names = [grant.name for grant in self.capabilities]
        duplicates = sorted({name.value for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"capability {duplicates[0]} is granted more than once")
        rule_ids = [rule.approval_rule_id for rule in self.approval_rules]
        if len(rule_ids) != len(set(rule_ids)):
            raise ValueError("approval rule ids must be unique")
        for grant in self.capabilities:
            if grant.approval_rule_id is not None and grant.approval_rule_id not in rule_ids:
                raise ValueError(
                    f"capability {grant.name.value} names approval rule {grant.approval_rule_id!r},"
                    " which the bundle does not define"
                )
            if grant.name is Capability.MCP_INVOKE:
                check_tool_patterns(grant.allowed_tool_names, "Mcp.Invoke allowedToolNames")
        for rule in self.approval_rules:
            # A remote tool (BackendTool.Invoke) is named as it is; an MCP tool by its pattern.
            mcp_names = [name for name in rule.tool_names or () if not is_remote_tool_name(name)]
            check_tool_patterns(mcp_names, f"approval rule {rule.approval_rule_id} toolNames")
        unique_servers(self.mcp_servers)
        return self

    @model_serializer(mode="wrap")
    def _leave_out_mcp_defaults(self, handler: SerializerFunctionWrapHandler) -> Any:
        # Bundles are signed over their serialised form (contracts.signing): a bundle issued before
        # these fields existed must keep its canonical JSON, so their defaults are not written.
        data = handler(self)
        if isinstance(data, dict):
            for names, default in (
                (("mcpServers", "mcp_servers"), []),
                (("allowLocalMcpServers", "allow_local_mcp_servers"), False),
            ):
                for name in names:
                    if name in data and data[name] == default:
                        del data[name]
        return data

    def grant(self, capability: Capability) -> CapabilityGrant | None:
        return next((grant for grant in self.capabilities if grant.name is capability), None)
