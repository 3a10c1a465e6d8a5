"""A session the backend refuses because of a quota (seed 001 Phase 4: ``RATE_LIMITED`` naming the
limit and when to retry): the window shows the backend's own sentence, for a new conversation and for
one being resumed, and offers no runtime restart — a restarted runtime would be refused the same.
Qt-free."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contracts.errors import ErrorCode, ErrorShape
from contracts.ipc.client_core import RpcCallError
from desktop.approval.queue import ApprovalQueue
from desktop.conversation.controller import describe_failure
from desktop.conversation.errors import ConversationError
from desktop.conversation.session import ConversationSession, Identity, Phase
from desktop.conversation.state import ConversationState

REFUSAL = ErrorShape(
    code=ErrorCode.RATE_LIMITED,
    message="This organisation has used 2,000,431 of its 2,000,000 LLM tokens for today (tokensPerDay). "
    "New sessions can start after 00:00 UTC, in 3 h 12 min.",
    retryable=True,
    details={"quota": "tokensPerDay", "limit": 2_000_000, "used": 2_000_431, "retryAfterSeconds": 11520},
)


class _Refused:
    """A runtime whose CreateSession and ResumeSession the backend refused."""

    def __init__(self) -> None:
        self.gateway: dict[str, str] = {}
        self.stopped = False

    async def call(self, method: str, params: Any, timeout: float | None = None) -> Any:
        raise RpcCallError(-32000, REFUSAL.message, REFUSAL)

    async def stop(self, *, shutdown: bool, shutdown_timeout: float = 5.0) -> bool:
        self.stopped = True
        return True


class _Launcher:
    def __init__(self) -> None:
        self.launched: list[_Refused] = []

    async def launch(self, **_: Any) -> _Refused:
        self.launched.append(_Refused())
        return self.launched[-1]


def _session(tmp_path: Path, launcher: _Launcher) -> ConversationSession:
    identity = Identity(
        user_id="u", tenant_id="t", app_version="0.1.0", runtime_version=lambda: "0.1.0", os_family="Linux"
    )
    return ConversationSession(
        state=ConversationState(),
        launcher=launcher,  # type: ignore[arg-type]
        identity=identity,
        folder=str(tmp_path),
        approvals=ApprovalQueue(),
    )


async def test_a_new_conversation_refused_by_a_quota_shows_the_limit_and_when(tmp_path: Path) -> None:
    launcher = _Launcher()
    session = _session(tmp_path, launcher)
    with pytest.raises(RpcCallError) as caught:
        await session.ensure_started()
    problem = describe_failure("start the agent runtime", caught.value)
    assert problem.message == REFUSAL.message
    assert problem.action is None
    assert session.phase is Phase.IDLE  # the next message tries again
    assert launcher.launched[0].stopped


async def test_a_resume_refused_by_a_quota_says_so_without_offering_a_runtime_restart(tmp_path: Path) -> None:
    launcher = _Launcher()
    session = _session(tmp_path, launcher)
    session.session_id, session.workspace_id = "sess_1", "ws_1"
    with pytest.raises(ConversationError) as caught:
        await session.recover()
    assert str(caught.value) == REFUSAL.message
    assert caught.value.action is None
    problem = describe_failure("resume the conversation", caught.value)
    assert (problem.message, problem.action) == (REFUSAL.message, None)
