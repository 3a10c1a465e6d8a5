"""The Session Service's server push to a running session (seed 001 §1 Transport: "server-push
scenarios (policy revocation, remote admin stop)"; Phase 3 "policy revocation, optional server push
via WebSocket"), its polling fallback, and the administrator's remote stop.

**WebSocket** ``/sessions/{sessionId}/push`` — one connection per running session:

* Authentication: the session's bearer token in the upgrade request's ``Authorization: Bearer …``
  header, or — for a client that cannot set headers — in the first message,
  :class:`PushAuth` ``{"type": "auth", "token": "…"}``, within 10 s. Never in the URL (URLs are
  logged). A token that does not verify, or whose tenant and user do not own the session, gets one
  :class:`PushError` and the connection is closed (4401 unauthorized, 4404 no such session; the
  close codes :data:`CLOSE_UNAUTHORIZED`, :data:`CLOSE_NOT_FOUND`).
* Then the server sends :class:`PushHello` and, from then on, a :class:`PushHeartbeat` every
  ``heartbeatSeconds`` when nothing else was sent (a client that hears nothing for two heartbeats
  reconnects), and, within its poll interval of an administrator's command:

  - :class:`PolicyChanged` — the tenant's policy changed (``cowork-backend policy set``): the new
    signed bundle for this session when the server could issue it, else none (a pointer: fetch it with
    ``POST /sessions/{id}/resume``);
  - :class:`PolicyRevoked` — the policy in force was revoked: the session must not go on under it;
  - :class:`SessionStop` — an administrator stopped the session: cancel the task, end the session.
    The connection is then closed (1000).

**Polling** ``GET /sessions/{sessionId}/policy-status`` → :class:`SessionPushStatus`: the same facts
for a runtime that cannot open the WebSocket (a proxy that does not pass upgrades).

**Admin stop** ``POST /sessions/{sessionId}/stop`` (``admin`` scope; any session of the tenant) →
:class:`StopSessionRequest` → ``SessionResource`` (``SESSION_CANCELLED``, not resumable).
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field

from contracts._base import WireModel
from contracts.enums import SessionStatus
from contracts.errors import ErrorShape
from contracts.policy import PolicyBundle
from contracts.rest._fields import Text

__all__ = [
    "CLOSE_NOT_FOUND",
    "CLOSE_UNAUTHORIZED",
    "PolicyChanged",
    "PolicyRevoked",
    "PushAuth",
    "PushError",
    "PushHeartbeat",
    "PushHello",
    "PushMessage",
    "SessionPushStatus",
    "SessionStop",
    "StopSessionRequest",
]

CLOSE_UNAUTHORIZED: Final = 4401
CLOSE_NOT_FOUND: Final = 4404


class PushAuth(WireModel):
    """Client → server, first message, when the upgrade request carried no ``Authorization``."""

    type: Literal["auth"]
    token: str = Field(min_length=1, max_length=4096)


class PushHello(WireModel):
    type: Literal["hello"] = "hello"
    session_id: str
    policy_version: int = Field(ge=0)
    """The tenant's policy version now (one per administrator change)."""
    heartbeat_seconds: float = Field(gt=0)


class PushHeartbeat(WireModel):
    type: Literal["heartbeat"] = "heartbeat"


class PolicyChanged(WireModel):
    type: Literal["policy_changed"] = "policy_changed"
    session_id: str
    policy_version: int = Field(ge=0)
    policy_bundle: PolicyBundle | None = None
    """The new bundle, signed for this session; absent when the runtime must fetch it (resume)."""
    feature_flags: dict[str, bool] | None = None


class PolicyRevoked(WireModel):
    type: Literal["policy_revoked"] = "policy_revoked"
    session_id: str
    policy_version: int = Field(ge=0)
    reason: str | None = None


class SessionStop(WireModel):
    type: Literal["session_stop"] = "session_stop"
    session_id: str
    reason: str | None = None


class PushError(WireModel):
    """Why the server closes the connection (the seed's error shape)."""

    type: Literal["error"] = "error"
    error: ErrorShape


PushMessage = Annotated[
    PushHello | PushHeartbeat | PolicyChanged | PolicyRevoked | SessionStop | PushError,
    Field(discriminator="type"),
]
"""Every message the server sends."""


class SessionPushStatus(WireModel):
    """``GET /sessions/{id}/policy-status``: what the push would have said, for a polling runtime."""

    session_id: str
    session_status: SessionStatus
    policy_version: int = Field(ge=0)
    """The tenant's policy version now."""
    held_policy_version: int = Field(ge=0)
    """The version the session's current bundle was issued under."""
    policy_changed: bool
    """A newer policy than the session's exists: fetch it with ``POST /sessions/{id}/resume``."""
    policy_revoked: bool
    revocation_reason: str | None = None
    stopped: bool
    """An administrator stopped the session."""
    stop_reason: str | None = None
    poll_seconds: float = Field(gt=0)
    """How often the server suggests asking again."""


class StopSessionRequest(WireModel):
    reason: Text | None = None
