"""Where installed runtimes live, the pointer that names the active one, and how files are replaced.

Under the installation root (platformdirs' ``user_data_dir("Cowork")/agent-runtime``, beside the
runtime's own ``checkpoints/`` and ``logs/``; seed 001 §11 "Agent-runtime download model")::

    versions/{version}/            one installed bundle each: cowork-files.json + agent-runtime/…
    active.json                    the pointer: the active version and the previous one
    updater/state.json             install id, last trusted manifest version, versions marked bad
    updater/runs.json              runtime starts and quick crashes (crash-loop detection)
    updater/manifest.json          the last trusted release document, as received
    updater/downloads/             bundles being downloaded (NAME.part until verified)
    updater/staging/               bundles being unpacked; anything here is an interrupted install

The pointer is replaced atomically (temp file, fsync, ``os.replace``, directory fsync), so a crash
leaves either the old pointer or the new one. This module is on the path of every runtime start
(``desktop.updater.active``), so it imports only the standard library, platformdirs,
``contracts.atomic`` and ``contracts.local_backend`` (both only the standard library).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from contracts.atomic import fsync_directory, write_atomically
from contracts.local_backend import try_lock

__all__ = [
    "InstallLayout",
    "Pointer",
    "RuntimeRef",
    "atomic_write",
    "default_root",
    "file_lock",
    "fsync_directory",
    "read_json",
    "read_pointer",
    "safe_relative",
    "safe_version",
    "write_pointer",
]

# A normalised PEP 440 version ("1.4.0", "2.0rc1", "1!2.0+local.7"): always a safe directory name.
_VERSION = re.compile(r"[0-9][0-9A-Za-z.+!_-]{0,63}")


def default_root() -> Path:
    """``<user data dir>/Cowork/agent-runtime``, as platformdirs spells it for this platform."""
    import platformdirs

    return Path(platformdirs.user_data_dir("Cowork", appauthor=False)) / "agent-runtime"


def safe_version(version: str) -> str:
    """``version`` if it can name a directory; ``ValueError`` if not."""
    if not _VERSION.fullmatch(version) or ".." in version:
        raise ValueError(f"{version[:70]!r} is not a runtime version")
    return version


def safe_relative(path: str) -> str:
    """``path`` if it is a relative POSIX path that stays inside its directory; ``ValueError`` if not."""
    parts = path.split("/")
    if (
        not path
        or path.startswith("/")
        or "\\" in path
        or ":" in path
        or any(p in ("", ".", "..") for p in parts)
    ):
        raise ValueError(f"{path[:200]!r} is not a relative path inside the installation")
    return path


@dataclass(frozen=True, slots=True)
class RuntimeRef:
    """An installed runtime: its version and its program, relative to the version's directory."""

    version: str
    executable: str

    def to_json(self) -> dict[str, str]:
        return {"version": self.version, "executable": self.executable}

    @classmethod
    def from_json(cls, value: object) -> RuntimeRef:
        if not isinstance(value, dict):
            raise ValueError("not a runtime reference")
        version, executable = value.get("version"), value.get("executable")
        if not isinstance(version, str) or not isinstance(executable, str):
            raise ValueError("a runtime reference needs a version and an executable")
        return cls(safe_version(version), safe_relative(executable))


@dataclass(frozen=True, slots=True)
class Pointer:
    """What ``active.json`` says: the runtime to start, and the one to fall back to (None: the
    runtime bundled with the app)."""

    active: RuntimeRef
    previous: RuntimeRef | None


@dataclass(frozen=True, slots=True)
class InstallLayout:
    root: Path

    @property
    def versions(self) -> Path:
        return self.root / "versions"

    @property
    def pointer(self) -> Path:
        return self.root / "active.json"

    @property
    def updater(self) -> Path:
        return self.root / "updater"

    @property
    def state_file(self) -> Path:
        return self.updater / "state.json"

    @property
    def runs_file(self) -> Path:
        return self.updater / "runs.json"

    @property
    def manifest_file(self) -> Path:
        return self.updater / "manifest.json"

    @property
    def downloads(self) -> Path:
        return self.updater / "downloads"

    @property
    def staging(self) -> Path:
        return self.updater / "staging"

    @property
    def state_lock(self) -> Path:
        return self.updater / "state.lock"

    @property
    def install_lock(self) -> Path:
        return self.updater / "install.lock"

    def version_dir(self, version: str) -> Path:
        return self.versions / safe_version(version)

    def executable(self, ref: RuntimeRef) -> Path:
        return self.version_dir(ref.version).joinpath(*safe_relative(ref.executable).split("/"))

    def create(self) -> None:
        for directory in (self.root, self.versions, self.updater, self.downloads, self.staging):
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)


def read_json(path: Path) -> object:
    """The JSON in ``path``; None if it is missing or unreadable (a damaged file counts as absent)."""
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def read_pointer(layout: InstallLayout) -> Pointer | None:
    data = read_json(layout.pointer)
    if not isinstance(data, dict):
        return None
    try:
        active = RuntimeRef.from_json(data.get("active"))
        previous = None if data.get("previous") is None else RuntimeRef.from_json(data["previous"])
    except ValueError:
        return None
    return Pointer(active, previous)


def write_pointer(layout: InstallLayout, pointer: Pointer | None) -> None:
    """Switch the pointer atomically; None goes back to the runtime bundled with the app."""
    if pointer is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(layout.pointer)
        fsync_directory(layout.root)
        return
    document = {
        "active": pointer.active.to_json(),
        "previous": None if pointer.previous is None else pointer.previous.to_json(),
    }
    atomic_write(layout.pointer, json.dumps(document, indent=2).encode() + b"\n")


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` (owner-only) so that a crash leaves either the old content or the
    new one."""
    write_atomically(path, data, mode=0o600)


@contextlib.contextmanager
def file_lock(path: Path, *, blocking: bool = True) -> Iterator[bool]:
    """An advisory lock between processes on ``path``; yields False if ``blocking`` is off and another
    process holds it. Released when the block ends, or by the OS when the process dies."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with try_lock(path, wait=blocking) as held:
        yield held
