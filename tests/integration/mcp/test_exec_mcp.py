"""MCP servers in ``cowork exec``: the real program, backend and runtime, a project's MCP server and the
scripted gateway. Without a terminal a server's question is answered with its defaults and an approval
is refused; on a terminal the approval shows the server, the tool and the arguments, and the question
is asked field by field. A server's sign-in page is printed (and opened on a terminal).
"""

from __future__ import annotations

import asyncio
import io
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.headless.approvals import NO_TERMINAL_REASON, UnattendedApprover
from desktop.headless.elicitations import DefaultsElicitor, TerminalElicitor, defaults_answer
from desktop.headless.run import _Run
from desktop.headless.terminal import TerminalLines
from tests.headless.support import base_environment, run_cowork, tool_call
from tests.integration.mcp.conftest import Docs, write_mcp_json
from tests.integration.runtime.harness import Backend, tool_results

NICKNAME = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "default": "Ada"},
        "cups": {"type": "integer", "minimum": 1, "default": 2, "description": "How many cups"},
        "tea": {"type": "string", "enum": ["green", "black"], "default": "green"},
    },
}


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    return "".join(part.get("text", "") for part in content) if isinstance(content, list) else str(content)


@pytest.fixture
def env(tmp_path: Path, mcp_backend: Backend) -> dict[str, str]:
    return base_environment(tmp_path, mcp_backend)


def test_an_mcp_tool_runs_end_to_end_and_a_question_is_answered_with_its_defaults(
    env: dict[str, str], workspace: Path, docs: Docs
) -> None:
    write_mcp_json(workspace, {"name": "docs", "url": docs.server.url, "allowInsecureLoopback": True})
    turns = [
        tool_call("docs__search", "c1", query="exec"),
        tool_call("docs__ask_name", "c2"),
        {"text": "All done."},
    ]
    with ScriptedGatewayThread({"turns": turns}) as gateway:
        result = run_cowork(["-C", str(workspace), "--endpoint", gateway.url, "Search and greet"], env)
        gateway.assert_done()
        bodies = [request.body for request in gateway.requests]
    assert result.returncode == 0, result.stderr
    assert result.stdout == "All done.\n"
    assert "→ docs/search" in result.stderr
    assert "✓ docs/search" in result.stderr
    assert "MCP server docs connected" in result.stderr
    assert "Traceback" not in result.stderr
    [search] = tool_results(bodies[1])
    assert result_text(search) == "found: exec"
    [greeting] = tool_results(bodies[2])
    assert result_text(greeting) == "hello Ada, 2 cups"  # nobody to ask: the schema's defaults
    assert docs.log.calls == ["search", "ask_name"]
    assert "DELETE" in docs.log.http


def test_without_a_terminal_an_mcp_tool_that_needs_approval_is_refused(
    env: dict[str, str], workspace: Path, docs: Docs
) -> None:
    write_mcp_json(workspace, {"name": "docs", "url": docs.server.url, "allowInsecureLoopback": True})
    turns = [tool_call("docs__delete_page", "d1", page="old"), {"text": "It was not deleted."}]
    with ScriptedGatewayThread({"turns": turns}) as gateway:
        result = run_cowork(["-C", str(workspace), "--endpoint", gateway.url, "Delete it"], env)
    assert result.returncode == 5, result.stderr  # completed, with an action refused
    assert NO_TERMINAL_REASON in result.stderr
    assert "✗ docs/delete_page denied" in result.stderr
    assert docs.log.calls == []


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX-only")
def test_on_a_terminal_the_approval_shows_server_tool_and_arguments_and_the_question_is_asked(
    env: dict[str, str], workspace: Path, docs: Docs
) -> None:
    from tests.headless.test_exec_terminal import PROMPT, Terminal

    write_mcp_json(workspace, {"name": "docs", "url": docs.server.url, "allowInsecureLoopback": True})
    turns = [
        tool_call("docs__delete_page", "d1", page="old"),
        tool_call("docs__ask_name", "a1"),
        {"text": "Finished."},
    ]
    with ScriptedGatewayThread({"turns": turns}) as gateway:
        term = Terminal(["-C", str(workspace), "--endpoint", gateway.url, "Delete and greet"], env)
        try:
            term.read_until(PROMPT)
            approval = term.text()
            term.type("y\n")
            term.read_until(b"Answer? [a]nswer / [d]ecline / [c]ancel: ")
            term.type("a\n")
            term.read_until(b"Your name [Ada]: ")
            term.type("Grace\n")
            term.read_until(b"How many cups")
            term.read_until(b"[2]: ")
            term.type("0\n")  # below the minimum: asked again
            # Said why, and offered the default again.
            term.read_until(b"Cups must be at least 1.\r\n   Cups [2]: ")
            term.type("\n")  # and taken
            status = term.finish()
        finally:
            term.close()
        bodies = [request.body for request in gateway.requests]
    screen = term.text()
    assert status == 0, screen
    assert "── Approval needed: Delete a documentation page" in approval
    assert "MCP server: docs" in approval
    assert "tool: delete_page" in approval
    assert '"page": "old"' in approval
    assert "── The MCP server docs asks (during ask_name):" in screen
    assert "What is your name?" in screen
    assert result_text(tool_results(bodies[2])[0]) == "hello Grace, 2 cups"
    assert docs.log.calls == ["delete_page", "ask_name"]


