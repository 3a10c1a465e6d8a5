"""``cowork open DIR --task PROMPT``: the window opens on a project folder and starts the task there,
as choosing the folder and sending the prompt would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.app.bootstrap import OpenRequest
from tests.desktop.app.harness import app_environment, assistant_texts, current, eventually, running_app
from tests.desktop.support import Run
from tests.support.backend import Backend
from tests.support.peers import REPO_ROOT


def test_open_with_a_task_starts_it_in_a_conversation_on_the_folder(
    run: Run[None], backend: Backend, workspace: Path, home: Path
) -> None:
    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": [{"text": "Looked at the project."}]}) as gateway:
            env = app_environment(home, backend, gateway.url)
            opening = OpenRequest(folder=str(workspace), task="Have a look at the project")
            async with running_app(env, home / "logs", opening=opening) as window:
                await eventually(
                    lambda: current(window).state.status.task == "TASK_COMPLETED", what="the task's end"
                )
                assert current(window).folder == str(workspace)
                assert assistant_texts(window) == ["Looked at the project."]
                [request] = gateway.requests
                assert "Have a look at the project" in str(request.body)

    run(scenario())


def test_open_refuses_a_folder_that_does_not_exist(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    result = subprocess.run(
        [sys.executable, "-m", "desktop", "open", str(missing), "--task", "x"],
        cwd=REPO_ROOT,
        env=dict(os.environ, QT_QPA_PLATFORM="offscreen"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert f"{missing} is not a folder" in result.stderr
