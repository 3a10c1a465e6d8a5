"""The running window and its runtime updater, for real: a signed release site served on loopback,
the installed app simulated (``sys.frozen``, a resources folder with the bundled runtime and the
installer's ``update.json``), real runtime processes, the local backend and a scripted gateway.

The app checks at launch; an interrupted download is a quiet note; Help → Check for Runtime Updates
resumes it, the status bar shows the progress and "installed", and the next conversation runs the new
runtime. A bad manifest is a quiet note; a runtime update that crashes at once three times is rolled
back and the next conversation runs the previous version."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.app.bootstrap import UpdaterSetup, active_runtime_version
from desktop.app.main_window import AboutInfo, MainWindow
from desktop.launch.runtime import runtime_command
from desktop.updater.active import active_runtime
from desktop.updater.crashloop import CrashLoopGuard
from desktop.updater.indicator import NoteKind, UpdateNote
from desktop.updater.install import Installer
from desktop.updater.layout import InstallLayout, default_root
from desktop.updater.qt import RuntimeUpdater
from desktop.updater.service import UpdateService
from desktop.updater.state import UpdaterState
from tests.desktop.app.harness import (
    app_environment,
    assistant_texts,
    current,
    eventually,
    running_app,
    workbench,
)
from tests.desktop.support import Run
from tests.support.backend import Backend
from tests.support.release_server import Behaviour, ReleaseServer
from tests.updater.support import (
    CRASHING_LAUNCHER,
    PLATFORM,
    PROGRAM,
    ReleaseSite,
    build_bundle,
    unpack_plainly,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the synthetic runtimes are shell scripts")

ABOUT = AboutInfo(app_version="0.1.0", runtime_version="1.0.0", qt_version="6", python_version="3.11")
ANSWER = {"turns": [{"text": "Hello from the runtime."}], "repeatLastTurn": True}


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[ReleaseSite, ReleaseServer]]:
    release_site = ReleaseSite(tmp_path / "site")
    with ReleaseServer(release_site.directory) as server:
        yield release_site, server


@pytest.fixture
def installed_app(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app as its installer leaves it: frozen, with a resources folder holding the runtime bundled
    with it (1.0.0); returns that folder (``update.json`` goes there)."""
    resources = tmp_path / "Cowork"
    unpack_plainly(build_bundle(tmp_path, "1.0.0"), resources / "runtime")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr("desktop.updater.active.app_resources_dir", lambda app_executable=None: resources)
    return resources


class Notes:
    """Every note the status bar showed, in order."""

    def __init__(self, window: MainWindow) -> None:
        self.shown: list[UpdateNote | None] = []
        window.update_status.noteChanged.connect(self.shown.append)

    def texts(self) -> list[str]:
        return [note.text for note in self.shown if note is not None]


def note_of(window: MainWindow) -> UpdateNote | None:
    return window.update_status.note


def about_text(window: MainWindow) -> str:
    window.about_action.trigger()
    box = next(child for child in window.findChildren(QMessageBox) if child.isVisible())
    text = box.text()
    box.close()
    return text


