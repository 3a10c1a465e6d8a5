"""What the window and ``cowork exec`` show of the organisation's policy changes and an administrator's
stop (issue 22): ``policy_revoked`` then the pause, a new policy in force, ``session_stop_requested``
then the session's end — which is no crash to recover from. Qt-free."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from desktop.approval.queue import ApprovalQueue
from desktop.conversation.banners import BannerAction
from desktop.conversation.items import Notice, Tone
from desktop.conversation.session import ConversationSession, Identity, Phase
from desktop.conversation.state import ConversationState
from desktop.headless.render import TextRenderer
from tests.desktop.conversation.events import event

REVOKED = event("policy_revoked", {"reason": "key compromise", "policyVersion": 3}, step=None)
PAUSED = event(
    "session_paused",
    {
        "reason": "policy_revoked",
        "error": {
            "code": "POLICY_EXPIRED",
            "message": "The organisation's policy was revoked by an administrator (key compromise); …",
            "retryable": True,
            "details": {"reason": "revoked", "revocationReason": "key compromise"},
        },
    },
    step=None,
)
UPDATED = event(
    "policy_updated",
    {
        "policyBundleVersion": "abc",
        "expiresAt": "2026-01-01T08:00:00Z",
        "policyVersion": 4,
        "added": ["Network.Http"],
        "removed": ["File.Write", "Shell.Exec"],
    },
    step=None,
)
STOP = event("session_stop_requested", {"reason": "Stopped by an administrator: offboarding"}, step=None)
CANCELLED = {
    **event("session_cancelled", {"reason": "Stopped by an administrator: offboarding"}),
    "taskId": None,
}


def notices(state: ConversationState) -> list[Notice]:
    return [item for item in state.items if isinstance(item, Notice)]


def test_a_revocation_says_why_and_the_pause_offers_resume_once_a_policy_is_valid_again() -> None:
    state = ConversationState()
    state.set_session("SESSION_RUNNING", {"taskId": "task_1", "status": "WAITING_FOR_LLM"})
    state.apply(REVOKED)
    told = notices(state)[-1]
    state.apply(PAUSED)
    paused = state.banner
    state.apply(UPDATED)
    restored = state.banner
    changed = notices(state)[-1]

    assert told.tone is Tone.WARNING
    assert "revoked the policy of this session (key compromise)" in told.text
    assert state.session_status == "SESSION_PAUSED"
    assert paused is not None
    assert paused.revoked
    assert paused.action is BannerAction.RESUME
    assert "key compromise" in paused.text
    assert "installed a valid policy" in paused.text
    # A valid policy in force again: the banner says the session can go on now.
    assert restored is not None
    assert not restored.revoked
    assert restored.action is BannerAction.RESUME
    assert "valid policy is in force again" in restored.text
    assert changed.text == (
        "The organisation's policy was updated — now allowed: web requests; no longer allowed: writing"
        " files, running commands."
    )


def test_a_policy_update_while_running_is_a_notice_only() -> None:
    state = ConversationState()
    state.set_session("SESSION_RUNNING", {"taskId": "task_1", "status": "TASK_RUNNING"})
    state.apply(event("policy_updated", {"policyBundleVersion": "v", "expiresAt": "2026-01-01T08:00:00Z"}))
    assert state.banner is None
    assert notices(state)[-1].text == (
        "The organisation's policy was updated; what this session may do is unchanged."
    )


class _NoLauncher:
    async def launch(self, **_: Any) -> Any:
        raise AssertionError("a stopped session must not start a runtime")


def test_an_administrators_stop_offers_a_new_session_and_the_runtimes_exit_is_no_crash(
    tmp_path: Path,
) -> None:
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
    )
    session.session_id, session.workspace_id = "sess_1", "ws_1"
    lost: list[str] = []
    session.on_lost = lambda _session, why: lost.append(why)
    state.apply(STOP)
    state.apply(CANCELLED)

    session._lost("it exited with status 0")

    assert lost == []
    assert session.phase is Phase.BROKEN
    assert state.session_status == "SESSION_CANCELLED"
    assert state.banner is not None
    assert state.banner.action is BannerAction.NEW_SESSION
    assert state.banner.text.startswith("Stopped by an administrator: offboarding.")


def test_cowork_exec_prints_each_of_them() -> None:
    out, err = io.StringIO(), io.StringIO()
    renderer = TextRenderer(out, err)
    for each in (REVOKED, PAUSED, UPDATED, STOP):
        renderer.event(each)
    assert err.getvalue().splitlines() == [
        "! the organisation revoked the policy: key compromise; the session pauses",
        "! session paused: The organisation's policy was revoked by an administrator (key compromise); …",
        "! the organisation's policy was updated: +Network.Http -File.Write -Shell.Exec",
        "! Stopped by an administrator: offboarding; the session ends",
    ]
    assert out.getvalue() == ""
