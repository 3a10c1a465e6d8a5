"""The Linux desktop package as a user gets it: ``cowork-VERSION-linux-x86_64.tar.gz`` from
``cowork-release app`` (built once per change, :mod:`tests.installer.package`), unpacked, launched.

The packaged ``Cowork`` opens offscreen on a project with a task, starts its embedded backend through
its own ``cowork-cli``, starts the runtime bundled inside it, runs the task against a scripted gateway,
reads its ``update.json``, and on SIGTERM closes with status 0 leaving no process behind. The
console program runs ``cowork exec`` on its own and refuses to run any module it does not list. The
package holds the Qt the app uses and nothing of what it must not ship.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from contracts.release import FILE_LIST_NAME, BundleFileList
from cowork_release.appinfo import app_version
from tests.installer.package import MANIFEST_URL, linux_package, unpack_package, user_environment

START_TIMEOUT_S = 60
TASK_TIMEOUT_S = 90
EXIT_TIMEOUT_S = 30


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The unpacked package: ``…/Cowork``."""
    return unpack_package(linux_package(), tmp_path_factory.mktemp("installed"))


def log_lines(path: Path) -> list[dict[str, str]]:
    try:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except FileNotFoundError:
        return []


def wait_until(
    check: Callable[[], bool], *, timeout: float, what: str, process: subprocess.Popen[bytes]
) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if process.poll() is not None:
            raise AssertionError(f"the app ended ({process.returncode}) before {what}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} within {timeout:g} s")
        time.sleep(0.05)


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def alive(processes: list[psutil.Process]) -> list[str]:
    found = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                found.append(f"{process.pid}: {' '.join(process.cmdline())}")
        except psutil.NoSuchProcess:
            continue
    return found


@pytest.fixture
def launched() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test starts; whatever is still running at the end is killed with its children."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        leftovers = descendants(process.pid)
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        for child in leftovers:
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()


