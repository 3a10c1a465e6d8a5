"""What a runtime tree was built from: ``cowork-build.json`` at the top of the onedir tree, written by
:func:`cowork_release.freeze.freeze` and packed into the bundle with the rest of the tree (so the
bundle's file list, which the manifest's signature covers, holds its hash)::

    {"lockFile": "requirements/release.lock",
     "lockSha256": "<SHA-256 of the lock file's bytes>",
     "python": "3.11.9"}

The lock pins every package the build installs with its hashes (``requirements/lock`` regenerates
it; the release workflow installs it with ``pip install --require-hashes``), so a bundle names the
exact inputs it was built from, and two bundles built from the same lock can be compared.
"""

from __future__ import annotations

import json
import platform
from pathlib import Path
from typing import Any

from contracts.atomic import write_atomically
from cowork_release.bundle import file_sha256
from cowork_release.errors import ReleaseError

__all__ = ["BUILD_INFO_NAME", "DEFAULT_LOCK", "read_build_info", "write_build_info"]

BUILD_INFO_NAME = "cowork-build.json"
DEFAULT_LOCK = Path(__file__).resolve().parent.parent.parent / "requirements" / "release.lock"


def write_build_info(tree: Path, lock: Path = DEFAULT_LOCK) -> dict[str, Any]:
    """``tree/cowork-build.json`` naming ``lock`` and its SHA-256; what was written."""
    if not lock.is_file():
        raise ReleaseError(f"{lock} is missing: the release build needs its lock file (requirements/lock)")
    info: dict[str, Any] = {
        "lockFile": _relative_name(lock),
        "lockSha256": file_sha256(lock),
        "python": platform.python_version(),
    }
    try:
        text = json.dumps(info, indent=1, sort_keys=True) + "\n"
        write_atomically(tree / BUILD_INFO_NAME, text.encode("utf-8"), mode=0o644)
    except OSError as exc:
        raise ReleaseError(f"cannot write {tree / BUILD_INFO_NAME}: {exc.strerror}") from None
    return info


def read_build_info(tree: Path) -> dict[str, Any] | None:
    """The tree's build information; None when it has none (built before it was recorded)."""
    path = tree / BUILD_INFO_NAME
    if not path.is_file():
        return None
    try:
        info: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReleaseError(f"{path} is unreadable: {exc}") from None
    return info


def _relative_name(lock: Path) -> str:
    """The lock's path inside the repository (stable across machines), else its file name."""
    root = DEFAULT_LOCK.parent.parent
    try:
        return lock.resolve().relative_to(root).as_posix()
    except ValueError:
        return lock.name
