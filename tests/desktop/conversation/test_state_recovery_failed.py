"""The window's reaction to ``checkpoint_recovery_failed`` (seed 000 §9.7 "notify the Desktop App that
crash recovery failed"), and the line ``cowork exec`` prints for it; both Qt-free."""

from __future__ import annotations

import io

from desktop.conversation.items import Notice, Tone
from desktop.conversation.state import ConversationState
from desktop.headless.render import TextRenderer
from tests.desktop.conversation.events import event

# A session-level event: no task or step (as the runtime sends it before any session is running).
RECOVERY_FAILED = {
    **event("checkpoint_recovery_failed", {"reason": "the checkpoint file is not valid JSON (truncated)"}),
    "taskId": None,
    "stepId": None,
}


def test_a_failed_crash_recovery_leaves_a_warning_that_the_conversation_starts_fresh() -> None:
    state = ConversationState()
    state.apply(RECOVERY_FAILED)
    [notice] = state.items
    assert isinstance(notice, Notice)
    assert notice.tone is Tone.WARNING
    assert "could not be read" in notice.text
    assert "history" in notice.text  # where the user's earlier work still is


def test_cowork_exec_prints_a_line_for_a_failed_crash_recovery() -> None:
    out, err = io.StringIO(), io.StringIO()
    TextRenderer(out, err).event(RECOVERY_FAILED)
    assert out.getvalue() == ""
    assert "could not be read" in err.getvalue()
