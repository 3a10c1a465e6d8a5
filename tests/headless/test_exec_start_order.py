"""What ``cowork exec`` does while its session starts, in this process (the real backend, runtime and
scripted gateway): the project's saved rules are read on a worker thread once the session is being
created — not on the event loop while the backend and the runtime are still starting, where reading
them (importing their models) took a core from both — and they still go out with the task."""

from __future__ import annotations

import asyncio
import io
import json
import threading
from pathlib import Path
from typing import Any

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.headless.approvals import UnattendedApprover
from desktop.headless.outcome import ExitCode
from desktop.headless.render import JsonRenderer
from desktop.headless.run import ExecOptions, run_exec
from desktop.settings.rules import ProjectRules
from desktop.settings.store import SettingsStore
from tests.headless.support import tool_call


def test_the_saved_rules_are_read_off_the_event_loop_and_apply_to_the_task(
    env: dict[str, str], workspace: Path
) -> None:
    settings = Path(env["XDG_CONFIG_HOME"]) / "Cowork" / "settings.json"
    settings.parent.mkdir(parents=True)
    rules = {str(workspace): {"permissionRules": [{"kind": "command", "pattern": "touch *"}]}}
    settings.write_text(json.dumps({"version": 1, "projects": rules}))
    reads: list[str] = []

    def saved_rules() -> list[dict[str, Any]]:
        reads.append(threading.current_thread().name)
        return ProjectRules(SettingsStore(settings)).wire_for_project(workspace)

    target = workspace / "ruled.txt"
    turns = [tool_call("RunCommand", "c1", command=f"touch {target}"), {"text": "Done."}]
    out, err = io.StringIO(), io.StringIO()
    with ScriptedGatewayThread({"turns": turns}) as gateway:
        options = ExecOptions(
            prompt="Touch it",
            workspace=workspace,
            # No terminal to answer a prompt: only the saved rule can approve the command.
            permission_rules=saved_rules,
            endpoint=gateway.url,
        )
        status = asyncio.run(
            run_exec(options, env, JsonRenderer(out, err), UnattendedApprover(approve_all=False))
        )
    assert status == ExitCode.COMPLETED, err.getvalue()
    assert len(reads) == 1
    assert reads[0] != threading.main_thread().name
    assert target.exists(), "the saved rule approved the command"
    assert "1 saved permission rule(s) of this project apply" in err.getvalue()
    kinds = [json.loads(line)["eventType"] for line in out.getvalue().splitlines()]
    assert kinds[0] == "session_started"
