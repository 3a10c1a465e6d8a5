"""A session the runtime itself ended as failed (seed 000 §3.3 RUNNING → FAILED): the runtime sends
``session_failed`` and exits with its own status. The window offers to go on in a new session — the
history was uploaded — and does not take the exit for a crash to recover from (there is no
checkpoint left to resume). Qt-free."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.approval.queue import ApprovalQueue
from desktop.conversation.banners import BannerAction
from desktop.conversation.journal import SessionJournal
from desktop.conversation.session import ConversationSession, Identity, Phase
from desktop.conversation.state import ConversationState
from tests.desktop.conversation.events import event

FAILED = {
    **event(
        "session_failed",
        {
            "reason": "resume_refused",
            "error": {"code": "SESSION_EXPIRED", "message": "The session expired.", "retryable": False},
        },
    ),
    "taskId": None,
    "stepId": None,
}


class _NoLauncher:
    async def launch(self, **_: Any) -> Any:
        raise AssertionError("a failed session must not start a runtime")


def test_a_failed_session_offers_a_new_session_with_the_runtimes_reason() -> None:
    state = ConversationState()
    state.apply(FAILED)
    assert state.session_status == "SESSION_FAILED"
    assert state.banner is not None
    assert state.banner.action is BannerAction.NEW_SESSION
    assert "The session expired" in state.banner.text


def test_the_runtimes_exit_after_a_failed_session_is_not_a_crash_to_recover(tmp_path: Path) -> None:
    journal = SessionJournal(tmp_path / "open-sessions.json")
    state = ConversationState()
    session = ConversationSession(
        state=state,
        launcher=_NoLauncher(),  # type: ignore[arg-type]
        identity=Identity(
            user_id="u",
            tenant_id="t",
            app_version="0.1.0",
            runtime_version=lambda: "0.1.0",
            os_family="Linux",
        ),
        folder=str(tmp_path),
        approvals=ApprovalQueue(),
        journal=journal,
    )
    session.session_id, session.workspace_id = "sess_1", "ws_1"
    journal.add("sess_1", "ws_1", str(tmp_path))
    lost: list[str] = []
    session.on_lost = lambda _session, why: lost.append(why)
    state.apply(FAILED)

    session._lost("it exited with status 5")

    assert lost == []  # no automatic restart and ResumeSession
    assert session.phase is Phase.BROKEN
    assert journal.interrupted() == []  # the next start offers nothing to resume
    assert state.banner is not None
    assert state.banner.action is BannerAction.NEW_SESSION
