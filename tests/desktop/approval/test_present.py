"""What the approval dialog says about a request, without Qt."""

from __future__ import annotations

import math

from desktop.approval.present import (
    HIDDEN_CHARACTERS_NOTE,
    DetailRow,
    countdown_text,
    describe,
    reveal_hidden,
    waiting_text,
)
from tests.desktop.approval.requests import WRITE_DIFF, request, write_request


def test_a_command_shows_the_command_and_its_folder_whole() -> None:
    long_command = "pytest " + " ".join(f"tests/test_{n}.py" for n in range(400)) + " ; rm -rf ~"
    view = describe(
        request(
            actionSummary=f"Run: {long_command}",
            description="Commands run with your permissions.",
            details={"toolName": "RunCommand", "command": long_command, "cwd": "/home/me/demo"},
            notes=["The command line could not be fully verified."],
        )
    )
    assert view.title == "Local command execution"
    assert view.risk_label == "Medium risk"
    assert view.description == "Commands run with your permissions."
    assert view.rows == (
        DetailRow("Tool", "RunCommand"),
        DetailRow("Command", long_command, "code"),
        DetailRow("In folder", "/home/me/demo", "code"),
    )
    assert view.summary.endswith("; rm -rf ~")  # nothing is cut: the end is where surprises hide
    assert view.notes == ("The command line could not be fully verified.",)
    assert view.scope_label == "Approve this exact command for the rest of this conversation"


def test_a_write_shows_the_file_and_the_diff_it_would_make() -> None:
    view = describe(write_request())
    assert view.risk == "high"
    assert view.risk_label == "High risk"
    assert DetailRow("File", "/home/me/demo/src/app.py", "code") in view.rows
    assert view.diff == WRITE_DIFF
    assert view.scope_label == "Approve this action on this file for the rest of this conversation"


def test_a_request_shows_its_method_url_and_the_domain_a_session_approval_covers() -> None:
    view = describe(
        request(
            details={
                "toolName": "HttpRequest",
                "url": "https://api.example.com/v1/items?q=1",
                "method": "POST",
            }
        )
    )
    assert DetailRow("Request", "POST https://api.example.com/v1/items?q=1", "code") in view.rows
    assert view.scope_label == "Approve requests to api.example.com for the rest of this conversation"


def test_details_a_newer_runtime_adds_are_shown_too() -> None:
    view = describe(request(details={"toolName": "Deploy", "environment": "staging"}))
    assert DetailRow("environment", "staging") in view.rows


def test_the_call_id_that_ties_a_request_to_its_row_is_not_shown_as_a_fact() -> None:
    view = describe(request(details={"toolName": "WriteFile", "path": "/p/a", "toolCallId": "w1"}))
    assert all(row.value != "w1" for row in view.rows)


def test_invisible_characters_are_spelled_out_and_the_user_is_told() -> None:
    # A right-to-left override makes "rm -rf ~ #txt.sh" read as something harmless in many renderers.
    command = "cat notes\u202e; rm -rf ~ #hs.txt\u200b"
    view = describe(
        request(actionSummary=f"Run: {command}", details={"toolName": "RunCommand", "command": command})
    )
    assert DetailRow("Command", "cat notes⟨U+202E⟩; rm -rf ~ #hs.txt⟨U+200B⟩", "code") in view.rows
    assert view.notes[0] == HIDDEN_CHARACTERS_NOTE
    assert reveal_hidden("a\tb\nc d") == "a\tb\nc d"
    assert reveal_hidden("rm\u00a0-rf\r") == "rm⟨U+00A0⟩-rf⟨U+000D⟩"


def test_a_malformed_request_still_shows_what_it_can_and_calls_unknown_risk_high() -> None:
    view = describe(
        {"approvalId": "appr_x", "riskLevel": "extreme", "details": "not an object", "notes": "x"}
    )
    assert view.title == "Approval needed"
    assert view.summary == "Approval needed"
    assert view.risk == "high"
    assert view.rows == ()
    assert view.notes == ()
    assert view.scope_label == ""  # no target to key a session grant on: the runtime grants it once


def test_countdown_and_waiting_texts() -> None:
    assert countdown_text(300) == "5:00 left"
    assert countdown_text(61.2) == "1:02 left"
    assert countdown_text(4.01) == "0:05 left"
    assert countdown_text(0) == "0:00 left"
    assert countdown_text(math.inf) == ""
    assert waiting_text(0) == ""
    assert waiting_text(1) == "1 more waiting"
    assert waiting_text(2) == "2 more waiting"
