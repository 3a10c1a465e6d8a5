"""The approval dialog for an MCP tool: which remote server receives the call, which of its tools, and
the arguments it would receive — whole, pretty-printed, wrapped and scrollable."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtWidgets import QApplication, QPlainTextEdit
from pytestqt.qtbot import QtBot

from contracts.approvals import ApprovalRequest
from desktop.approval.dialog import ApprovalDialog
from desktop.approval.present import describe
from desktop.approval.queue import ApprovalQueue
from tests.desktop.approval.requests import request
from tests.desktop.mcp.widgets import assert_every_control_is_named

ARGUMENTS: dict[str, Any] = {
    "city": "Zürich",
    "dates": {"from": "2026-03-01", "to": "2026-03-04"},
    "guests": 2,
    "notes": "window seat please " * 20,
}


def mcp_request(approval_id: str = "appr_m", arguments: Any = ARGUMENTS) -> dict[str, Any]:
    return request(
        approval_id,
        title="Use an MCP tool",
        actionSummary="Call tickets/book",
        riskLevel="medium",
        details={
            "toolName": "tickets/book",
            "mcpServer": "tickets",
            "mcpTool": "book",
            "arguments": arguments,
        },
    )


def test_the_test_request_is_what_the_runtime_sends() -> None:
    ApprovalRequest.model_validate_json(json.dumps(mcp_request()))


def test_the_rows_name_the_server_and_tool_and_hold_the_arguments_whole() -> None:
    view = describe(mcp_request())
    assert [(row.label, row.kind) for row in view.rows] == [("MCP tool", "text"), ("Arguments", "json")]
    assert view.rows[0].value == "Server: tickets · Tool: book"
    assert json.loads(view.rows[1].value) == ARGUMENTS
    assert view.rows[1].value.startswith('{\n  "city": "Zürich",')


def test_hidden_characters_in_the_arguments_are_spelled_out() -> None:
    view = describe(mcp_request(arguments={"path": "report\u202e.txt"}))
    assert "⟨U+202E⟩" in view.rows[1].value
    assert "invisible" in view.notes[0]


def test_the_dialog_shows_server_tool_and_arguments_in_a_scrollable_field(qtbot: QtBot) -> None:
    queue = ApprovalQueue()
    dialog = ApprovalDialog(queue, arm_delay_ms=0)
    qtbot.addWidget(dialog)
    big = {**ARGUMENTS, "items": [{"n": i, "label": f"item {i}"} for i in range(40)]}
    queue.add("sess_1", mcp_request(arguments=big), received_at=0.0)

    assert dialog.detail_rows()[0] == ("MCP tool", "Server: tickets · Tool: book")
    field = next(w for w in dialog.findChildren(QPlainTextEdit) if w.accessibleName() == "Arguments")
    assert json.loads(field.toPlainText()) == big
    assert field.isReadOnly()
    assert field.wordWrapMode().name.startswith("Wrap")
    dialog.resize(620, 480)
    QApplication.processEvents()
    assert field.verticalScrollBar().maximum() > 0  # long arguments scroll inside their field
    assert field.height() >= 6 * field.fontMetrics().lineSpacing()
    assert_every_control_is_named(dialog)


def test_a_built_in_tool_still_reads_as_before() -> None:
    view = describe(request())
    assert [row.label for row in view.rows] == ["Tool", "Command", "In folder"]
