"""What the runtime and the desktop send the Audit and Telemetry services (seed 001 §6.3, Phase 3):
the feature flags that switch them on, and the payloads of the event types that exist only in the
envelope (never sent to the desktop as a ``SessionEvent``).

Feature flags
-------------
The Session Service answers ``CreateSession`` and ``ResumeSession`` with the tenant's
``featureFlags`` beside the policy bundle (``contracts.rest.sessions``); the runtime hands them on to
the desktop (``CreateSessionResult``, ``ResumeSessionResult``). A flag is on only when it is ``true``:
one that is absent or ``false`` is off, so a backend that does not advertise a service is never sent
to. Each flag applies to one session, from the answer that carried it:

* ``auditService`` — on: the runtime posts every security-relevant fact of the session to
  ``POST /audit/events`` (policy decisions, approvals, tool executions, policy load/expiry/revocation,
  the session's lifecycle), and the desktop what only it sees (approval shown, decided, timed out;
  runtime update installed or rolled back). Off: none of these envelopes is produced, spooled or sent.
* ``telemetryService`` — on: the runtime posts its operational measures to ``POST /telemetry/events``
  (LLM latency, time to first token, tokens by kind and retries; tool durations; step overhead; its
  start time). Off: none is produced, spooled or sent — and the tenant's ``tokensPerDay`` quota then
  learns nothing from this session's calls.
* ``approvalService`` — on: approval decisions are also recorded with ``POST /approvals`` (seed 000
  §10.4).

Envelope-only event types
-------------------------
``policy_decision`` (audit: one capability check and its outcome), ``policy_loaded`` (audit),
``runtime_started`` (telemetry), and from the desktop ``approval_shown``,
``update_installed`` and ``update_rolled_back`` (audit). Their payload models are below; the other
types the services receive are ``SessionEvent`` types, with the payload of that type
(:data:`contracts.events.PAYLOADS`) — for audit, without the bulky or private fields (a tool's output,
a task's prompt, a proposed diff).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from pydantic import Field

from contracts._base import UtcDatetime, WireModel
from contracts.enums import Capability, RiskLevel
from contracts.errors import ErrorCode

__all__ = [
    "ApprovalShownPayload",
    "FeatureFlag",
    "PolicyDecision",
    "PolicyDecisionPayload",
    "PolicyLoadedPayload",
    "RuntimeStartedPayload",
    "UpdateInstalledPayload",
    "UpdateRolledBackPayload",
    "flag_enabled",
]


class FeatureFlag(StrEnum):
    """The ``featureFlags`` the clients act on (see the module docstring)."""

    AUDIT_SERVICE = "auditService"
    TELEMETRY_SERVICE = "telemetryService"
    APPROVAL_SERVICE = "approvalService"


def flag_enabled(flags: Mapping[str, object] | None, flag: FeatureFlag) -> bool:
    """Whether ``flag`` is on in a session's ``featureFlags``: only an explicit ``true`` is."""
    return flags is not None and flags.get(flag.value) is True


class PolicyDecision(StrEnum):
    ALLOWED = "allowed"
    DENIED = "denied"
    APPROVAL_REQUIRED = "approval_required"


class PolicyDecisionPayload(WireModel):
    """One check of the Local Policy Enforcer (seed 000 §8.2) and its outcome."""

    capability: Capability
    decision: PolicyDecision
    tool_name: str | None = None
    tool_call_id: str | None = None
    target: str | None = None
    """The normalised target the check was made on: the resolved path, the command line, the URL's
    host, the MCP tool (what a session approval keys on)."""
    rule: str | None = None
    """``approval_required``: the bundle's ``approvalRuleId`` that asks (absent: built-in texts)."""
    reasons: list[str] | None = None
    """``approval_required``: why (``bundle_requires``, ``risky_action``, ``always_mode``…)."""
    risk_level: RiskLevel | None = None
    reason: str | None = None
    """``denied``: the enforcer's reason, e.g. ``Path is blocked: /repo/.git/config``."""
    code: ErrorCode | None = None
    """``denied``: the error the call ended with (``CAPABILITY_DENIED``, ``LLM_BUDGET_EXCEEDED``…)."""
    policy_version: str | None = None
    redirect: bool | None = None
    """True for a redirect hop of an HTTP request, checked like a call of its own."""


class PolicyLoadedPayload(WireModel):
    """A verified bundle the session now enforces."""

    policy_version: str = Field(min_length=1)
    expires_at: UtcDatetime
    source: str = Field(min_length=1)
    """``created`` (CreateSession), ``recovered`` (a new process resumed the session), ``refreshed``
    (resumed after a pause) or ``pushed`` (swapped in while the session ran)."""
    capabilities: list[Capability]
    feature_flags: dict[str, bool] = Field(default_factory=dict)


class RuntimeStartedPayload(WireModel):
    """How long the runtime process took to serve (telemetry, once per process)."""

    startup_ms: float = Field(ge=0)
    """From the program's entry to its JSON-RPC handlers loaded (the interpreter's own start before
    the program runs is not included)."""
    runtime_version: str = Field(min_length=1)
    os_family: str | None = None


class ApprovalShownPayload(WireModel):
    """The desktop put an approval request in front of the user."""

    approval_id: str = Field(min_length=1)
    risk_level: RiskLevel | None = None
    title: str | None = None


class UpdateInstalledPayload(WireModel):
    """A new agent runtime was installed and is active for sessions started from now on."""

    version: str = Field(min_length=1)
    previous_version: str | None = None


class UpdateRolledBackPayload(WireModel):
    """A runtime was taken out of service (revoked by its publisher, or crashing at start)."""

    from_version: str = Field(min_length=1)
    to_version: str | None = None
    reason: str = Field(min_length=1)
