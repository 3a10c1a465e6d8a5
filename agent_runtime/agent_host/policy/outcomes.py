"""What a policy check returns (seed 000 §8.2): a small sum type, never an exception.

``Allowed | Denied | ApprovalRequired | PolicyExpired`` for tool calls; ``Allowed | Denied |
PolicyExpired`` for the LLM pre-check. Each carries what the loop needs next: the reason and error
code to put in a denied ``ToolResult``, the approval rule, risk level and texts to build an
``ApprovalRequest`` from, or the expiry to report in a ``policy_expired`` event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from contracts.approvals import ApprovalDetails
from contracts.enums import RiskLevel
from contracts.errors import ErrorCode, ErrorShape

__all__ = [
    "Allowed",
    "ApprovalReason",
    "ApprovalRequired",
    "CheckOutcome",
    "Denied",
    "LlmCheckOutcome",
    "PolicyExpired",
]


class ApprovalReason(StrEnum):
    """Why a call needs the user's approval; an outcome may carry several."""

    BUNDLE_REQUIRES = "bundle_requires"
    """The capability's grant says ``requiresApproval``: the organisation's floor."""
    UNVERIFIABLE_COMMAND = "unverifiable_command"
    """The command line could not be analysed against the command lists; the grant allows asking."""
    RISKY_ACTION = "risky_action"
    """A high-risk action (seed 000 §8.5) under the ``on_risky_actions`` approval mode."""
    ALWAYS_MODE = "always_mode"
    """The task's approval mode is ``always``."""


@dataclass(frozen=True, slots=True)
class Allowed:
    risk_level: RiskLevel = RiskLevel.LOW


@dataclass(frozen=True, slots=True)
class Denied:
    reason: str
    code: ErrorCode = ErrorCode.CAPABILITY_DENIED

    def to_error(self) -> ErrorShape:
        return ErrorShape(code=self.code, message=self.reason, retryable=False)


@dataclass(frozen=True, slots=True)
class ApprovalRequired:
    rule_id: str | None
    """The bundle's ``approvalRuleId``; None when the grant has none and built-in texts are used."""
    risk_level: RiskLevel
    title: str
    description: str
    action_summary: str
    """One line for the approval dialog, e.g. ``Run: pytest tests/ --verbose``."""
    details: ApprovalDetails
    reasons: tuple[ApprovalReason, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())
    """Plain-language facts the user should weigh, e.g. why the command could not be verified."""


@dataclass(frozen=True, slots=True)
class PolicyExpired:
    """The bundle can no longer be acted on: it expired (§8.6), or the organisation revoked the policy
    it carries (``revoked_reason``, told by the Session Service's push) — the session pauses either way
    until a valid bundle is in force."""

    expires_at: datetime
    code: ErrorCode = ErrorCode.POLICY_EXPIRED
    revoked_reason: str | None = None

    @property
    def revoked(self) -> bool:
        return self.revoked_reason is not None

    @property
    def reason(self) -> str:
        if self.revoked_reason is not None:
            return (
                f"The organisation's policy was revoked by an administrator ({self.revoked_reason}); the"
                " session is paused until a valid policy is in force."
            )
        return (
            f"The policy bundle expired at {self.expires_at.isoformat()}; resume the session to refresh it."
        )

    def to_error(self) -> ErrorShape:
        if self.revoked_reason is not None:
            return ErrorShape(
                code=self.code,
                message=self.reason,
                retryable=True,
                details={"reason": "revoked", "revocationReason": self.revoked_reason},
            )
        return ErrorShape(
            code=self.code,
            message=self.reason,
            retryable=True,
            details={"expiresAt": self.expires_at.isoformat()},
        )


CheckOutcome = Allowed | Denied | ApprovalRequired | PolicyExpired
LlmCheckOutcome = Allowed | Denied | PolicyExpired
