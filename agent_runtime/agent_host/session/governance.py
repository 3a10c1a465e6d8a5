"""What the session does with the Session Service's push (:mod:`~agent_runtime.agent_host.services.push`):

* **Policy changed** — the new bundle (pushed, or fetched with ``POST /sessions/{id}/resume``) is
  verified like any bundle (signature, session, schema, expiry: seed 000 §3.2 step 5) and put in force
  *between steps*: at once when no task runs, else at the running task's next step boundary — never
  while a tool runs or the model answers, so one step is decided under one policy. ``policy_updated``
  says what changed. A bundle that cannot be used (it does not verify, or allows no model this runtime
  can call) is treated as a revocation: nothing goes on under a policy the organisation has replaced.
* **Policy revoked** — ``policy_revoked``; the enforcer answers every check "expired (revoked)" from
  now on, so the session pauses (seed 000 §3.3 RUNNING → PAUSED, reason ``policy_revoked``) at once
  when idle or streaming the model's answer, or as soon as the running tools finish (§4.5: tools are
  never cut off; approvals still waiting are denied). ``ResumeSession`` continues it once a valid
  policy is in force (the Session Service refuses a revoked one); ``Shutdown`` cancels it.
* **Session stop** — ``session_stop_requested``, then as a ``Shutdown`` during a task (§3.4): the task
  is cancelled at its next safe point, the history uploaded, ``session_cancelled`` with the
  administrator's reason, the Session Service told, the checkpoint removed, and the program exits.

Each runs under the host's lock, one at a time, so it never interleaves with ``ResumeSession`` or
``Shutdown``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from agent_runtime.agent_host.loop import LoopContext
from agent_runtime.agent_host.policy import PolicyEnforcer
from agent_runtime.agent_host.services.push import PushEvent
from contracts.enums import SessionStatus
from contracts.errors import CoworkError
from contracts.events import EventType
from contracts.policy import PolicyBundle
from contracts.rest.push import PolicyChanged, PolicyRevoked
from contracts.rest.sessions import ResumeSessionRequest

from .machine import TERMINAL_SESSION

if TYPE_CHECKING:
    from .host import SessionHost

__all__ = ["PolicyPush"]

logger = logging.getLogger(__name__)

STOP_REASON = "Stopped by an administrator"


class PolicyPush:
    """The push's deliveries for one :class:`~.host.SessionHost` (its ``deliver`` callback)."""

    def __init__(self, host: SessionHost) -> None:
        self._host = host

    async def deliver(self, event: PushEvent) -> None:
        host = self._host
        async with host._lock:
            ctx = host._ctx
            if ctx is None or event.session_id != ctx.session_id or ctx.machine.session in TERMINAL_SESSION:
                return
            if isinstance(event, PolicyRevoked):
                self._revoke(ctx, event.reason or "revoked by an administrator", event.policy_version)
            elif isinstance(event, PolicyChanged):
                await self._change(ctx, event)
            else:
                await self._stop(ctx, event.reason)

    # ------------------------------------------------------------------ revoked

    def _revoke(self, ctx: LoopContext, reason: str, policy_version: int | None) -> None:
        host = self._host
        if ctx.enforcer.revocation is not None:
            return  # told already (the polling fallback repeats what the WebSocket said)
        ctx.enforcer = ctx.enforcer.revoked(reason)
        loop = host._loop
        if loop is not None:
            loop.between_steps = None  # a bundle waiting for the step boundary is superseded
        ctx.emitter.emit(
            EventType.POLICY_REVOKED,
            {"reason": reason, "policyVersion": policy_version},
            task_id=self._task_id(),
        )
        logger.warning("Session %s: the organisation revoked its policy (%s)", ctx.session_id, reason)
        if ctx.machine.session is not SessionStatus.SESSION_RUNNING:
            return  # paused already: a resume now meets the revocation at the Session Service
        if host._running() and loop is not None:
            loop.lapse_policy()
            return
        # No task runs: nothing to wait for.
        ctx.machine.to_session(SessionStatus.SESSION_PAUSED)
        host._checkpoint(snapshot_event=True)
        ctx.emitter.emit(
            EventType.SESSION_PAUSED,
            {"reason": "policy_revoked", "error": ctx.enforcer.lapsed().to_error().to_wire()},
            task_id=self._task_id(),
        )

    # ------------------------------------------------------------------ changed

    async def _change(self, ctx: LoopContext, event: PolicyChanged) -> None:
        host = self._host
        bundle, flags = event.policy_bundle, event.feature_flags
        try:
            if bundle is None:
                bundle, flags = await self._fetch(ctx)
            enforcer = await host._enforcer(bundle, ctx.session_id)
        except CoworkError as exc:
            if exc.shape.details.get("reason") == "revoked":
                self._revoke(ctx, str(exc.shape.details.get("revocationReason") or "revoked"), None)
                return
            if bundle is None:
                # Not fetched (the backend cannot be reached): the next push, or a resume, brings it.
                logger.warning("Session %s: the new policy was not fetched: %s", ctx.session_id, exc)
                return
            self._revoke(ctx, f"the new policy cannot be used: {exc.shape.message}", event.policy_version)
            return
        if enforcer.bundle.llm_policy.choose_model(ctx.llm.config.model) is None:
            self._revoke(ctx, "the new policy allows no model this runtime can call", event.policy_version)
            return
        loop = host._loop
        if host._running() and loop is not None:
            loop.between_steps = lambda: self._put_in_force(ctx, enforcer, event.policy_version, flags)
            return
        await self._put_in_force(ctx, enforcer, event.policy_version, flags)
        host._checkpoint()

    async def _put_in_force(
        self,
        ctx: LoopContext,
        enforcer: PolicyEnforcer,
        policy_version: int,
        flags: Mapping[str, bool] | None,
    ) -> None:
        host = self._host
        before = ctx.enforcer.granted
        host._use_enforcer(ctx, enforcer)
        # Backend tools (seed 000 §7.6) the new bundle may grant; asked of the service, never held back.
        await host._attach_backend_tools(ctx)
        if flags is not None:
            host._flags = dict(flags)
        if ctx.observability is not None:
            ctx.observability.set_flags(host._flags)
            ctx.observability.policy_loaded(enforcer.bundle, "pushed", host._flags)
        after = enforcer.granted
        ctx.emitter.emit(
            EventType.POLICY_UPDATED,
            {
                "policyBundleVersion": enforcer.bundle.version,
                "expiresAt": enforcer.bundle.expires_at.isoformat(),
                "policyVersion": policy_version,
                "added": sorted(c.value for c in after - before),
                "removed": sorted(c.value for c in before - after),
            },
            task_id=self._task_id(),
        )
        logger.info("Session %s: policy %s in force", ctx.session_id, enforcer.bundle.version)

    async def _fetch(self, ctx: LoopContext) -> tuple[PolicyBundle, dict[str, bool]]:
        """The new bundle and feature flags, as a resume gets them (the Session Service records the
        bundle as the session's)."""
        task = self._host._task
        response = await self._host._backend_client().resume_session(
            ctx.session_id,
            ResumeSessionRequest(
                checkpoint_cursor=task.step_cursor if task else None,
                policy_bundle_version=ctx.enforcer.bundle.version,
            ),
        )
        return response.policy_bundle, dict(response.feature_flags)

    # ------------------------------------------------------------------ stopped

    async def _stop(self, ctx: LoopContext, reason: str | None) -> None:
        host = self._host
        said = reason or STOP_REASON
        ctx.emitter.emit(EventType.SESSION_STOP_REQUESTED, {"reason": said}, task_id=self._task_id())
        logger.warning("Session %s: %s", ctx.session_id, said)
        if ctx.machine.session in (SessionStatus.SESSION_RUNNING, SessionStatus.SESSION_PAUSED):
            await host._teardown(ctx, said, cancelled=True)
        host.exit_requested.set()

    def _task_id(self) -> str | None:
        """The running task's ID (the event is about it); None between tasks."""
        task = self._host._task
        return task.task_id if task is not None and self._host._running() else None
