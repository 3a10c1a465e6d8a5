"""An upload the organisation's policy does not allow (``upload_skipped``, seed 001 §5) is told to the
user in the window and in ``cowork exec``, as a warning the conversation goes on after. Qt-free."""

from __future__ import annotations

import io

from desktop.conversation.items import Notice, Tone
from desktop.conversation.state import ConversationState
from desktop.headless.render import TextRenderer
from tests.desktop.conversation.events import event

SKIPPED = event(
    "upload_skipped",
    {
        "artifactName": "session_history.json",
        "artifactType": "session_history",
        "sizeBytes": 2048,
        "reason": "Capability not granted: Workspace.Upload",
        "code": "CAPABILITY_DENIED",
    },
    step=None,
)


def test_the_window_says_what_was_not_saved_and_why() -> None:
    state = ConversationState()
    state.apply(SKIPPED)
    (notice,) = [item for item in state.items if isinstance(item, Notice)]
    assert notice.tone is Tone.WARNING
    assert notice.text.startswith("session_history.json was not saved to the backend")
    assert "Capability not granted: Workspace.Upload" in notice.text


def test_cowork_exec_prints_it_as_a_warning() -> None:
    out, err = io.StringIO(), io.StringIO()
    TextRenderer(out, err).event(SKIPPED)
    assert err.getvalue().splitlines() == [
        "! not uploaded by policy: session_history.json: Capability not granted: Workspace.Upload"
    ]
    assert out.getvalue() == ""
