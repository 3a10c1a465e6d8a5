"""Session Service payloads: create, resume, cancel and read sessions (seed 001 §4.1, §4.4; 000 §3.2, §9.5).

* ``POST /sessions`` → :class:`CreateSessionRequest` → :class:`CreateSessionResponse`. An incompatible
  client gets HTTP 200 with ``compatibilityStatus: "incompatible"``, the per-component verdicts in
  ``compatibility`` and **no session** (``sessionId``, ``workspaceId`` and ``policyBundle`` absent):
  the runtime reports it to the desktop and does not proceed (seed 000 §3.2 step 4), and the desktop
  can offer a compatible runtime (seed 001 §11).
* ``POST /sessions/{id}/resume`` → :class:`ResumeSessionRequest` → :class:`ResumeSessionResponse`, a
  refreshed, re-signed bundle. A session that ended or is past its resume window answers
  410 ``SESSION_EXPIRED`` with ``details.reason`` (``expired``, ``cancelled``, ``completed``, ``failed``).
* ``POST /sessions/{id}/cancel`` → :class:`CancelSessionRequest` → :class:`SessionResource`
  (idempotent: a session that already ended is returned unchanged).
* ``GET /sessions/{id}`` → :class:`SessionResource`; ``GET /sessions?workspaceId=`` → :class:`SessionList`.

A tenant's quota (seed 001 Phase 4) refuses a new session — the user's ``sessionsPerUser`` active
sessions, or the day's ``tokensPerDay`` used up — and a resume (tokens) with 429 ``RATE_LIMITED``: the
message names the limit and when to try again, ``details.quota`` names the quota (what tells a client
this is not a busy server to retry at once), with ``limit``, ``used``, ``retryAfterSeconds`` and
``retryAt``, and the ``Retry-After`` header. Artifact uploads past ``storageBytes`` get the same shape
without a wait (``retryable: false``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from contracts._base import UtcDatetime, WireModel
from contracts.enums import (
    Capability,
    CompatibilityStatus,
    ExecutionEnvironment,
    SessionStatus,
    WorkspaceScope,
)
from contracts.methods import ClientInfo, WorkspaceHint
from contracts.policy import PolicyBundle
from contracts.rest._fields import Identifier, Text

__all__ = [
    "CancelSessionRequest",
    "ComponentCompatibility",
    "CreateSessionRequest",
    "CreateSessionResponse",
    "ResumeSessionRequest",
    "ResumeSessionResponse",
    "SessionList",
    "SessionResource",
]


class CreateSessionRequest(WireModel):
    """What the runtime sends when a session starts (seed 000 §3.2 step 2).

    ``workspaceHint`` present → a ``local`` workspace for its first path (reused across sessions);
    absent → a fresh ``general`` workspace (seed 004 Session Types).
    """

    client_info: ClientInfo
    supported_capabilities: list[Capability] = Field(max_length=len(Capability))
    workspace_hint: WorkspaceHint | None = None
    execution_environment: ExecutionEnvironment = ExecutionEnvironment.DESKTOP


class ComponentCompatibility(WireModel):
    """The verdict on one client component's version against the configured ranges."""

    version: str
    supported: str
    """The PEP 440 specifier the version must satisfy, e.g. ``>=0.1,<2``."""
    deprecated: str | None = None
    """Versions still served but due for an update, e.g. ``<0.5``."""
    status: CompatibilityStatus


class CreateSessionResponse(WireModel):
    """``sessionId``, ``workspaceId``, ``policyBundle`` and ``featureFlags`` (seed 001 §4.1), plus the
    compatibility verdict. When ``compatibilityStatus`` is ``incompatible`` no session was created and
    the session fields are absent."""

    compatibility_status: CompatibilityStatus
    compatibility: dict[str, ComponentCompatibility]
    """Per component: ``localAgentHostVersion`` and ``desktopAppVersion``."""
    session_id: str | None = None
    workspace_id: str | None = None
    workspace_scope: WorkspaceScope | None = None
    session_status: SessionStatus | None = None
    policy_bundle: PolicyBundle | None = None
    feature_flags: dict[str, bool] = Field(default_factory=dict)
    """``auditService``, ``telemetryService``, ``approvalService``: what each switches, and that only
    ``true`` is on, is in :mod:`contracts.observability`."""
    created_at: UtcDatetime | None = None
    expires_at: UtcDatetime | None = None

    @model_validator(mode="after")
    def _a_session_exactly_when_compatible(self) -> CreateSessionResponse:
        session_fields = (self.session_id, self.workspace_id, self.policy_bundle, self.expires_at)
        if self.compatibility_status is CompatibilityStatus.INCOMPATIBLE:
            if any(value is not None for value in session_fields):
                raise ValueError("an incompatible client gets no session")
        elif any(value is None for value in session_fields):
            raise ValueError("sessionId, workspaceId, policyBundle and expiresAt are required")
        return self


class ResumeSessionRequest(WireModel):
    """Sent on crash recovery (seed 000 §9.5) or after a ``policy_expired`` pause (seed 000 §8.6)."""

    checkpoint_cursor: Identifier | None = None
    """The step the runtime resumes after, recorded for the session's history."""
    policy_bundle_version: Identifier | None = None
    """The version of the bundle the runtime holds; ``policyChanged`` in the answer compares with it."""


class ResumeSessionResponse(WireModel):
    session_id: str
    workspace_id: str
    session_status: SessionStatus
    policy_bundle: PolicyBundle
    policy_changed: bool
    """True when the refreshed bundle's version differs from the one the runtime holds."""
    feature_flags: dict[str, bool] = Field(default_factory=dict)
    expires_at: UtcDatetime


class CancelSessionRequest(WireModel):
    """Ends a session (seed 000 §3.4 step 5). ``finalStatus`` lets a clean shutdown record
    ``SESSION_COMPLETED`` rather than ``SESSION_CANCELLED``."""

    reason: Text | None = None
    final_status: Literal["SESSION_CANCELLED", "SESSION_COMPLETED", "SESSION_FAILED"] = "SESSION_CANCELLED"


class SessionResource(WireModel):
    """A session as the Session Service keeps it (seed 004 Session)."""

    session_id: str
    workspace_id: str
    tenant_id: str
    user_id: str
    execution_environment: ExecutionEnvironment
    status: SessionStatus
    created_at: UtcDatetime
    updated_at: UtcDatetime
    expires_at: UtcDatetime
    """The current policy bundle's expiry (seed 004)."""
    resumable_until: UtcDatetime
    """After this a resume answers ``SESSION_EXPIRED``: ``expiresAt`` plus the resume grace window."""
    policy_expired: bool
    resumable: bool
    policy_bundle_version: str
    client_info: ClientInfo
    granted_capabilities: list[Capability]
    checkpoint_cursor: str | None = None
    end_reason: str | None = None
    ended_at: UtcDatetime | None = None


class SessionList(WireModel):
    sessions: list[SessionResource]