def test_the_app_checks_at_launch_resumes_on_request_and_new_conversations_use_the_new_runtime(
    run: Run[None],
    backend: Backend,
    workspace: Path,
    home: Path,
    installed_app: Path,
    site: tuple[ReleaseSite, ReleaseServer],
) -> None:
    release_site, server = site
    archive = build_bundle(
        release_site.directory, "1.4.0", extra={"_internal/lib/data.bin": os.urandom(256 * 1024)}
    )
    release_site.publish([release_site.release("1.4.0", archive)])
    # The first download breaks off half-way, as a flaky network does.
    server.behave(archive.name, Behaviour(drop_after=archive.stat().st_size // 2, drop_times=1))
    (installed_app / "update.json").write_text(f'{{"manifestUrl": "{server.url}manifest.json"}}')
    setup = UpdaterSetup(root_keys=release_site.roots, first_delay_seconds=0.05)
    installed = default_root() / "versions/1.4.0/agent-runtime" / PROGRAM

    async def scenario() -> None:
        with ScriptedGatewayThread(ANSWER) as gateway:
            env = app_environment(home, backend, gateway.url)
            async with running_app(env, home / "logs", updater_setup=setup) as window:
                # The check at launch: the interrupted download is a quiet note, not a banner.
                failed = await eventually(
                    lambda: (note := note_of(window)) is not None and note.kind is NoteKind.PROBLEM and note,
                    what="the note of the interrupted download",
                    window=window,
                )
                assert failed.text.startswith("Runtime update postponed: ")
                assert "resume" in failed.text
                assert window.statusBar().isVisible()
                assert window.update_status.isVisible()
                assert not window.banner.isVisible()
                assert "Agent runtime: 1.0.0 (bundled with the app)" in about_text(window)
                assert runtime_command(env) == [str(installed_app / "runtime/agent-runtime" / PROGRAM)]

                # Help → Check for Runtime Updates: the download resumes where it broke off.
                notes = Notes(window)
                assert window.check_updates_action.isEnabled()
                window.check_updates_action.trigger()
                done = await eventually(
                    lambda: (
                        (note := note_of(window)) is not None and note.kind is not NoteKind.WORKING and note
                    ),
                    what="the end of the update",
                    timeout=30,
                    window=window,
                )
                assert done.text == "Runtime 1.4.0 installed; new conversations use it"
                assert window.update_status.text() == done.text
                assert window.update_status.label.text() == done.text  # it fits: shown whole
                texts = notes.texts()
                assert texts[0] == "Checking for runtime updates…"
                downloading = [t for t in texts if t.startswith("Downloading runtime 1.4.0 — ")]
                assert downloading, texts
                assert all(t.endswith(" %") for t in downloading)
                assert texts[-4:] == [
                    "Installing runtime 1.4.0…",
                    "Checking that runtime 1.4.0 starts…",
                    "Activating runtime 1.4.0…",
                    done.text,
                ]
                ranges = [r for name, r in server.requests if name == archive.name]
                assert ranges[0] is None
                assert ranges[-1] == f"bytes={archive.stat().st_size // 2}-"

                # What new conversations start now, and what About says.
                assert runtime_command(env) == [str(installed)]
                assert "Agent runtime: 1.4.0 (installed update)" in about_text(window)
                # …and the version CreateSession gives the Session Service's compatibility check.
                assert active_runtime_version(env) == "1.4.0"
                window.new_conversation(str(workspace))
                workbench(window).send("Say hello")
                await eventually(
                    lambda: current(window).state.status.task == "TASK_COMPLETED",
                    what="the task",
                    window=window,
                )
                assert assistant_texts(window)[-1] == "Hello from the runtime."
                # The conversation's runtime is the installed one: its start was reported for 1.4.0.
                assert CrashLoopGuard().possibly_running() == {"1.4.0"}
        # Closed in order: a clean end, which proves the new version.
        assert CrashLoopGuard().possibly_running() == set()
        assert active_runtime().version == "1.4.0"

    run(scenario())


def test_help_checks_on_request_a_bad_manifest_is_a_quiet_note_and_nothing_new_says_up_to_date(
    run: Run[None],
    backend: Backend,
    home: Path,
    site: tuple[ReleaseSite, ReleaseServer],
    caplog: pytest.LogCaptureFixture,
) -> None:
    release_site, server = site
    release_site.publish([], unsigned=True)
    # From source: the variable turns checks on; a day's delay, so only Help checks here.
    setup = UpdaterSetup(root_keys=release_site.roots, first_delay_seconds=86_400)
    caplog.set_level(logging.INFO, logger="desktop.app.bootstrap")

    async def scenario() -> None:
        env = app_environment(home, backend, "http://127.0.0.1:9")
        env["COWORK_UPDATE_MANIFEST_URL"] = server.url + "manifest.json"
        async with running_app(env, home / "logs", updater_setup=setup) as window:
            assert not window.statusBar().isVisible()
            assert server.requests == []
            window.check_updates_action.trigger()
            refused = await eventually(
                lambda: (note := note_of(window)) is not None and note.kind is NoteKind.PROBLEM and note,
                what="the refusal",
                window=window,
            )
            assert refused.text.startswith("Runtime update refused: The release manifest is not trusted")
            assert "Nothing to do: the runtime in use stays" in window.update_status.toolTip()
            assert window.statusBar().isVisible()
            assert not window.banner.isVisible()

            release_site.publish([])
            window.check_updates_action.trigger()
            answer = await eventually(
                lambda: (note := note_of(window)) is not None and note.kind is NoteKind.INFO and note,
                what="the answer",
                window=window,
            )
            assert answer.text == "The agent runtime is up to date"
            assert answer.linger_seconds is not None
            assert runtime_command(env) == [sys.executable, "-P", "-m", "agent_runtime"]
        assert [r.getMessage() for r in caplog.records if "runtime updates: checking" in r.getMessage()] == [
            f"runtime updates: checking {server.url}manifest.json (from COWORK_UPDATE_MANIFEST_URL) on the"
            " stable channel every 6 hours"
        ]

    run(scenario())


def test_a_runtime_update_that_crashes_at_once_three_times_is_rolled_back(
    run: Run[None],
    backend: Backend,
    workspace: Path,
    home: Path,
    installed_app: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # 1.1.0 works; 1.2.0 passed its health check but dies at once on real work.
    installer = Installer(InstallLayout(default_root()), bundled_dir=installed_app / "runtime")
    installer.layout.create()
    for version, launcher in (("1.1.0", None), ("1.2.0", CRASHING_LAUNCHER)):
        archive = build_bundle(tmp_path, version, **({"launcher": launcher} if launcher else {}))
        installer.activate(installer.unpack(archive, version=version, platform=PLATFORM))
    # An installer that wrote a bad channel: no update checks, one clear line, the app runs on.
    (installed_app / "update.json").write_text(
        '{"manifestUrl": "https://example.com/m.json", "channel": "nightly"}'
    )
    caplog.set_level(logging.INFO, logger="desktop.app.bootstrap")

    async def scenario() -> None:
        with ScriptedGatewayThread(ANSWER) as gateway:
            env = app_environment(home, backend, gateway.url)
            async with running_app(env, home / "logs") as window:
                assert not window.check_updates_action.isEnabled()
                window.new_conversation(str(workspace))
                for attempt in range(3):
                    task = workbench(window).send("Say hello")
                    assert task is not None
                    await asyncio.wait([task], timeout=30)
                    assert window.banner.isVisible(), f"attempt {attempt + 1}"
                    assert "exited with status 3" in window.banner.text.text()
                rolled_back = await eventually(
                    lambda: (note := note_of(window)) is not None and note,
                    what="the rollback note",
                    window=window,
                )
                assert rolled_back.text == "Runtime 1.2.0 kept crashing; new conversations use runtime 1.1.0"
                assert rolled_back.kind is NoteKind.PROBLEM
                assert active_runtime().version == "1.1.0"
                assert "crashed 3 times" in UpdaterState(installer.layout).bad_versions()["1.2.0"]
                # The next start is the previous version, through runtime_command.
                assert runtime_command(env) == [
                    str(default_root() / "versions/1.1.0/agent-runtime" / PROGRAM)
                ]
                workbench(window).send("Say hello")
                await eventually(
                    lambda: current(window).state.status.task == "TASK_COMPLETED",
                    what="the task",
                    window=window,
                )
                assert assistant_texts(window)[-1] == "Hello from the runtime."
                assert "Agent runtime: 1.1.0 (installed update)" in about_text(window)
        off = [r for r in caplog.records if r.getMessage().startswith("no runtime update checks")]
        assert [(r.levelno, r.getMessage()) for r in off] == [
            (
                logging.ERROR,
                f"no runtime update checks: the update channel 'nightly' from {installed_app / 'update.json'}"
                " is not one of stable, beta",
            )
        ]

    run(scenario())


def test_a_round_cut_short_leaves_no_progress_behind_and_an_answer_goes_after_a_while(
    qtbot: QtBot, tmp_path: Path, site: tuple[ReleaseSite, ReleaseServer]
) -> None:
    release_site, server = site
    archive = build_bundle(release_site.directory, "1.4.0")
    release_site.publish([release_site.release("1.4.0", archive)])
    server.behave(archive.name, Behaviour(stall_after=100))
    service = UpdateService(
        server.url + "manifest.json",
        root=tmp_path / "data",
        root_keys=release_site.roots,
        platform="linux-x86_64",
        bundled_dir=tmp_path / "no-bundled-runtime",
    )
    window = MainWindow(about=ABOUT, log_dir=tmp_path / "logs")
    qtbot.addWidget(window)
    window.show()
    updater = RuntimeUpdater(service, parent=window)
    window.attach_updater(updater)

    window.check_updates_action.trigger()
    qtbot.waitUntil(
        lambda: window.update_status.text().startswith("Downloading runtime 1.4.0 — "), timeout=10_000
    )
    assert window.statusBar().isVisible()
    assert window.update_status.bar.isVisible()
    with qtbot.waitSignal(
        updater.stageChanged, timeout=10_000, check_params_cb=lambda stage: stage == "idle"
    ):
        updater.stop(timeout=5)
    assert window.update_status.note is None
    assert not window.statusBar().isVisible()

    # The round cut short was asked for; the next, scheduled one is not: finding nothing, it is silent.
    release_site.publish([])
    with qtbot.waitSignal(updater.stageChanged, timeout=10_000, check_params_cb=lambda s: s == "idle"):
        assert updater.check_now()
    assert updater.last_result is not None
    assert window.update_status.note is None

    # An answer to the user lingers, then the status bar goes; a long note never widens the window.
    long = "Runtime update refused: " + "a very long reason " * 40
    window.show_update_note(UpdateNote(long, kind=NoteKind.PROBLEM, linger_seconds=0.05))
    assert window.statusBar().isVisible()
    assert window.update_status.text() == long
    assert window.update_status.label.text().endswith("…")
    assert window.width() < 1500
    qtbot.waitUntil(lambda: not window.statusBar().isVisible(), timeout=5_000)
    assert window.update_status.note is None
