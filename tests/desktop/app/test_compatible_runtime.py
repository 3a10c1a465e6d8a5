"""The backend refuses the runtime in use, and the window offers a compatible one (seed 001 §11; issue 22
"Runtime compatibility"), for real: the installed app simulated with its bundled runtime 1.0.0, a backend
that accepts runtimes ``>=1.1,<2`` only, a signed release site on loopback publishing 1.4.0 and 2.0.0,
real runtime processes and a scripted gateway.

The first start is refused; the banner offers "Download a compatible runtime"; the dialog installs 1.4.0
— the newest the backend accepts, not the manifest's newest — and the session starts again with it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.app.bootstrap import UpdaterSetup
from desktop.app.compatible_runtime import CompatibleRuntimeDialog
from desktop.conversation.banners import BannerAction
from desktop.conversation.session import Phase
from desktop.updater.active import active_runtime
from desktop.updater.crashloop import CrashLoopGuard
from desktop.updater.outcome import UpdateStatus
from tests.desktop.app.harness import (
    app_environment,
    assistant_texts,
    current,
    eventually,
    running_app,
    workbench,
)
from tests.desktop.support import Run
from tests.support.backend import Backend, start_backend
from tests.support.release_server import ReleaseServer
from tests.updater.support import ReleaseSite, build_bundle, unpack_plainly

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the synthetic runtimes are shell scripts")

RANGE = str(SpecifierSet(">=1.1,<2"))
"""The backend's range as it states it."""
ANSWER = {"turns": [{"text": "Hello from a compatible runtime."}], "repeatLastTurn": True}


@pytest.fixture
def strict_backend(tmp_path: Path) -> Iterator[Backend]:
    """A backend that accepts agent runtimes 1.1 to 2 (exclusive) only."""
    config = tmp_path / "backend-config"
    config.mkdir()
    (config / "backend.toml").write_text('[compatibility.localAgentHostVersion]\nsupported = ">=1.1,<2"\n')
    with start_backend(tmp_path / "strict-backend", config_dir=config) as running:
        yield running


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[ReleaseSite, ReleaseServer]]:
    release_site = ReleaseSite(tmp_path / "site")
    with ReleaseServer(release_site.directory) as server:
        yield release_site, server


@pytest.fixture
def installed_app(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app as its installer leaves it: frozen, with the runtime bundled with it (1.0.0)."""
    resources = tmp_path / "Cowork"
    unpack_plainly(build_bundle(tmp_path, "1.0.0"), resources / "runtime")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr("desktop.updater.active.app_resources_dir", lambda app_executable=None: resources)
    return resources


def test_a_refused_runtime_is_replaced_by_a_compatible_one_and_the_session_starts_again(
    run: Run[None],
    qtbot: QtBot,
    strict_backend: Backend,
    workspace: Path,
    home: Path,
    installed_app: Path,
    site: tuple[ReleaseSite, ReleaseServer],
) -> None:
    release_site, server = site
    release_site.publish(
        [
            release_site.release("1.4.0", build_bundle(release_site.directory, "1.4.0")),
            release_site.release("2.0.0", build_bundle(release_site.directory, "2.0.0")),
        ]
    )
    (installed_app / "update.json").write_text(f'{{"manifestUrl": "{server.url}manifest.json"}}')
    # No scheduled check during the test: the only round is the one the dialog asks for.
    setup = UpdaterSetup(root_keys=release_site.roots, first_delay_seconds=3600)

    async def scenario() -> None:
        with ScriptedGatewayThread(ANSWER) as gateway:
            env = app_environment(home, strict_backend, gateway.url)
            async with running_app(env, home / "logs", updater_setup=setup) as window:
                window.new_conversation(str(workspace))
                workbench(window).send("Say hello")
                session = current(window)
                banner = await eventually(
                    lambda: session.state.banner if session.state.banner is not None else None,
                    what="the refusal",
                    window=window,
                )
                assert banner.action is BannerAction.UPDATE_RUNTIME
                assert f"accepts runtime versions {RANGE}" in banner.text
                assert session.incompatibility is not None
                assert session.incompatibility.runtime_version == "1.0.0"
                assert session.phase is Phase.IDLE

                window.act(BannerAction.UPDATE_RUNTIME)
                dialog = window.compatible_dialog
                assert isinstance(dialog, CompatibleRuntimeDialog)
                assert dialog.isVisible()
                assert RANGE in dialog.message.text()
                qtbot.mouseClick(dialog.download_button, Qt.MouseButton.LeftButton)
                await eventually(
                    lambda: dialog.result_of_round is not None,
                    what="the installation",
                    timeout=60,
                    window=window,
                )
                assert dialog.result_of_round is not None
                assert dialog.result_of_round.status is UpdateStatus.INSTALLED
                assert dialog.result_of_round.version == "1.4.0"
                assert not dialog.isVisible()
                # The session started again, on its own, with the compatible runtime.
                await eventually(lambda: session.phase is Phase.READY, what="the session", window=window)
                assert session.state.banner is None
                assert session.incompatibility is None
                workbench(window).send("Say hello")
                await eventually(
                    lambda: session.state.status.task == "TASK_COMPLETED", what="the task", window=window
                )
                assert assistant_texts(window)[-1] == "Hello from a compatible runtime."
                assert CrashLoopGuard().possibly_running() == {"1.4.0"}
        assert active_runtime().version == "1.4.0"

    run(scenario())
