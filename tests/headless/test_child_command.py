"""``desktop.launch.child``: the command line of the embedded backend and the demo model — ``python -m``
from source, the app's own console program in the installed app — and only for listed modules."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from desktop.launch.child import CHILD_OPTION, CHILD_PROGRAMS, cli_program, creation_flags, module_command


def test_from_source_a_helper_runs_as_python_dash_m_without_the_current_folder_on_its_path() -> None:
    assert module_command("backend.cli") == [sys.executable, "-P", "-m", "backend.cli"]
    assert module_command("agent_runtime.scripted_gateway") == [
        sys.executable,
        "-P",
        "-m",
        "agent_runtime.scripted_gateway",
    ]


def test_in_the_installed_app_a_helper_runs_through_the_console_program_beside_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    app = tmp_path / "Cowork" / "Cowork"
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(app))
    assert module_command("backend.cli") == [str(app.parent / "cowork-cli"), CHILD_OPTION, "backend.cli"]
    mac = tmp_path / "Cowork.app" / "Contents" / "MacOS" / "Cowork"
    assert cli_program(str(mac)) == mac.parent / "cowork-cli"


def test_on_windows_the_console_program_is_an_exe_started_without_a_console_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert creation_flags() == 0  # POSIX: subprocess refuses anything else
    monkeypatch.setattr(sys, "platform", "win32")
    assert cli_program("/Program Files/Cowork/Cowork.exe").name == "cowork-cli.exe"
    assert creation_flags() == 0x08000000  # CREATE_NO_WINDOW


def test_a_module_that_is_not_a_helper_program_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="'os' is not one of the helper programs"):
        module_command("os")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    with pytest.raises(ValueError, match="not one of the helper programs"):
        module_command("agent_runtime")  # the runtime proper is the bundled program, never a helper


def test_every_helper_program_has_the_main_the_installed_app_calls() -> None:
    for module, target in CHILD_PROGRAMS.items():
        assert target == module or target.startswith(f"{module}.")
        main = importlib.import_module(target).main
        assert callable(main), target
