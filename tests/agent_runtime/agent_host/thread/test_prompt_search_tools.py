"""The system prompt steers the model to EditFile and the search tools rather than the shell."""

from __future__ import annotations

from agent_runtime.agent_host.thread import build_system_prompt
from agent_runtime.tool_runtime import LocalToolRouter
from contracts.enums import OsFamily


def test_the_prompt_says_when_to_prefer_each_tool_over_run_command() -> None:
    tools = LocalToolRouter().get_available_tools()
    prompt = build_system_prompt(["/home/u/proj"], OsFamily.LINUX, tools)
    lines = {line.split(":", 1)[0]: line for line in prompt.splitlines() if line.startswith("- ")}
    for name in ("ListDirectory", "Glob", "Grep"):
        assert "instead of" in lines[f"- {name}"]
        assert "RunCommand" in lines[f"- {name}"]
    assert "Use WriteFile only for new files or complete rewrites" in lines["- EditFile"]
    assert "rather than ls, find, cat or grep" in lines["- RunCommand"]
    assert "Glob, Grep, ListDirectory, ReadFile" in lines["- RunCommand"]


def test_without_the_search_tools_run_command_is_not_told_to_use_them() -> None:
    tools = [t for t in LocalToolRouter().get_available_tools() if t.tool_name in ("ReadFile", "RunCommand")]
    prompt = build_system_prompt(["/home/u/proj"], OsFamily.LINUX, tools)
    assert "rather than ls" not in prompt
