"""The command line of a helper program the client starts: the embedded backend or the demo model.

From source a helper is ``python -P -m MODULE``. The installed app has no Python interpreter to hand
``-m`` to: its console program runs the helper instead (``cowork-cli --cowork-child MODULE ARGS…``,
``installer/entry.py``), and only the modules listed here, so the app never becomes a general Python
launcher. The modules are named as strings: the desktop never imports the backend or the runtime
(docs/architecture/index.md "Boundaries"); the frozen entry program does, and takes this list from here.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

__all__ = [
    "CHILD_OPTION",
    "CHILD_PROGRAMS",
    "CLI_PROGRAM",
    "cli_program",
    "creation_flags",
    "module_command",
]

CHILD_OPTION = "--cowork-child"

CHILD_PROGRAMS: Mapping[str, str] = MappingProxyType(
    {
        # the module run with -m → the module whose main(argv) it runs
        "backend.cli": "backend.cli",
        "agent_runtime.scripted_gateway": "agent_runtime.scripted_gateway.cli",
    }
)
"""The helper programs the installed app may start."""

CLI_PROGRAM = "cowork-cli"
"""The installed app's console program, beside the windowed one (``installer/cowork.spec``)."""

_CREATE_NO_WINDOW = 0x08000000  # winbase.h; subprocess.CREATE_NO_WINDOW exists only on Windows


def cli_program(app_executable: str | None = None) -> Path:
    """The console program next to the installed app's program (``.exe`` on Windows)."""
    suffix = ".exe" if sys.platform == "win32" else ""
    return Path(app_executable or sys.executable).parent / f"{CLI_PROGRAM}{suffix}"


def module_command(module: str) -> list[str]:
    """The command that runs ``module`` as a program; its arguments follow.

    ``ValueError`` for a module the installed app could not run, from source too, so a new helper
    is added to :data:`CHILD_PROGRAMS` before anything relies on it.
    """
    if module not in CHILD_PROGRAMS:
        raise ValueError(f"{module!r} is not one of the helper programs: {', '.join(CHILD_PROGRAMS)}")
    if getattr(sys, "frozen", False):
        return [str(cli_program()), CHILD_OPTION, module]
    # -P: the helper starts in the caller's current folder, whose files must not stand in for its
    # modules.
    return [sys.executable, "-P", "-m", module]


def creation_flags() -> int:
    """``creationflags`` for starting a helper: on Windows, no console window of its own.

    The helper is a console program; started from the windowed app, which has no console to share,
    Windows would open one for it — a black window for as long as the backend runs. (QProcess,
    which starts the runtime, does the same on its own.)
    """
    return _CREATE_NO_WINDOW if sys.platform == "win32" else 0
