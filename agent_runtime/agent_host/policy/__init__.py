"""The Local Policy Enforcer (seed 000 §8; seed 001 §5): pure checks of tool calls and LLM calls.

No I/O and no clock: ``import-linter`` keeps this package from importing anything that does either
(pyproject ``policy-is-pure``). Paths arrive resolved, ``now`` arrives as an argument, the OS family
is a constructor argument.
"""

from __future__ import annotations

from agent_runtime.agent_host.policy.commands import CommandAnalysis, analyse_command
from agent_runtime.agent_host.policy.domains import Host, UrlRejected, parse_url_host
from agent_runtime.agent_host.policy.enforcer import (
    IMPLICIT_COMMANDS,
    PolicyEnforcer,
    SessionBudget,
    ToolCallFacts,
)
from agent_runtime.agent_host.policy.errors import PolicyBundleInvalid, PolicyError, PolicyExpiredError
from agent_runtime.agent_host.policy.outcomes import (
    Allowed,
    ApprovalReason,
    ApprovalRequired,
    CheckOutcome,
    Denied,
    LlmCheckOutcome,
    PolicyExpired,
)
from agent_runtime.agent_host.policy.redaction import BUILTIN_KINDS, RedactionResult, Redactor, redact

__all__ = [
    "BUILTIN_KINDS",
    "IMPLICIT_COMMANDS",
    "Allowed",
    "ApprovalReason",
    "ApprovalRequired",
    "CheckOutcome",
    "CommandAnalysis",
    "Denied",
    "Host",
    "LlmCheckOutcome",
    "PolicyBundleInvalid",
    "PolicyEnforcer",
    "PolicyError",
    "PolicyExpired",
    "PolicyExpiredError",
    "RedactionResult",
    "Redactor",
    "SessionBudget",
    "ToolCallFacts",
    "UrlRejected",
    "analyse_command",
    "parse_url_host",
    "redact",
]
