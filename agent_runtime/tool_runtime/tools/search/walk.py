"""The walk the search tools share: a directory tree in sorted order, filtered three ways.

* ``.gitignore`` files (those inside the tree, and those of its parents up to the repository root)
  and the version-control directories ``.git``, ``.hg`` and ``.svn`` are skipped unless asked
  (``pathspec`` implements git's matching rules: negation, anchoring, directory-only patterns).
* The policy's File.Read paths (``ReadScope``): an entry the policy would refuse to ReadFile is never
  shown or read, and a blocked directory is not entered. A directory with no blocked entry below it
  is trusted whole (one question per directory, not per file), since the walk never leaves it except
  through a symbolic link.
* Symbolic links are resolved as the other tools resolve paths: a link is kept only when its target
  passes the policy, and a linked directory is listed, never entered (no cycles, no escape from the
  tree through a link).

Errors reading a directory (permissions) skip it: a search reports what it could see.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from pathspec import GitIgnoreSpec

from contracts.tools import ReadScope

__all__ = ["VCS_DIRECTORIES", "Entry", "Walk"]

VCS_DIRECTORIES = frozenset({".git", ".hg", ".svn"})
_MAX_IGNORE_FILE_BYTES = 1024 * 1024

Kind = Literal["file", "dir", "link", "other"]


@dataclass(slots=True)
class Entry:
    path: str
    """Absolute, as found in the tree (for a link: the link itself)."""
    rel: str
    """Relative to the walk's root, ``/``-separated."""
    kind: Kind
    depth: int
    """1 for the root's own entries."""
    real: str
    """The file to read: ``path`` itself, or a link's resolved target."""
    target_kind: Kind = "other"
    """For a link: what it points to (``file``, ``dir`` or ``other``)."""
    entry: os.DirEntry[str] | None = field(default=None, repr=False)

    def stat(self) -> os.stat_result | None:
        try:
            if self.entry is not None and self.kind != "link":
                return self.entry.stat(follow_symlinks=False)
            return os.stat(self.real)
        except OSError:
            return None


@dataclass(slots=True)
class _Ignore:
    strip: int
    prefix: str
    spec: GitIgnoreSpec


@dataclass(slots=True)
class _Frame:
    entries: Iterator[os.DirEntry[str]]
    rel: str
    depth: int
    trusted: bool
    ignores: int
    """How many ignore specs were on the stack before this directory's own."""


class Walk:
    """Iterate the entries below ``root`` (a resolved directory), depth first, names sorted.

    ``max_depth`` limits how deep (1: the root's own entries). ``descend(rel)`` may refuse to enter a
    directory (Glob's pattern cannot match below it). After iterating, ``withheld`` counts entries the
    policy kept out and ``ignored`` those skipped by ``.gitignore`` or as version control.
    """

    def __init__(
        self,
        root: str,
        *,
        scope: ReadScope | None,
        honour_ignores: bool = True,
        max_depth: int | None = None,
        descend: Callable[[str], bool] | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        self.root = root
        self._scope = scope
        self._honour = honour_ignores
        self._max_depth = max_depth
        self._descend = descend
        self._stop = stop
        self.withheld = 0
        self.ignored = 0
        self._ignores: list[_Ignore] = []

    def __iter__(self) -> Iterator[Entry]:
        root = self.root
        scope = self._scope
        if self._honour:
            self._ignores.extend(_ancestor_ignores(root))
        trusted = scope is None or scope.allows_all_under(root)
        stack = [self._open(root, "", 1, trusted)]
        while stack:
            if self._stop is not None and self._stop.is_set():
                return
            frame = stack[-1]
            item = next(frame.entries, None)
            if item is None:
                del self._ignores[frame.ignores :]
                stack.pop()
                continue
            name = item.name
            rel = f"{frame.rel}/{name}" if frame.rel else name
            try:
                is_link = item.is_symlink()
                is_dir = not is_link and item.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if self._honour and self._is_ignored(name, rel, is_dir):
                self.ignored += 1
                continue
            if is_link:
                entry = self._link(item, rel, frame.depth)
                if entry is not None:
                    yield entry
                continue
            if not frame.trusted and scope is not None and not scope.allows(item.path):
                self.withheld += 1
                continue
            if is_dir:
                yield Entry(item.path, rel, "dir", frame.depth, item.path, entry=item)
                deeper = self._max_depth is None or frame.depth < self._max_depth
                if deeper and (self._descend is None or self._descend(rel)):
                    child_trusted = frame.trusted or scope is None or scope.allows_all_under(item.path)
                    stack.append(self._open(item.path, rel, frame.depth + 1, child_trusted))
                continue
            try:
                regular = item.is_file(follow_symlinks=False)
            except OSError:
                regular = False
            yield Entry(item.path, rel, "file" if regular else "other", frame.depth, item.path, entry=item)

    def _open(self, directory: str, rel: str, depth: int, trusted: bool) -> _Frame:
        before = len(self._ignores)
        try:
            with os.scandir(directory) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError:
            items = []
        if self._honour:
            for item in items:
                if item.name == ".gitignore":
                    spec = _load_ignore(item.path)
                    if spec is not None:
                        strip = len(rel) + 1 if rel else 0
                        self._ignores.append(_Ignore(strip, "", spec))
                    break
        return _Frame(iter(items), rel, depth, trusted, before)

    def _is_ignored(self, name: str, rel: str, is_dir: bool) -> bool:
        if is_dir and name in VCS_DIRECTORIES:
            return True
        suffix = "/" if is_dir else ""
        for ignore in reversed(self._ignores):
            decision = ignore.spec.check_file(ignore.prefix + rel[ignore.strip :] + suffix).include
            if decision is not None:
                return decision
        return False

    def _link(self, item: os.DirEntry[str], rel: str, depth: int) -> Entry | None:
        try:
            real = os.path.realpath(item.path)
            info = os.stat(real)
        except (OSError, ValueError):
            return None  # a dangling link: nothing to read or list
        if self._scope is not None and not self._scope.allows(real):
            self.withheld += 1
            return None
        target: Kind = (
            "dir" if stat.S_ISDIR(info.st_mode) else "file" if stat.S_ISREG(info.st_mode) else "other"
        )
        return Entry(item.path, rel, "link", depth, real, target_kind=target, entry=item)


def _load_ignore(path: str) -> GitIgnoreSpec | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_IGNORE_FILE_BYTES)
    except OSError:
        return None
    lines = data.decode("utf-8", errors="replace").splitlines()
    try:
        spec = GitIgnoreSpec.from_lines(lines)
    except Exception:
        # A malformed ignore file ignores nothing rather than failing the search.
        return None
    return spec if spec.patterns else None


def _ancestor_ignores(root: str) -> list[_Ignore]:
    """The ``.gitignore`` files of ``root``'s parents up to the repository root (none outside one)."""
    parents = []
    current = root
    while True:
        parent = os.path.dirname(current)
        if os.path.lexists(os.path.join(current, ".git")):
            break
        if parent == current:
            return []  # not in a repository: only the tree's own ignore files count
        parents.append(parent)
        current = parent
    found = []
    for parent in reversed(parents):
        spec = _load_ignore(os.path.join(parent, ".gitignore"))
        if spec is not None:
            prefix = os.path.relpath(root, parent).replace(os.sep, "/") + "/"
            found.append(_Ignore(0, prefix, spec))
    return found
