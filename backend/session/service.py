"""Session lifecycle on the backend side (seed 004 Session; seed 000 §3.2, §3.4, §8.6, §9.5).

* **Create**: compatibility verdict → workspace (``local`` reused per project, ``general`` fresh) →
  a signed policy bundle → the session record, ``SESSION_CREATED``, ``expiresAt`` = the bundle's expiry.
* **Resume**: a refreshed, re-signed bundle and ``SESSION_RUNNING``; allowed until ``expiresAt`` plus the
  resume grace window, so a session paused by policy expiry (000 §8.6) can continue. After that, or
  once the session ended, the answer is 410 ``SESSION_EXPIRED`` with ``details.reason``.
* **Cancel**: records the end (``SESSION_CANCELLED`` or the ``finalStatus`` asked for) and the reason;
  idempotent — a session that already ended is returned as it is.
* **Stop** (remote admin stop, :mod:`backend.session.stop`): an administrator of the tenant ends any of
  its sessions; the push (:mod:`backend.session.push`) tells its runtime.

Create and resume record the tenant's policy version the bundle was issued under
(``tenantPolicyVersion``): a newer one is pushed to the running session.

Records are scoped to the caller: another tenant's or another user's session ID answers exactly like a
missing one.

Quotas (:mod:`backend.common.quotas`): a new session is refused with 429 ``RATE_LIMITED`` when the
user already has ``sessionsPerUser`` active sessions or the tenant has used today's ``tokensPerDay``;
a resume, when the tokens are used up.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from backend.common.auth import Principal
from backend.common.clock import Clock
from backend.common.errors import BackendError, session_not_found
from backend.common.ids import new_id
from backend.common.quotas import Quotas
from backend.common.settings import Settings
from backend.session.compatibility import CompatibilityChecker
from backend.session.ports import PolicyProvider, PolicyStatusReader, WorkspaceResolver
from backend.session.records import TERMINAL, SessionRecord
from backend.session.repository import SessionRepository
from backend.session.stop import stop_session
from contracts.enums import CompatibilityStatus, SessionStatus, WorkspaceScope
from contracts.errors import ErrorCode
from contracts.rest.sessions import (
    CancelSessionRequest,
    CreateSessionRequest,
    CreateSessionResponse,
    ResumeSessionRequest,
    ResumeSessionResponse,
    SessionList,
    SessionResource,
)

__all__ = ["SessionService"]

_MAX_WRITE_ATTEMPTS = 8


class SessionService:
    def __init__(
        self,
        repository: SessionRepository,
        policy: PolicyProvider,
        workspaces: WorkspaceResolver,
        compatibility: CompatibilityChecker,
        clock: Clock,
        settings: Settings,
        *,
        quotas: Quotas | None = None,
        policy_status: PolicyStatusReader | None = None,
    ) -> None:
        self._repository = repository
        self._policy_status = policy_status
        self._quotas = quotas
        self._policy = policy
        self._workspaces = workspaces
        self._compatibility = compatibility
        self._clock = clock
        self._grace = settings.resume_grace

    def create(self, principal: Principal, request: CreateSessionRequest) -> CreateSessionResponse:
        status, verdicts = self._compatibility.check(request.client_info)
        if status is CompatibilityStatus.INCOMPATIBLE:
            return CreateSessionResponse(compatibility_status=status, compatibility=verdicts)
        if self._quotas is not None:
            self._check_quotas(principal, self._quotas)
        hint = request.workspace_hint
        scope = WorkspaceScope.LOCAL if hint is not None else WorkspaceScope.GENERAL
        workspace = self._workspaces.resolve(principal, scope, hint.local_paths if hint else [])
        session_id = new_id("sess")
        supported = list(dict.fromkeys(request.supported_capabilities))
        # Read before the bundle is issued: a change in between is then pushed once more, never lost.
        policy_version = self._policy_version(principal.tenant_id)
        issued = self._policy.issue(principal, session_id, workspace.local_paths, supported)
        bundle = issued.policy_bundle
        now = self._clock.now()
        record = SessionRecord(
            session_id=session_id,
            tenant_id=principal.tenant_id,
            user_id=principal.user_id,
            workspace_id=workspace.workspace_id,
            workspace_scope=workspace.workspace_scope,
            workspace_paths=tuple(workspace.local_paths),
            execution_environment=request.execution_environment,
            status=SessionStatus.SESSION_CREATED,
            client_info=request.client_info,
            supported_capabilities=tuple(supported),
            granted_capabilities=tuple(grant.name for grant in bundle.capabilities),
            policy_bundle_version=bundle.version,
            created_at=now,
            updated_at=now,
            expires_at=bundle.expires_at,
            tenant_policy_version=policy_version,
        )
        self._repository.create(record)
        return CreateSessionResponse(
            compatibility_status=status,
            compatibility=verdicts,
            session_id=session_id,
            workspace_id=workspace.workspace_id,
            workspace_scope=workspace.workspace_scope,
            session_status=record.status,
            policy_bundle=bundle,
            feature_flags=issued.feature_flags,
            created_at=now,
            expires_at=bundle.expires_at,
        )

    def get(self, principal: Principal, session_id: str) -> SessionResource:
        return self._resource(self._owned(principal, session_id), self._clock.now())

    def workspace_of(self, principal: Principal, session_id: str) -> str | None:
        """The session's workspace if the caller owns the session (for other services' checks)."""
        found = self._repository.ownership(principal.tenant_id, session_id)
        if found is None or found.user_id != principal.user_id:
            return None
        return found.workspace_id

    def list(self, principal: Principal, workspace_id: str, limit: int) -> SessionList:
        now = self._clock.now()
        records = self._repository.list_by_workspace(principal.tenant_id, workspace_id, limit)
        mine = [self._resource(r, now) for r in records if r.user_id == principal.user_id]
        return SessionList(sessions=mine)

    def resume(
        self, principal: Principal, session_id: str, request: ResumeSessionRequest
    ) -> ResumeSessionResponse:
        for _ in range(_MAX_WRITE_ATTEMPTS):
            record = self._owned(principal, session_id)
            now = self._clock.now()
            self._check_resumable(record, now)
            if self._quotas is not None:
                self._quotas.check_tokens(principal.tenant_id)
            policy_version = self._policy_version(principal.tenant_id)
            issued = self._policy.issue(
                principal, session_id, record.workspace_paths, record.supported_capabilities
            )
            bundle = issued.policy_bundle
            held = request.policy_bundle_version or record.policy_bundle_version
            updated = dataclasses.replace(
                record,
                status=SessionStatus.SESSION_RUNNING,
                policy_bundle_version=bundle.version,
                granted_capabilities=tuple(grant.name for grant in bundle.capabilities),
                expires_at=bundle.expires_at,
                checkpoint_cursor=request.checkpoint_cursor or record.checkpoint_cursor,
                updated_at=now,
                revision=record.revision + 1,
                tenant_policy_version=policy_version,
            )
            if self._repository.replace(updated, record.revision):
                return ResumeSessionResponse(
                    session_id=session_id,
                    workspace_id=record.workspace_id,
                    session_status=updated.status,
                    policy_bundle=bundle,
                    policy_changed=held != bundle.version,
                    feature_flags=issued.feature_flags,
                    expires_at=bundle.expires_at,
                )
        raise _busy(session_id)

    def cancel(self, principal: Principal, session_id: str, request: CancelSessionRequest) -> SessionResource:
        for _ in range(_MAX_WRITE_ATTEMPTS):
            record = self._owned(principal, session_id)
            now = self._clock.now()
            if record.status in TERMINAL:
                return self._resource(record, now)
            updated = dataclasses.replace(
                record,
                status=SessionStatus(request.final_status),
                end_reason=request.reason,
                ended_at=now,
                updated_at=now,
                revision=record.revision + 1,
            )
            if self._repository.replace(updated, record.revision):
                return self._resource(updated, now)
        raise _busy(session_id)

    def stop(self, admin: Principal, session_id: str, reason: str | None) -> SessionResource:
        """Remote admin stop (:mod:`backend.session.stop`) of any session of the administrator's
        tenant; the caller checked the admin scope."""
        record = stop_session(
            self._repository,
            self._clock,
            tenant_id=admin.tenant_id,
            session_id=session_id,
            stopped_by=admin.user_id,
            reason=reason,
        )
        return self._resource(record, self._clock.now())

    def _policy_version(self, tenant_id: str) -> int:
        return 0 if self._policy_status is None else self._policy_status.standing(tenant_id).version

    def _check_quotas(self, principal: Principal, quotas: Quotas) -> None:
        quotas.check_tokens(principal.tenant_id)

        def active() -> list[datetime]:
            found = self._repository.active_for_user(
                principal.tenant_id, principal.user_id, self._clock.now()
            )
            return [record.expires_at for record in found]

        quotas.check_sessions(principal.tenant_id, active)

    def _owned(self, principal: Principal, session_id: str) -> SessionRecord:
        record = self._repository.get(principal.tenant_id, session_id)
        if record is None or record.user_id != principal.user_id:
            raise session_not_found(session_id)
        return record

    def _check_resumable(self, record: SessionRecord, now: datetime) -> None:
        if record.status in TERMINAL:
            reason = record.status.value.removeprefix("SESSION_").lower()
            raise BackendError(
                ErrorCode.SESSION_EXPIRED,
                f"The session has ended ({reason}); start a new session to continue",
                status_code=410,
                details={"sessionId": record.session_id, "reason": reason, "status": record.status.value},
            )
        if now >= record.expires_at + self._grace:
            raise BackendError(
                ErrorCode.SESSION_EXPIRED,
                "The session has expired; start a new session to continue",
                status_code=410,
                details={
                    "sessionId": record.session_id,
                    "reason": "expired",
                    "status": record.status.value,
                    "expiredAt": (record.expires_at + self._grace).isoformat(),
                },
            )

    def _resource(self, record: SessionRecord, now: datetime) -> SessionResource:
        resumable_until = record.expires_at + self._grace
        return SessionResource(
            session_id=record.session_id,
            workspace_id=record.workspace_id,
            tenant_id=record.tenant_id,
            user_id=record.user_id,
            execution_environment=record.execution_environment,
            status=record.status,
            created_at=record.created_at,
            updated_at=record.updated_at,
            expires_at=record.expires_at,
            resumable_until=resumable_until,
            policy_expired=now >= record.expires_at,
            resumable=record.status not in TERMINAL and now < resumable_until,
            policy_bundle_version=record.policy_bundle_version,
            client_info=record.client_info,
            granted_capabilities=list(record.granted_capabilities),
            checkpoint_cursor=record.checkpoint_cursor,
            end_reason=record.end_reason,
            ended_at=record.ended_at,
        )


def _busy(session_id: str) -> BackendError:
    return BackendError(
        ErrorCode.INVALID_REQUEST,
        "The session is being changed by another request; retry",
        status_code=409,
        retryable=True,
        details={"sessionId": session_id},
    )
