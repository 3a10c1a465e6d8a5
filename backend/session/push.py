"""What a running session must be told, and telling it: the server side of the Session Service's push
(wire: :mod:`contracts.rest.push`).

Several backend processes may serve the tenant (on AWS), and the administrator's command runs in none
of them: it changes the tenant's policy state in the shared config directory or the session record
in the shared store. So nothing is sent from one process to another; each connection's own loop
*polls* what it needs every :attr:`PushSettings.poll_s` (1 s by default):

* the tenant's policy standing — one ``stat`` of its state file when nothing changed — against the
  version the session's bundle was issued under (``tenantPolicyVersion`` of its record):
  revoked → :class:`~contracts.rest.push.PolicyRevoked`; newer → a bundle of the new policy, issued and
  recorded as a resume does, in :class:`~contracts.rest.push.PolicyChanged`;
* the session record, every :attr:`PushSettings.record_every` polls (one store read: 2 s by default,
  so a thousand connected sessions cost 500 reads a second): stopped by an administrator →
  :class:`~contracts.rest.push.SessionStop` and the connection closes; ended otherwise → it closes.

So a change reaches a connected session within about one interval (two for a stop), whichever process
serves it, and a runtime that polls ``GET /sessions/{id}/policy-status`` instead learns the same facts
from :meth:`SessionPush.status` (the runtime's own interval then adds to it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from backend.common.auth import Principal
from backend.common.errors import BackendError, session_not_found
from backend.common.runner import Runner
from backend.session.ports import PolicyStanding, PolicyStatusReader
from backend.session.records import TERMINAL, SessionRecord
from backend.session.repository import SessionRepository
from backend.session.service import SessionService
from contracts._base import WireModel
from contracts.rest.push import (
    PolicyChanged,
    PolicyRevoked,
    PushHeartbeat,
    PushHello,
    SessionPushStatus,
    SessionStop,
)
from contracts.rest.sessions import ResumeSessionRequest

__all__ = ["PushSettings", "SessionPush"]

logger = logging.getLogger(__name__)

Send = Callable[[WireModel], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class PushSettings:
    poll_s: float = 1.0
    """How often a connection reads its tenant's policy standing."""
    record_every: int = 2
    """Every how many polls it reads the session record (for an administrator's stop)."""
    heartbeat_s: float = 15.0
    """A heartbeat goes out after this long without another message."""
    client_poll_s: float = 3.0
    """What ``policy-status`` suggests to a polling runtime: a change then reaches it within about
    this long (one GET per session every 3 s, only where WebSockets do not get through)."""


class SessionPush:
    def __init__(
        self,
        sessions: SessionService,
        repository: SessionRepository,
        status: PolicyStatusReader,
        runner: Runner,
        settings: PushSettings | None = None,
    ) -> None:
        self._sessions = sessions
        self._repository = repository
        self._status = status
        self._runner = runner
        self.settings = settings or PushSettings()

    # ------------------------------------------------------------------ polling (GET …/policy-status)

    def status(self, principal: Principal, session_id: str) -> SessionPushStatus:
        record = self._owned(principal, session_id)
        standing = self._status.standing(principal.tenant_id)
        return SessionPushStatus(
            session_id=session_id,
            session_status=record.status,
            policy_version=max(standing.version, 0),
            held_policy_version=record.tenant_policy_version,
            policy_changed=not standing.revoked and standing.version != record.tenant_policy_version,
            policy_revoked=standing.revoked,
            revocation_reason=standing.reason if standing.revoked else None,
            stopped=record.stopped_by is not None,
            stop_reason=record.end_reason if record.stopped_by is not None else None,
            poll_seconds=self.settings.client_poll_s,
        )

    # ------------------------------------------------------------------ one connection

    async def owned(self, principal: Principal, session_id: str) -> SessionRecord:
        """The caller's session, or ``SESSION_NOT_FOUND`` (another tenant's or user's alike)."""
        return await self._runner(self._owned, principal, session_id)

    async def serve(self, principal: Principal, record: SessionRecord, send: Send) -> None:
        """Tell one connection what changes until the session ends or was stopped (then return; the
        caller closes the connection). ``send`` raising ends it too (the client went away)."""
        settings = self.settings
        session_id = record.session_id
        standing = await self._standing(principal.tenant_id)
        await send(
            PushHello(
                session_id=session_id,
                policy_version=max(standing.version, 0),
                heartbeat_seconds=settings.heartbeat_s,
            )
        )
        told_version, told_revoked = record.tenant_policy_version, False
        last_sent = time.monotonic()
        polls = 0
        while True:
            if polls:
                await asyncio.sleep(settings.poll_s)
            polls += 1
            if polls % settings.record_every == 0:
                current = await self._runner(self._repository.get, principal.tenant_id, session_id)
                if current is None or current.status in TERMINAL:
                    if current is not None and current.stopped_by is not None:
                        await send(SessionStop(session_id=session_id, reason=current.end_reason))
                    return
            standing = await self._standing(principal.tenant_id)
            message: WireModel | None = None
            if standing.revoked:
                if not told_revoked or standing.version != told_version:
                    message = PolicyRevoked(
                        session_id=session_id, policy_version=max(standing.version, 0), reason=standing.reason
                    )
                    told_version, told_revoked = standing.version, True
            elif told_revoked or standing.version != told_version:
                message = await self._changed(principal, session_id, standing)
                told_version, told_revoked = standing.version, False
            if message is None and time.monotonic() - last_sent >= settings.heartbeat_s:
                message = PushHeartbeat()
            if message is not None:
                await send(message)
                last_sent = time.monotonic()

    async def _changed(
        self, principal: Principal, session_id: str, standing: PolicyStanding
    ) -> PolicyChanged:
        """A bundle of the new policy for the session, recorded as a resume records it (the session's
        policy version and expiry move on); without one when it cannot be issued now — the runtime then
        asks for it itself and hears the reason."""
        try:
            held = await self._runner(self._repository.get, principal.tenant_id, session_id)
            resumed = await self._runner(
                self._sessions.resume,
                principal,
                session_id,
                ResumeSessionRequest(policy_bundle_version=held.policy_bundle_version if held else None),
            )
        except BackendError as exc:
            logger.info("no bundle pushed to %s: %s", session_id, exc.shape.message)
            return PolicyChanged(session_id=session_id, policy_version=max(standing.version, 0))
        return PolicyChanged(
            session_id=session_id,
            policy_version=max(standing.version, 0),
            policy_bundle=resumed.policy_bundle,
            feature_flags=resumed.feature_flags,
        )

    async def _standing(self, tenant_id: str) -> PolicyStanding:
        return await self._runner(self._status.standing, tenant_id)

    def _owned(self, principal: Principal, session_id: str) -> SessionRecord:
        record = self._repository.get(principal.tenant_id, session_id)
        if record is None or record.user_id != principal.user_id:
            raise session_not_found(session_id)
        return record
