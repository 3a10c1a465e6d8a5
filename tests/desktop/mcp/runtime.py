"""A stand-in for one runtime process, for the conversation logic's MCP tests: every call is checked
against the method's contract (as the runtime would check it) and answered from a script, and the
test sends ``SessionEvent`` notifications through the same path a real runtime's take."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from contracts.methods import METHODS
from desktop.approval.queue import ApprovalQueue
from desktop.conversation.session import ConversationSession, ElicitationSink, Identity
from desktop.conversation.state import ConversationState

IDENTITY = Identity(
    user_id="u", tenant_id="t", app_version="0.1.0", runtime_version=lambda: "0.1.0", os_family="Linux"
)


class Runtime:
    """The connection: ``answers[method]`` is the result (a dict, or a callable of the params)."""

    def __init__(self, answers: Mapping[str, Any] | None = None) -> None:
        self.answers: dict[str, Any] = {
            "CreateSession": {
                "sessionId": "sess_1",
                "workspaceId": "ws_1",
                "sessionStatus": "SESSION_RUNNING",
            },
            "GetSessionState": {"sessionStatus": "SESSION_RUNNING"},
            **(answers or {}),
        }
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.on_event: Callable[[dict[str, Any]], None] | None = None

    pid = 4242
    gateway: Mapping[str, str] = {"LLM_GATEWAY_ENDPOINT": "http://127.0.0.1:1"}

    async def call(self, method: str, params: Any = None, *, timeout: float = 30.0) -> Any:
        # As the runtime reads them: JSON, strictly, against the method's params model.
        METHODS[method].params.model_validate_json(json.dumps(params))
        self.calls.append((method, params))
        answer = self.answers[method]
        if isinstance(answer, BaseException):
            raise answer
        return answer(params) if callable(answer) else answer

    async def stop(self, *, shutdown: bool, shutdown_timeout: float = 30.0) -> bool:
        return True

    def send(self, event: dict[str, Any]) -> None:
        assert self.on_event is not None
        self.on_event(event)


class Launcher:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def launch(self, *, cwd: str | None, on_event: Any, on_lost: Any) -> Runtime:
        self.runtime.on_event = on_event
        return self.runtime

    async def gateway(self) -> Mapping[str, str]:
        return self.runtime.gateway


async def started_session(
    runtime: Runtime,
    *,
    elicitations: ElicitationSink | None = None,
    open_url: Callable[[str], bool] | None = None,
) -> ConversationSession:
    session = ConversationSession(
        state=ConversationState(),
        launcher=Launcher(runtime),
        identity=IDENTITY,
        folder=None,
        approvals=ApprovalQueue(),
        elicitations=elicitations,
        open_url=open_url,
    )
    await session.ensure_started()
    return session
