"""``cowork exec`` end to end: the real program, the real local backend and runtime, real tools in a
project folder, and a scripted gateway. Text and ``--json`` output, approvals without a terminal."""

from __future__ import annotations

import json
from pathlib import Path

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.headless.approvals import NO_TERMINAL_REASON
from tests.headless.support import run_cowork, tool_call
from tests.integration.runtime.harness import STEP_EVENTS, TASK_EVENTS


def three_tools(workspace: Path, final: str = "All three steps are done.") -> list[dict[str, object]]:
    (workspace / "notes.txt").write_text("the notes\n")
    return [
        tool_call("ReadFile", "c1", path=str(workspace / "notes.txt")),
        tool_call("WriteFile", "c2", path=str(workspace / "out.txt"), content="written by the task\n"),
        tool_call("RunCommand", "c3", command="echo from-the-command"),
        {"text": final, "chunkSize": 5},
    ]


def tool_lines(stderr: str) -> list[str]:
    return [line.split(" (")[0] for line in stderr.splitlines() if line[:1] in "→✓✗"]


def test_a_multi_step_task_prints_the_answer_on_stdout_and_the_tools_on_stderr(
    env: dict[str, str], workspace: Path
) -> None:
    with ScriptedGatewayThread({"turns": three_tools(workspace)}) as gateway:
        result = run_cowork(
            ["-C", str(workspace), "--endpoint", gateway.url, "--approve-all", "Do the three things"], env
        )
        gateway.assert_done()
    assert result.returncode == 0, result.stderr
    assert result.stdout == "All three steps are done.\n"
    assert tool_lines(result.stderr) == [
        f"→ ReadFile {workspace / 'notes.txt'}",
        "✓ ReadFile",
        f"→ WriteFile {workspace / 'out.txt'}",
        "✓ WriteFile",
        "→ RunCommand echo from-the-command",
        "✓ RunCommand",
    ], result.stderr
    assert "warning: --approve-all approves every action" in result.stderr
    assert "Traceback" not in result.stderr
    assert (workspace / "out.txt").read_text() == "written by the task\n"
    # What the command printed went back to the model, not to the terminal.
    assert "from-the-command" not in result.stdout


def test_json_prints_every_session_event_as_one_json_line_with_its_id_chain(
    env: dict[str, str], workspace: Path
) -> None:
    with ScriptedGatewayThread({"turns": three_tools(workspace, "Done.")}) as gateway:
        result = run_cowork(
            ["-C", str(workspace), "--endpoint", gateway.url, "--json", "--approve-all", "Go"], env
        )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events, result.stderr
    session = events[0]["sessionId"]
    for event in events:
        kind = event["eventType"]
        assert event["eventId"], event
        assert event["workspaceId"], event
        assert event["sessionId"] == session, event
        if kind in STEP_EVENTS | TASK_EVENTS:
            assert event.get("taskId"), event
        if kind in STEP_EVENTS:
            assert event.get("stepId"), event
    kinds = [event["eventType"] for event in events]
    assert "task_started" in kinds
    assert kinds.index("task_started") < kinds.index("task_completed")
    assert kinds.index("tool_completed") < kinds.index("task_completed")
    assert kinds.count("tool_completed") == 3
    assert "".join(e["payload"]["text"] for e in events if e["eventType"] == "text_chunk") == "Done."
    # stderr keeps cowork's own notes; no tool lines in JSON mode.
    assert not tool_lines(result.stderr), result.stderr


def test_without_a_terminal_an_approval_is_denied_with_a_clear_reason(
    env: dict[str, str], workspace: Path
) -> None:
    turns = [tool_call("RunCommand", "c1", command="echo hi"), {"text": "I could not run it."}]
    with ScriptedGatewayThread({"turns": turns}) as gateway:
        result = run_cowork(
            ["-C", str(workspace), "--endpoint", gateway.url, "--approval-mode", "always", "Run it"], env
        )
    assert result.returncode == 5, result.stderr
    assert NO_TERMINAL_REASON in result.stderr
    assert "✗ RunCommand denied" in result.stderr
    assert "1 action(s) were refused" in result.stderr
    assert result.stdout == "I could not run it.\n"


def test_approve_all_without_a_terminal_runs_the_action_after_a_warning(
    env: dict[str, str], workspace: Path
) -> None:
    target = workspace / "made-by-command.txt"
    turns = [tool_call("RunCommand", "c1", command=f"touch {target}"), {"text": "Ran it."}]
    with ScriptedGatewayThread({"turns": turns}) as gateway:
        args = ["-C", str(workspace), "--endpoint", gateway.url, "--approval-mode", "always"]
        result = run_cowork([*args, "--approve-all", "Run it"], env)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0].startswith("warning: --approve-all approves every action")
    assert NO_TERMINAL_REASON not in result.stderr
    assert target.exists()