def test_the_packaged_app_runs_a_task_with_its_bundled_runtime_and_closes_cleanly(
    package: Path, tmp_path: Path, launched: list[subprocess.Popen[bytes]]
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "project"
    workspace.mkdir()
    notes = workspace / "notes.txt"
    notes.write_text("The launch code is 4-8-15-16.\n")
    script = {
        "turns": [
            {
                "text": "Reading the notes.",
                "toolCalls": [{"id": "read1", "name": "ReadFile", "arguments": {"path": str(notes)}}],
            },
            {"text": "The notes hold the launch code."},
        ]
    }
    output_file = tmp_path / "app-output.txt"
    with ScriptedGatewayThread(script) as gateway, output_file.open("wb") as output:
        env = user_environment(home, LLM_GATEWAY_ENDPOINT=gateway.url, LLM_GATEWAY_MODEL="demo-model")
        app = subprocess.Popen(
            [str(package / "Cowork"), "open", str(workspace), "--task", "What do the notes say?"],
            env=env,
            cwd=home.parent,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        launched.append(app)
        log = home / ".local" / "state" / "Cowork" / "log" / "desktop.log"

        def shown() -> bool:
            return any(line["message"] == "main window shown" for line in log_lines(log))

        def answered() -> bool:
            return len(gateway.requests) >= 2 and gateway.requests[1].outcome == "completed"

        wait_until(shown, timeout=START_TIMEOUT_S, what="the main window", process=app)

        # The task: the runtime reads the file and the gateway's second request carries its content.
        wait_until(answered, timeout=TASK_TIMEOUT_S, what="the task's second model call", process=app)
        tool_results = [
            block
            for message in gateway.requests[1].body["messages"]
            for block in (message["content"] if isinstance(message["content"], list) else [])
            if block.get("type") == "tool_result"
        ]
        assert [(r["tool_use_id"], r["content"]) for r in tool_results] == [
            ("read1", "The launch code is 4-8-15-16.\n")
        ]
        gateway.assert_done()

        # What the app started: the bundled runtime, and the backend through its own console program.
        children = descendants(app.pid)
        exes = {}
        for child in children:
            with contextlib.suppress(psutil.NoSuchProcess):  # a short-lived helper may be gone already
                exes[child.pid] = (child.exe(), child.cmdline())
        runtimes = [exe for exe, _ in exes.values() if Path(exe).is_relative_to(package / "runtime")]
        assert runtimes == [str(package / "runtime" / "agent-runtime" / "agent-runtime")], exes
        [backend] = [cmd for _, cmd in exes.values() if "backend.cli" in cmd]
        assert backend[:4] == [str(package / "cowork-cli"), "--cowork-child", "backend.cli", "serve"]

        messages = [line["message"] for line in log_lines(log)]
        assert f"(from {package / 'update.json'}) on the beta channel" in "\n".join(messages)
        assert MANIFEST_URL in "\n".join(messages)

        app.send_signal(signal.SIGTERM)
        assert app.wait(timeout=EXIT_TIMEOUT_S) == 0
        _gone, still = psutil.wait_procs(children, timeout=10)
        assert alive(still) == []
    text = output_file.read_text(errors="replace")
    assert "Traceback" not in text, text[-3000:]
    assert not any(line["level"] in ("error", "critical") for line in log_lines(log)), log.read_text()


def test_cowork_cli_runs_a_task_with_the_offline_demo_model(package: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "todo.md").write_text("Ship the Linux package.\n")
    result = subprocess.run(
        # --approve-all: the demo's tour ends with a harmless command, which asks; here nobody can answer.
        [
            str(package / "cowork-cli"),
            "exec",
            "--demo",
            "--approve-all",
            "-C",
            str(workspace),
            "Summarise todo.md",
        ],
        env=user_environment(tmp_path / "home"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TASK_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert f"→ ReadFile {workspace / 'todo.md'}" in result.stderr
    assert "Ship the Linux package." in result.stdout
    assert "[Offline demo model — not a real LLM]" in result.stdout


def test_the_console_program_runs_no_module_it_does_not_list(package: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [str(package / "cowork-cli"), "--cowork-child", "os", "-c", "print('ran')"],
        env=user_environment(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "is not one of the app's helper programs" in result.stderr
    assert "ran" not in result.stdout


def frozen_modules(program: Path) -> set[str]:
    """The Python modules frozen into a program's archive (PyInstaller's PYZ)."""
    from PyInstaller.archive.readers import CArchiveReader

    archive = CArchiveReader(str(program))
    [pyz] = [name for name in archive.toc if name.endswith(".pyz")]
    return set(archive.open_embedded_archive(pyz).toc)


def test_the_package_holds_what_the_app_needs_and_nothing_it_must_not_ship(package: Path) -> None:
    files = [p.relative_to(package).as_posix() for p in package.rglob("*") if p.is_file() or p.is_symlink()]
    internal = [name.removeprefix("_internal/") for name in files if name.startswith("_internal/")]

    # Qt: the five modules the desktop imports (QtDBus for desktop notifications); no QML, Quick, PDF
    # or virtual keyboard; of Qt's translations only those of the languages the app is translated
    # to, beside the app's own.
    qt_modules = sorted(
        n.split("/")[1].split(".")[0] for n in internal if n.startswith("PySide6/Qt") and n.count("/") == 1
    )
    assert qt_modules == ["QtCore", "QtDBus", "QtGui", "QtNetwork", "QtWidgets"]
    forbidden = ("libQt6Qml", "libQt6Quick", "libQt6Pdf", "libQt6VirtualKeyboard", "libpyside6qml", "libgtk")
    assert [n for n in internal if Path(n).name.startswith(forbidden)] == []
    assert sorted(n for n in internal if n.endswith(".qm")) == [
        "desktop/translations/cowork_de.qm",
        "desktop/translations/qtbase_de.qm",
    ]
    for plugin in ("platforms/libqxcb.so", "platforms/libqwayland.so", "platforms/libqoffscreen.so"):
        assert f"PySide6/Qt/plugins/{plugin}" in internal
    assert [p for p in package.rglob("*") if p.is_symlink() and not p.exists()] == []

    # Python: the desktop, the backend's local store and the demo model — not the runtime, not AWS.
    modules = frozen_modules(package / "Cowork")
    frozen_in = {"desktop.app.bootstrap", "desktop.updater.keys", "backend.storage.local"}
    # code blocks, with the Pygments lexers and styles they look up by name at run time
    frozen_in |= {"desktop.app.code_blocks", "pygments.lexers.python", "pygments.styles.gh_dark"}
    assert frozen_in | {"agent_runtime.scripted_gateway.cli", "keyring.backends.SecretService"} <= modules
    shipped_not = (
        "agent_runtime.agent_host",
        "agent_runtime.tool_runtime",
        "boto3",
        "botocore",
        "backend.storage.aws",
    )
    assert sorted(m for m in modules if m.startswith(shipped_not)) == []
    assert [n for n in internal if n.split("/")[0] in ("boto3", "botocore", "tiktoken_ext")] == []
    assert (package / "cowork-cli").read_bytes() == (package / "Cowork").read_bytes()

    # The runtime bundled beside the programs is an installed bundle: its file list and its program.
    listing = BundleFileList.model_validate_json((package / "runtime" / FILE_LIST_NAME).read_bytes())
    assert listing.platform == "linux-x86_64"
    assert os.access(package / "runtime" / "agent-runtime" / listing.executable, os.X_OK)
    assert json.loads((package / "update.json").read_text()) == {
        "manifestUrl": MANIFEST_URL,
        "channel": "beta",
    }
    # About shows importlib.metadata's version of cowork: its metadata is frozen with the app.
    [metadata] = [n for n in internal if n.startswith("cowork") and n.endswith(("/PKG-INFO", "/METADATA"))]
    assert f"\nVersion: {app_version()}\n" in (package / "_internal" / metadata).read_text()
    # The window's icon sits where desktop.app.bootstrap looks for it, beside the frozen module.
    assert "desktop/app/cowork.png" in internal