# ------------------------------------------------------------------------------ the pieces, in process


def test_the_headless_rule_accepts_the_defaults_and_declines_a_required_field_without_one() -> None:
    accepted = defaults_answer(NICKNAME)
    assert accepted.action == "accept"
    assert accepted.content == {"name": "Ada", "cups": 2, "tea": "green"}
    required = {"type": "object", "properties": {"token": {"type": "string"}}, "required": ["token"]}
    assert defaults_answer(required).action == "decline"
    assert defaults_answer("not a schema").action == "decline"


async def test_the_terminal_asks_field_by_field_and_takes_defaults_on_empty_lines() -> None:
    typed = io.StringIO("a\nGrace\nlots\n3\n2\n")
    shown = io.StringIO()
    elicitor = TerminalElicitor(TerminalLines(typed), shown, before_prompt=lambda: None)
    request = {"serverName": "docs", "toolName": "ask_name", "message": "Tea?", "requestedSchema": NICKNAME}
    answer = await elicitor.answer(request)
    assert answer.action == "accept"
    assert answer.content == {"name": "Grace", "cups": 3, "tea": "black"}
    text = shown.getvalue()
    assert "Cups must be a number." in text or "must be a number" in text
    assert "1) green" in text
    assert "2) black" in text

    declined = await TerminalElicitor(
        TerminalLines(io.StringIO("d\n")), io.StringIO(), before_prompt=lambda: None
    ).answer(request)
    assert declined.action == "decline"
    closed = await TerminalElicitor(
        TerminalLines(io.StringIO("")), io.StringIO(), before_prompt=lambda: None
    ).answer(request)
    assert closed.action == "cancel"


class Notes:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def event(self, event: dict[str, Any]) -> None:
        return

    def note(self, text: str) -> None:
        self.lines.append(text)

    def finish(self) -> None:
        return


async def test_a_sign_in_page_is_printed_and_opened_when_someone_is_at_the_terminal() -> None:
    opened: list[str] = []
    notes = Notes()
    run = _Run(notes, UnattendedApprover(False), DefaultsElicitor(), opened.append)
    payload = {"serverName": "crm", "authorizationUrl": "https://auth.example.com/authorize?x=1"}
    run.on_notification("SessionEvent", {"eventType": "mcp_authorization_required", "payload": payload})
    assert opened == ["https://auth.example.com/authorize?x=1"]
    assert any(
        "crm needs you to sign in: https://auth.example.com/authorize?x=1" in line for line in notes.lines
    )

    quiet = _Run(Notes(), UnattendedApprover(False), DefaultsElicitor(), None)
    quiet.on_notification("SessionEvent", {"eventType": "mcp_authorization_required", "payload": payload})
    await asyncio.sleep(0)
