"""Normalising a client's project path into the key of its ``local`` workspace.

The backend may run on another OS than the client, so the path's own shape decides its rules: a drive
letter or UNC prefix means Windows (``\\`` separators, case-insensitive: seed 000 §8.3), anything else is
POSIX (case-sensitive). ``.`` and ``..`` segments and trailing separators are removed; relative paths
are refused — a workspace key must not depend on the client's working directory.
"""

from __future__ import annotations

import ntpath
import posixpath
import re

__all__ = ["PathProblem", "normalise_project_path", "workspace_key"]

_WINDOWS = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\[^\\/]+[\\/][^\\/]+)")
_MAX_PATH = 4096


class PathProblem(ValueError):
    """Why a path cannot identify a workspace."""


def normalise_project_path(path: str) -> str:
    """The path as shown back to the client: normalised, original case kept."""
    if not path or len(path) > _MAX_PATH or any(ord(ch) < 32 for ch in path):
        raise PathProblem("must be a non-empty path without control characters, at most 4096 long")
    if _WINDOWS.match(path):
        return ntpath.normpath(path)
    if not path.startswith("/"):
        raise PathProblem("must be an absolute path")
    normalised = posixpath.normpath(path)
    # POSIX keeps a leading "//" as implementation-defined; one root is what users mean.
    return "/" + normalised.lstrip("/")


def workspace_key(normalised: str) -> str:
    """What identifies the project: Windows paths compare case-insensitively."""
    return normalised.casefold() if _WINDOWS.match(normalised) else normalised
