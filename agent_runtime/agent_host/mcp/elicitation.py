"""Elicitation forwarded to the user (MCP elicitation, form mode): a server asks for input during a tool
call; the desktop shows the form (``elicitation_requested``) and answers with ``AnswerElicitation``.

The call that asked waits on its own future — the loop's other work (parallel calls, approvals, RPC
methods) goes on. No answer within the timeout cancels the request (``elicitation_resolved`` with
``timedOut``), as does the end of the call, of the task or of the session. An accepted answer whose
content does not fit the requested schema is refused with the problems named, and the request keeps
waiting so the user can correct it.
"""

from __future__ import annotations

import asyncio
import logging
import math
import uuid
from dataclasses import dataclass, field

from agent_runtime.agent_host.approval import EmitFn
from contracts.events import ElicitationRequestedPayload, ElicitationResolvedPayload, EventType
from contracts.mcp import ElicitationAction
from contracts.mcp_boundary import ElicitationAsk, ElicitationReply
from contracts.methods import AnswerElicitationParams, AnswerElicitationResult

__all__ = ["DEFAULT_ELICITATION_TIMEOUT_S", "ElicitationBroker", "ElicitationContentInvalid"]

logger = logging.getLogger(__name__)

DEFAULT_ELICITATION_TIMEOUT_S = 100.0
"""Under seed 000 §7.4's 120 s for the whole remote call, so the server still gets the answer (a
cancel) and can finish the call with it."""


class ElicitationContentInvalid(ValueError):
    """An accepted answer whose content does not fit the requested schema; the request still waits."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(slots=True)
class _Waiting:
    ask: ElicitationAsk
    answer: asyncio.Future[ElicitationReply] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class ElicitationBroker:
    """One per session; every method runs on the session's event loop."""

    def __init__(
        self, *, session_id: str, emit: EmitFn, timeout_s: float = DEFAULT_ELICITATION_TIMEOUT_S
    ) -> None:
        if not (math.isfinite(timeout_s) and timeout_s > 0):
            raise ValueError("timeout_s must be a positive number of seconds")
        self.session_id = session_id
        self.timeout_s = timeout_s
        self._emit = emit
        self._waiting: dict[str, _Waiting] = {}
        self._closed = False

    @property
    def pending(self) -> list[str]:
        return list(self._waiting)

    async def ask(self, ask: ElicitationAsk) -> ElicitationReply:
        """Put ``ask`` to the user and wait for the answer (cancel on timeout or shutdown)."""
        if self._closed:
            return ElicitationReply(ElicitationAction.CANCEL)
        elicitation_id = f"elic_{uuid.uuid4().hex}"
        waiting = _Waiting(ask)
        self._waiting[elicitation_id] = waiting
        self._emit(
            EventType.ELICITATION_REQUESTED,
            ElicitationRequestedPayload(
                elicitation_id=elicitation_id,
                server_name=ask.server_name,
                tool_name=ask.tool_name,
                message=ask.message,
                requested_schema=ask.requested_schema,
                timeout_seconds=max(1, math.ceil(self.timeout_s)),
            ),
            task_id=ask.task_id,
            step_id=ask.step_id,
        )
        try:
            await asyncio.wait({waiting.answer}, timeout=self.timeout_s)
        except asyncio.CancelledError:
            # The call was abandoned: close the form on the desktop.
            if self._waiting.pop(elicitation_id, None) is not None:
                self._resolved(elicitation_id, waiting, ElicitationAction.CANCEL)
            raise
        if waiting.answer.done():
            return waiting.answer.result()
        self._waiting.pop(elicitation_id, None)
        logger.info("elicitation %s of %s timed out", elicitation_id, ask.server_name)
        self._resolved(elicitation_id, waiting, ElicitationAction.CANCEL, timed_out=True)
        return ElicitationReply(ElicitationAction.CANCEL)

    def answer(self, params: AnswerElicitationParams) -> AnswerElicitationResult:
        """``AnswerElicitation``: ``accepted: false`` when nothing waits under that id any more."""
        waiting = self._waiting.get(params.elicitation_id)
        if waiting is None:
            return AnswerElicitationResult(accepted=False)
        content = params.content
        if params.action is ElicitationAction.ACCEPT:
            content = content or {}
            problems = waiting.ask.problems(content) if waiting.ask.problems is not None else []
            if problems:
                raise ElicitationContentInvalid(problems)
        else:
            content = None  # only an accepted answer carries values (MCP elicitation)
        del self._waiting[params.elicitation_id]
        self._resolved(params.elicitation_id, waiting, params.action, content=content)
        return AnswerElicitationResult(accepted=True)

    def cancel_all(self) -> None:
        """Cancel every request still waiting (task cancelled, session ending)."""
        for elicitation_id in list(self._waiting):
            waiting = self._waiting.pop(elicitation_id)
            self._resolved(elicitation_id, waiting, ElicitationAction.CANCEL)

    def close(self) -> None:
        self.cancel_all()
        self._closed = True

    def _resolved(
        self,
        elicitation_id: str,
        waiting: _Waiting,
        action: ElicitationAction,
        *,
        content: dict[str, object] | None = None,
        timed_out: bool = False,
    ) -> None:
        if not waiting.answer.done():
            waiting.answer.set_result(ElicitationReply(action, content))
        self._emit(
            EventType.ELICITATION_RESOLVED,
            ElicitationResolvedPayload(elicitation_id=elicitation_id, action=action, timed_out=timed_out),
            task_id=waiting.ask.task_id,
            step_id=waiting.ask.step_id,
        )
