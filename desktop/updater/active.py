"""Which agent runtime a new session starts: the updater's active installation, else the bundled one.

Seed 001 §11: the runtime is a separately versioned download, and "in Phase 1, agent-runtime ships
bundled inside the desktop installer". Both hold: until the first update is activated — and whenever
every installed version is gone or marked bad — the runtime bundled with the app is used.

The bundled runtime has the layout of an installed version (an unpacked bundle: ``cowork-files.json``
beside the ``agent-runtime/`` tree) and lives at :func:`bundled_runtime_dir`; the installer's update
settings (``update.json``, read by ``desktop.updater.config``) live beside it, at
:func:`update_config_file`.

This module runs before every runtime start (``desktop.launch.runtime.runtime_command`` when frozen),
so it reads two small JSON files and imports nothing beyond the standard library and platformdirs.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from desktop.updater.layout import (
    InstallLayout,
    RuntimeRef,
    default_root,
    read_json,
    read_pointer,
    safe_relative,
)

__all__ = [
    "BUNDLED_DIR_NAME",
    "UPDATE_CONFIG_NAME",
    "ActiveRuntime",
    "NoRuntimeAvailable",
    "active_runtime",
    "app_resources_dir",
    "bundled_runtime",
    "bundled_runtime_dir",
    "update_config_file",
]

BUNDLED_DIR_NAME = "runtime"
UPDATE_CONFIG_NAME = "update.json"

Source = Literal["installed", "previous", "bundled"]


class NoRuntimeAvailable(Exception):
    """Neither an installed nor a bundled runtime can be started; ``str()`` says what to do."""


@dataclass(frozen=True, slots=True)
class ActiveRuntime:
    """The runtime to start: its program, its version, and where it came from."""

    executable: Path
    version: str
    source: Source

    def command(self) -> list[str]:
        """The program without its mode argument (``--stdio`` or ``--connect NAME``)."""
        return [str(self.executable)]


def app_resources_dir(app_executable: str | None = None) -> Path:
    """Where the installer puts what ships beside the frozen app: the directory of its program
    (Windows, Linux), or ``Contents/Resources`` of the macOS ``.app``."""
    program = Path(app_executable or sys.executable).resolve()
    if program.parent.name == "MacOS" and program.parent.parent.name == "Contents":
        return program.parent.parent / "Resources"
    return program.parent


def bundled_runtime_dir(app_executable: str | None = None) -> Path:
    """The runtime bundled with the app: a ``runtime`` directory in :func:`app_resources_dir`."""
    return app_resources_dir(app_executable) / BUNDLED_DIR_NAME


def update_config_file(app_executable: str | None = None) -> Path:
    """The installer's update settings, ``update.json`` in :func:`app_resources_dir`:
    ``{"manifestUrl": "https://…/manifest.json", "channel": "stable"}``."""
    return app_resources_dir(app_executable) / UPDATE_CONFIG_NAME


def bundled_runtime(directory: Path | None = None) -> ActiveRuntime | None:
    """The bundled runtime, if the app has one that can be started."""
    directory = bundled_runtime_dir() if directory is None else directory
    try:
        listing = json.loads((directory / "cowork-files.json").read_bytes())
        version, executable = listing["runtimeVersion"], listing["executable"]
        ref = RuntimeRef(str(version), f"agent-runtime/{safe_relative(str(executable))}")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    program = directory.joinpath(*ref.executable.split("/"))
    return ActiveRuntime(program, ref.version, "bundled") if program.is_file() else None


def active_runtime(root: Path | None = None, *, bundled: Path | None = None) -> ActiveRuntime:
    """The runtime a session starting now should use.

    The pointer's active version, unless its program is missing or the version was marked bad (a
    rollback interrupted between the two writes); then the previous version; then the bundled runtime.
    ``root`` defaults to the installation root, ``bundled`` to :func:`bundled_runtime_dir`.
    """
    layout = InstallLayout(default_root() if root is None else root)
    pointer = read_pointer(layout)
    if pointer is not None:
        bad = _bad_versions(layout)
        for ref, source in ((pointer.active, "installed"), (pointer.previous, "previous")):
            if ref is None or ref.version in bad:
                continue
            program = layout.executable(ref)
            if program.is_file():
                return ActiveRuntime(program, ref.version, source)  # type: ignore[arg-type]
    found = bundled_runtime(bundled)
    if found is None:
        raise NoRuntimeAvailable(
            "No agent runtime is installed and none came with the app "
            f"(looked in {layout.versions} and {bundled or bundled_runtime_dir()}); reinstall Cowork"
        )
    return found


def _bad_versions(layout: InstallLayout) -> set[str]:
    state = read_json(layout.state_file)
    bad = state.get("badVersions") if isinstance(state, dict) else None
    return set(bad) if isinstance(bad, dict) else set()
