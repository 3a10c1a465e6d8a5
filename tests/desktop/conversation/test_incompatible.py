"""The Session Service refuses this client's versions (seed 000 §3.2 step 4, seed 001 §11): the
conversation keeps the verdict and offers the download only when a runtime can fix it. Qt-free."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contracts.errors import ErrorCode, ErrorShape
from contracts.ipc.client_core import RpcCallError
from desktop.approval.queue import ApprovalQueue
from desktop.conversation.banners import BannerAction
from desktop.conversation.controller import describe_failure
from desktop.conversation.errors import ConversationError
from desktop.conversation.session import ConversationSession, Identity, Phase
from desktop.conversation.state import ConversationState


def refusal(runtime: str, desktop: str) -> ErrorShape:
    """The runtime's answer to CreateSession for an incompatible client (its StateConflict)."""
    return ErrorShape(
        code=ErrorCode.INVALID_REQUEST,
        message="The backend does not support this version of the desktop app or agent runtime.",
        details={
            "compatibilityStatus": "incompatible",
            "compatibility": {
                "localAgentHostVersion": {"version": "1.0.0", "supported": ">=1.1", "status": runtime},
                "desktopAppVersion": {"version": "0.1.0", "supported": ">=0.1", "status": desktop},
            },
        },
    )


class _Refusing:
    def __init__(self, shape: ErrorShape) -> None:
        self.shape = shape
        self.gateway: dict[str, str] = {}

    async def call(self, method: str, params: Any, timeout: float | None = None) -> Any:
        raise RpcCallError(-32001, self.shape.message, self.shape)

    async def stop(self, *, shutdown: bool, shutdown_timeout: float = 5.0) -> bool:
        return True


class _Launcher:
    def __init__(self, shape: ErrorShape) -> None:
        self.shape = shape

    async def launch(self, **_: Any) -> _Refusing:
        return _Refusing(self.shape)


def _session(tmp_path: Path, shape: ErrorShape) -> ConversationSession:
    return ConversationSession(
        state=ConversationState(),
        launcher=_Launcher(shape),  # type: ignore[arg-type]
        identity=Identity(
            user_id="u",
            tenant_id="t",
            app_version="0.1.0",
            runtime_version=lambda: "1.0.0",
            os_family="Linux",
        ),
        folder=str(tmp_path),
        approvals=ApprovalQueue(),
    )


async def test_a_refused_runtime_offers_a_compatible_one(tmp_path: Path) -> None:
    session = _session(tmp_path, refusal("incompatible", "compatible"))
    with pytest.raises(ConversationError) as caught:
        await session.ensure_started()
    problem = describe_failure("start the agent runtime", caught.value)
    assert problem.action is BannerAction.UPDATE_RUNTIME
    assert "accepts runtime versions >=1.1" in problem.message
    assert session.incompatibility is not None
    assert session.incompatibility.supported == ">=1.1"
    assert session.phase is Phase.IDLE


async def test_a_refused_desktop_app_is_no_runtime_download(tmp_path: Path) -> None:
    session = _session(tmp_path, refusal("compatible", "incompatible"))
    with pytest.raises(ConversationError) as caught:
        await session.ensure_started()
    assert caught.value.action is None
    assert "Install a newer Cowork" in str(caught.value)
