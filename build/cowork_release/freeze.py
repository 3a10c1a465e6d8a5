"""Running PyInstaller on the runtime's spec (``build/agent_runtime.spec``), onedir — and, through
:func:`run_pyinstaller`, on the desktop app's (``cowork_release.app``).

PyInstaller runs in a child process of the same interpreter (the one whose environment holds the
runtime's dependencies), with its work and output directories under ``--out``: nothing is written
beside the sources.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from cowork_release.buildinfo import DEFAULT_LOCK, write_build_info
from cowork_release.errors import ReleaseError

__all__ = ["BUILD_DIR", "DEFAULT_OUT", "DEFAULT_SPEC", "Frozen", "freeze", "run_pyinstaller"]

BUILD_DIR = Path(__file__).resolve().parent.parent
DEFAULT_SPEC = BUILD_DIR / "agent_runtime.spec"
DEFAULT_OUT = BUILD_DIR / "out"


@dataclass(frozen=True)
class Frozen:
    dist: Path
    """The onedir tree: ``agent-runtime/`` with the program and ``_internal/``."""


def run_pyinstaller(spec: Path, work: Path, dist: Path, *, quiet: bool = False) -> None:
    """PyInstaller on ``spec`` in a child process, building in ``work`` into ``dist``."""
    if not spec.is_file():
        raise ReleaseError(f"{spec} does not exist")
    if importlib.util.find_spec("PyInstaller") is None:
        raise ReleaseError("PyInstaller is not installed: pip install -e '.[build]'")
    command = [
        sys.executable,
        "-m",
        "PyInstaller",
        "--noconfirm",
        "--clean",
        "--log-level",
        "WARN",
        "--workpath",
        str(work),
        "--distpath",
        str(dist),
        str(spec),
    ]
    result = subprocess.run(command, capture_output=quiet, text=True, check=False)
    if result.returncode != 0:
        tail = (result.stderr or "").strip().splitlines()[-1:] if quiet else []
        raise ReleaseError(f"PyInstaller failed (exit {result.returncode}){': ' + tail[0] if tail else ''}")


def freeze(
    spec: Path = DEFAULT_SPEC, out: Path = DEFAULT_OUT, *, quiet: bool = False, lock: Path = DEFAULT_LOCK
) -> Frozen:
    """Build the onedir tree into ``out/dist/agent-runtime`` (replacing an older one), recording the
    dependency lock it was built from (:mod:`cowork_release.buildinfo`)."""
    if not lock.is_file():
        raise ReleaseError(f"{lock} is missing: the release build needs its lock file (requirements/lock)")
    dist = out / "dist"
    run_pyinstaller(spec, out / "work", dist, quiet=quiet)
    tree = dist / "agent-runtime"
    if not tree.is_dir():
        raise ReleaseError(f"PyInstaller finished but {tree} is missing")
    write_build_info(tree, lock)
    return Frozen(dist=tree)


TocEntry = tuple[str, str, str]
"""PyInstaller's table-of-contents entry: (destination name, source, type code)."""


def flatten_python_framework(
    binaries: list[TocEntry], datas: list[TocEntry]
) -> tuple[list[TocEntry], list[TocEntry]]:
    """The runtime's Analysis lists with a macOS framework-build Python collected as a plain ``Python``.

    A framework build (python.org's, the CI runners') is collected as ``Python.framework/Versions/X.Y/Python``
    with its Info.plist and symbolic links, and a ``Python`` link to it beside the program. A runtime
    bundle holds regular files only, so packing would copy the binary out of its framework: a framework
    binary without its framework, whose signature Apple's notary service rejects. The bootloader loads
    ``Python`` from ``_internal``, as a plain file — which is how PyInstaller collects a non-framework
    build — so nothing of the framework is needed. Lists without a framework Python come back unchanged.
    """
    prefix = "Python.framework/"
    library = [src for dest, src, kind in binaries if dest.startswith(prefix) and dest.endswith("/Python")]
    if not library:
        return binaries, datas
    kept_binaries = [entry for entry in binaries if not entry[0].startswith(prefix)]
    kept_datas = [entry for entry in datas if not entry[0].startswith(prefix) and entry[0] != "Python"]
    return [*kept_binaries, ("Python", library[0], "BINARY")], kept_datas
