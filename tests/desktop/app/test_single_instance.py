"""One app per user and data folder: a second ``cowork open DIR`` hands its folder to the running
app, whose window comes to the front with a conversation on that folder; the second process ends."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.app.bootstrap import DesktopApp, data_dir
from desktop.app.main_window import MainWindow
from desktop.app.single_instance import InstanceServer, hand_over, instance_name
from tests.desktop.app.harness import app_environment, assistant_texts, current, eventually
from tests.desktop.support import Run
from tests.support.backend import Backend
from tests.support.peers import REPO_ROOT


async def hand_over_from_another_process(name: str, folder: str | None, task: str | None = None) -> bool:
    """``hand_over`` as a second start runs it: in its own process (its blocking waits hold the
    interpreter, so from a thread of this one the server here could not answer meanwhile)."""
    program = (
        "import sys\n"
        "from desktop.app.single_instance import hand_over\n"
        f"sys.exit(0 if hand_over({name!r}, {folder!r}, {task!r}) else 1)\n"
    )
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", program, cwd=REPO_ROOT)
    async with asyncio.timeout(60):
        return await process.wait() == 0


def test_the_name_differs_per_user_and_per_data_folder(tmp_path: Path) -> None:
    one = instance_name(tmp_path / "a", user="ann")
    assert one == instance_name(tmp_path / "a", user="ann")
    assert one != instance_name(tmp_path / "b", user="ann")
    assert one != instance_name(tmp_path / "a", user="bob")
    assert len(one) < 40  # a Unix socket path has room for little more than 100 bytes


def test_a_request_reaches_the_running_app(run: Run[None], tmp_path: Path) -> None:
    async def scenario() -> None:
        server = InstanceServer(instance_name(tmp_path))
        assert server.listen()
        received: list[object] = []
        server.requested.connect(received.append)
        try:
            assert await hand_over_from_another_process(server.name, str(tmp_path), "Look around")
            await eventually(lambda: received, what="the request")
            assert received == [{"folder": str(tmp_path), "task": "Look around"}]
        finally:
            server.close()
        assert not hand_over(server.name, str(tmp_path))  # nobody listens now

    run(scenario())


@pytest.mark.skipif(sys.platform == "win32", reason="a stale socket file is a Unix leftover")
def test_a_socket_left_by_a_crashed_app_is_taken_over(run: Run[None], tmp_path: Path) -> None:
    async def scenario() -> None:
        name = instance_name(tmp_path)
        stale = Path(tempfile.gettempdir()) / name  # where Qt puts a relative name's Unix socket
        leftover = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        leftover.bind(str(stale))
        leftover.close()  # the file stays and nobody listens: as after a crash
        server = InstanceServer(name)
        try:
            assert server.listen()
            received: list[object] = []
            server.requested.connect(received.append)
            assert await hand_over_from_another_process(name, None)
            await eventually(lambda: received, what="the request")
            assert received == [{"folder": None, "task": None}]
        finally:
            server.close()

    run(scenario())


@asynccontextmanager
async def app_with_instance_server(env: dict[str, str], logs: Path) -> AsyncIterator[MainWindow]:
    """The app as ``run_app`` starts it: listening for second starts on its data folder's name."""
    server = InstanceServer(instance_name(data_dir()))
    assert server.listen()
    app = DesktopApp(env, logs)
    server.requested.connect(app.open_requested)
    task = asyncio.ensure_future(app.run())
    try:
        yield await eventually(
            lambda: app.window if app.window is not None and app.window.workbench is not None else None,
            what="the window with its workbench",
        )
    finally:
        server.close()
        if app.window is not None:
            app.window.close()
        async with asyncio.timeout(60):
            await task


def test_a_second_cowork_open_opens_its_folder_in_the_running_window(
    run: Run[None], backend: Backend, workspace: Path, home: Path
) -> None:
    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": [{"text": "Looked at the project."}]}) as gateway:
            env = app_environment(home, backend, gateway.url)
            async with app_with_instance_server(env, home / "logs") as window:
                assert window.welcome.isVisible()
                assert window.welcome.model_state.text() == f"Set up: demo-model at {gateway.url}."
                window.showMinimized()
                second = await asyncio.create_subprocess_exec(
                    *[sys.executable, "-m", "desktop", "open", str(workspace), "--task", "Have a look"],
                    cwd=REPO_ROOT,
                    env=dict(os.environ, QT_QPA_PLATFORM="offscreen"),
                    stderr=asyncio.subprocess.PIPE,
                )
                async with asyncio.timeout(60):
                    _, stderr = await second.communicate()
                assert second.returncode == 0, stderr.decode()
                assert "already running" in stderr.decode()
                await eventually(
                    lambda: (
                        window.workbench is not None
                        and window.workbench.current is not None
                        and current(window).state.status.task == "TASK_COMPLETED"
                    ),
                    what="the handed-over task's end",
                )
                assert current(window).folder == str(workspace)
                assert assistant_texts(window) == ["Looked at the project."]
                assert not window.isMinimized()
                assert not window.welcome.isVisible()  # a conversation, no longer the first steps
                # Run from source with no update channel: the greyed-out update check says why.
                assert not window.check_updates_action.isEnabled()
                assert "running from source" in window.check_updates_action.toolTip()

    run(scenario())
