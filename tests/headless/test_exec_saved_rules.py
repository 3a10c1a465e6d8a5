"""``cowork exec`` and saved permission rules: it reads the project's rules from the settings file the
desktop writes, sends them with StartTask, and a ``p`` answer on the terminal saves one there."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.headless.approvals import NO_TERMINAL_REASON
from tests.headless.support import run_cowork, tool_call
from tests.headless.test_exec_terminal import PROMPT, Terminal


def settings_file(env: dict[str, str]) -> Path:
    return Path(env["XDG_CONFIG_HOME"]) / "Cowork" / "settings.json"


def save_rules(env: dict[str, str], project: Path, rules: list[dict[str, str]]) -> None:
    path = settings_file(env)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"version": 1, "projects": {str(project.resolve()): {"permissionRules": rules}}}
    path.write_text(json.dumps(data))


def test_cowork_exec_sends_the_projects_saved_rules_and_a_rule_answers_the_prompt(
    env: dict[str, str], workspace: Path
) -> None:
    save_rules(env, workspace, [{"kind": "command", "pattern": "touch *"}])
    ruled, other = workspace / "by-rule.txt", workspace / "not-by-rule.txt"
    turns = [
        tool_call("RunCommand", "c1", command=f"touch {ruled}"),
        tool_call("RunCommand", "c2", command=f"touch {other} && ls"),
        {"text": "Done."},
    ]
    with ScriptedGatewayThread({"turns": turns}) as gateway:
        result = run_cowork(["-C", str(workspace), "--endpoint", gateway.url, "--json", "Touch"], env)
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    resolved = [event["payload"] for event in events if event["eventType"] == "approval_resolved"]
    # No terminal: the prompt the rule answers is approved by it; the one it does not cover is denied.
    assert ruled.exists(), result.stderr
    assert not other.exists()
    assert [(p["decision"], p.get("savedRule")) for p in resolved] == [
        ("approved", "Run: touch *"),
        ("denied", None),
    ]
    assert NO_TERMINAL_REASON in result.stderr
    assert "1 saved permission rule(s) of this project apply" in result.stderr


def test_a_rule_of_another_project_or_a_broken_entry_is_not_sent(
    env: dict[str, str], workspace: Path
) -> None:
    other = workspace.parent / "elsewhere"
    other.mkdir()
    path = settings_file(env)
    path.parent.mkdir(parents=True, exist_ok=True)
    projects = {
        str(other): {"permissionRules": [{"kind": "command", "pattern": "touch *"}]},
        str(workspace): {"permissionRules": [{"kind": "command", "pattern": "touch; rm *"}]},
    }
    path.write_text(json.dumps({"version": 1, "projects": projects}))
    target = workspace / "x.txt"
    turns = [tool_call("RunCommand", "c1", command=f"touch {target}"), {"text": "Done."}]
    with ScriptedGatewayThread({"turns": turns}) as gateway:
        result = run_cowork(["-C", str(workspace), "--endpoint", gateway.url, "Touch"], env)
    assert not target.exists()
    assert NO_TERMINAL_REASON in result.stderr
    assert "saved permission rule" not in result.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX-only")
def test_p_on_the_terminal_saves_the_rule_and_the_next_run_is_not_asked(
    env: dict[str, str], workspace: Path
) -> None:
    target = workspace / "notes.md"
    turns = [tool_call("WriteFile", "c1", path=str(target), content="one\n"), {"text": "Finished."}]
    args = ["-C", str(workspace), "--approval-mode", "always", "Write it"]
    with ScriptedGatewayThread({"turns": turns}) as gateway:
        term = Terminal(["--endpoint", gateway.url, *args], env)
        try:
            term.read_until(PROMPT)
            shown = term.text()
            term.type("p\n")
            status = term.finish()
        finally:
            term.close()
    assert status == 0, term.text()
    assert "or [p]: always allow in this project (path notes.md)" in shown
    assert "saved for this project: Write: notes.md" in term.text()
    saved = json.loads(settings_file(env).read_text())
    assert saved["projects"][str(workspace.resolve())]["permissionRules"] == [
        {"kind": "path", "pattern": "notes.md"}
    ]

    # The next run, without a terminal, is answered by the saved rule instead of being refused.
    turns = [tool_call("WriteFile", "c1", path=str(target), content="two\n"), {"text": "Again."}]
    with ScriptedGatewayThread({"turns": turns}) as gateway:
        result = run_cowork(["--endpoint", gateway.url, *args], env)
    assert result.returncode == 0, result.stderr
    assert target.read_text() == "two\n"
    assert NO_TERMINAL_REASON not in result.stderr
    assert "allowed without asking by the project's saved rule Write: notes.md" in result.stderr
