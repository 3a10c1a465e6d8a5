"""Prompt commands and project instructions in ``cowork exec``, end to end: the real program, backend
and runtime, and a scripted gateway that records what it was sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from tests.headless.support import run_cowork


def system_text(body: dict[str, Any]) -> str:
    """The system prompt of a recorded Anthropic request: a string, or text blocks."""
    system = body.get("system") or ""
    return system if isinstance(system, str) else "".join(block["text"] for block in system)


def user_commands(env: dict[str, str]) -> Path:
    folder = Path(env["XDG_CONFIG_HOME"]) / "Cowork" / "commands"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def sent_prompt(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    content = messages[-1]["content"]
    return content if isinstance(content, str) else " ".join(part["text"] for part in content)


def test_a_slash_command_is_expanded_with_its_arguments_and_the_project_one_wins(
    env: dict[str, str], workspace: Path
) -> None:
    (user_commands(env) / "review.md").write_text("USER VERSION $ARGUMENTS\n")
    (user_commands(env) / "explain.md").write_text("Explain this to a newcomer.\n")
    project = workspace / ".cowork" / "commands"
    project.mkdir(parents=True)
    (project / "review.md").write_text(
        "---\ndescription: Review a file\n---\nReview $ARGUMENTS for bugs; list them by severity.\n"
    )
    with ScriptedGatewayThread({"turns": [{"text": "Reviewed."}, {"text": "Explained."}]}) as gateway:
        reviewed = run_cowork(["-C", str(workspace), "--endpoint", gateway.url, "/review src/app.py"], env)
        explained = run_cowork(
            ["-C", str(workspace), "--endpoint", gateway.url, "/explain the retry loop"], env
        )
        gateway.assert_done()
        prompts = [sent_prompt(request.body) for request in gateway.requests]
    assert reviewed.returncode == 0, reviewed.stderr
    assert explained.returncode == 0, explained.stderr
    assert prompts == [
        "Review src/app.py for bugs; list them by severity.",
        "Explain this to a newcomer.\n\nthe retry loop",
    ]


def test_an_unknown_command_is_an_error_listing_the_known_ones_and_nothing_is_sent(
    env: dict[str, str], workspace: Path
) -> None:
    (user_commands(env) / "explain.md").write_text("Explain.\n")
    (workspace / ".cowork" / "commands").mkdir(parents=True)
    (workspace / ".cowork" / "commands" / "review.md").write_text("Review.\n")
    with ScriptedGatewayThread({"turns": [{"text": "never"}]}) as gateway:
        result = run_cowork(["-C", str(workspace), "--endpoint", gateway.url, "/reveiw x"], env)
        assert gateway.requests == []
    assert result.returncode == 2
    assert "There is no command /reveiw. Known commands: /explain, /review." in result.stderr
    assert "Traceback" not in result.stderr


def test_a_path_or_a_double_slash_is_sent_as_typed(env: dict[str, str], workspace: Path) -> None:
    with ScriptedGatewayThread({"turns": [{"text": "a"}, {"text": "b"}]}) as gateway:
        first = run_cowork(["-C", str(workspace), "--endpoint", gateway.url, "/etc/hosts: what is it?"], env)
        second = run_cowork(["-C", str(workspace), "--endpoint", gateway.url, "//not a command"], env)
        prompts = [sent_prompt(request.body) for request in gateway.requests]
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    assert prompts == ["/etc/hosts: what is it?", "/not a command"]


def test_json_reports_the_instruction_files_in_session_started(env: dict[str, str], workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("Use tabs.\n")
    with ScriptedGatewayThread({"turns": [{"text": "ok"}]}) as gateway:
        result = run_cowork(["-C", str(workspace), "--endpoint", gateway.url, "--json", "hi"], env)
        system = system_text(gateway.requests[0].body)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    [started] = [event for event in events if event["eventType"] == "session_started"]
    assert started["payload"]["instructionFiles"] == [
        {"path": str(workspace / "AGENTS.md"), "sizeBytes": 10, "truncated": False}
    ]
    assert "Use tabs." in system
