"""Project instructions through the real runtime: the ``AGENTS.md``/``CLAUDE.md`` files found are
reported in ``session_started``, go into the system prompt, and the prompt stays byte for byte the same
across the requests of a session and across a crash and resume — even when a file changes meanwhile
(the checkpoint keeps what the session read)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_runtime.scripted_gateway import ScriptedGateway
from tests.integration.runtime.harness import Backend, Launch, tool_call


def system_text(body: dict[str, Any]) -> str:
    """The system prompt of a recorded Anthropic request: a string, or text blocks."""
    system = body.get("system") or ""
    return system if isinstance(system, str) else "".join(block["text"] for block in system)


async def test_instruction_files_are_reported_and_the_prompt_is_stable_across_steps_and_a_resume(
    launch: Launch, backend: Backend, tmp_path: Path
) -> None:
    repo = (tmp_path / "repo").resolve()
    project = repo / "app"
    project.mkdir(parents=True)
    (repo / ".git").mkdir()
    (tmp_path / "AGENTS.md").write_text("Outside the repository: never loaded.\n")
    (repo / "AGENTS.md").write_text("Run the tests with pytest -q.\n")
    (project / "CLAUDE.md").write_text("Keep functions short.\n")
    config_home = tmp_path / "xdg-config"
    (config_home / "Cowork").mkdir(parents=True)
    (config_home / "Cowork" / "AGENTS.md").write_text("Answer in British English.\n")
    (project / "notes.txt").write_text("hello\n")
    script = [
        {"toolCalls": [tool_call("ReadFile", "r1", path=str(project / "notes.txt"))]},
        {"text": "Read it."},
        {"text": "After the restart."},
    ]
    extra = {"XDG_CONFIG_HOME": str(config_home)}
    async with ScriptedGateway(script) as gateway:
        first = await launch(gateway.url, extra=extra, label="before the crash")
        await first.create_session(backend, project)
        started = await first.event("session_started")
        assert (await first.run_task("Read notes.txt"))["eventType"] == "task_completed"
        await first.kill()
        # Changed after the session read it: the resumed session still sends what it read.
        (repo / "AGENTS.md").write_text("Changed while the runtime was down.\n")
        second = await launch(gateway.url, extra=extra, label="after the crash")
        await second.resume(first.session_id or "")
        assert (await second.run_task("Again", task_id="task_2"))["eventType"] == "task_completed"
        gateway.assert_done()
        systems = [system_text(request.body) for request in gateway.requests]

    assert started["payload"]["instructionFiles"] == [
        {"path": str(config_home / "Cowork" / "AGENTS.md"), "sizeBytes": 27, "truncated": False},
        {"path": str(repo / "AGENTS.md"), "sizeBytes": 30, "truncated": False},
        {"path": str(project / "CLAUDE.md"), "sizeBytes": 22, "truncated": False},
    ]
    assert len(systems) == 3
    assert systems[0] == systems[1] == systems[2]
    prompt = systems[0]
    assert "## Project instructions" in prompt
    assert prompt.index("British English") < prompt.index("pytest -q") < prompt.index("functions short")
    assert "never loaded" not in prompt
    assert "Changed while" not in prompt


async def test_a_project_without_instruction_files_reports_none(
    launch: Launch, backend: Backend, workspace: Path, tmp_path: Path
) -> None:
    async with ScriptedGateway([{"text": "ok"}]) as gateway:
        rt = await launch(gateway.url, extra={"XDG_CONFIG_HOME": str(tmp_path / "empty-config")})
        await rt.create_session(backend, workspace)
        started = await rt.event("session_started")
        await rt.run_task("hi")
        system = system_text(gateway.requests[0].body)
    assert started["payload"]["instructionFiles"] == []
    assert "Project instructions" not in system
