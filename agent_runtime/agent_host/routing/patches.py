"""The session's patch preview (``GetPatchPreview``, seed 000 §3.1; contracts ``PatchPreview``).

Before a WriteFile or DeleteFile runs, the file's original state is recorded the FIRST time the
session touches that path: its bytes (up to ``max_diff_bytes``, within a session-wide memory budget),
a SHA-256 of the whole file (up to ``max_hash_bytes``), its size and mtime. The preview compares each
original with what is on disk now, so several writes to one file show one net diff, a file created
and then deleted disappears, and a file restored to its original disappears.

Status: ``created`` (no original), ``deleted`` (nothing there now), else ``modified``; ``sizeBytes``
is the current size (0 when deleted). Binary or oversized sides get git's one-line summary instead
of hunks. Diff headers name the file relative to the project folder that holds it (``a/src/app.py``,
so ``git apply`` works from that folder); ``path`` is the absolute resolved path.

Not tracked: files a RunCommand changes (the host cannot see inside a shell command), and the
originals do not survive a runtime restart (they are not part of the checkpoint).

Thread-safe: ``touch`` runs in a worker thread before a tool call, and ``preview`` reads files, so a
caller on the event loop should run it in a thread too for large sessions.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import stat
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from agent_runtime.agent_host.routing.paths import is_within
from contracts.enums import PatchFileStatus
from contracts.methods import PatchFile, PatchPreview

__all__ = [
    "MAX_APPROVAL_DIFF_BYTES",
    "MAX_DIFF_BYTES",
    "MAX_FILE_DIFF_BYTES",
    "MAX_HASH_BYTES",
    "MAX_PREVIEW_DIFF_BYTES",
    "PATCH_MEMORY_BUDGET",
    "PatchTracker",
]

#: Sides larger than this are summarised, not diffed (difflib is quadratic on some inputs).
MAX_DIFF_BYTES = 2 * 1024 * 1024
#: Files up to this size are hashed so a revert is recognised; larger ones compare size and mtime.
MAX_HASH_BYTES = 64 * 1024 * 1024
#: Original contents kept in memory per session; past it, originals keep only their hash.
PATCH_MEMORY_BUDGET = 64 * 1024 * 1024
#: The preview travels as one JSON-RPC answer, and a frame is at most 16 MiB: one file's diff and all
#: diffs together stay well below, larger ones are summarised (line counts) instead of shown.
MAX_FILE_DIFF_BYTES = 1024 * 1024
MAX_PREVIEW_DIFF_BYTES = 8 * 1024 * 1024
#: An approval request travels as one event and is read by a person before anything happens.
MAX_APPROVAL_DIFF_BYTES = 256 * 1024

_CHUNK = 1024 * 1024
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in must not hang the read
_BINARY = getattr(os, "O_BINARY", 0)

Kind = Literal["absent", "file", "link", "other"]


@dataclass(frozen=True, slots=True)
class FileState:
    """A path's state at one moment, as much of it as the preview needs."""

    kind: Kind
    size: int = 0
    digest: bytes | None = None
    content: bytes | None = None
    """The bytes when kept (small enough and within budget); for a link, its target."""
    mtime_ns: int = 0

    def same_as(self, other: FileState) -> bool:
        if self.kind != other.kind:
            return False
        if self.kind == "link":
            return self.content == other.content
        if self.kind != "file":
            return True
        if self.size != other.size:
            return False
        if self.digest is not None and other.digest is not None:
            return self.digest == other.digest
        return self.mtime_ns == other.mtime_ns


@dataclass(slots=True)
class _Tracked:
    original: FileState
    tasks: set[str] = field(default_factory=set)


class PatchTracker:
    """The originals of the files a session changed, and the net diff of each against the disk."""

    def __init__(
        self,
        *,
        roots: Sequence[str] = (),
        max_diff_bytes: int = MAX_DIFF_BYTES,
        max_hash_bytes: int = MAX_HASH_BYTES,
        memory_budget: int = PATCH_MEMORY_BUDGET,
        max_file_diff_bytes: int = MAX_FILE_DIFF_BYTES,
        max_preview_diff_bytes: int = MAX_PREVIEW_DIFF_BYTES,
    ) -> None:
        self._roots = tuple(roots)
        self._max_file_diff = max_file_diff_bytes
        self._max_preview_diff = max_preview_diff_bytes
        self._max_diff = max_diff_bytes
        self._max_hash = max_hash_bytes
        self._budget = memory_budget
        self._kept = 0
        self._tracked: dict[str, _Tracked] = {}
        self._lock = threading.Lock()

    def touch(self, path: str, task_id: str) -> None:
        """Record ``path``'s original state if this session has not touched it before (blocking I/O)."""
        with self._lock:
            tracked = self._tracked.get(path)
            if tracked is not None:
                tracked.tasks.add(task_id)
                return
            room = self._budget - self._kept
        state = read_state(path, max_keep=min(self._max_diff, max(room, 0)), max_hash=self._max_hash)
        if state.kind == "other":
            return  # a directory or device: the tool refuses it, nothing to preview
        with self._lock:
            tracked = self._tracked.get(path)
            if tracked is None:
                # First writer wins: a parallel call's later snapshot may already see its write.
                tracked = self._tracked[path] = _Tracked(state)
                if state.content is not None and state.kind == "file":
                    self._kept += len(state.content)
            tracked.tasks.add(task_id)

    @property
    def paths(self) -> list[str]:
        """Every path the session touched, in the order first touched."""
        with self._lock:
            return list(self._tracked)

    def preview(self, task_id: str | None = None) -> PatchPreview:
        """Net changes since each file was first touched; only files ``task_id`` touched if given."""
        with self._lock:
            entries = [
                (path, tracked.original)
                for path, tracked in self._tracked.items()
                if task_id is None or task_id in tracked.tasks
            ]
        files = []
        room = self._max_preview_diff
        for path, original in sorted(entries):
            current = read_state(path, max_keep=self._max_diff, max_hash=self._max_hash)
            if original.same_as(current):
                continue
            patch = self._patch_file(path, original, current, room)
            room -= len(patch.diff.encode("utf-8"))
            files.append(patch)
        return PatchPreview(files=files)

    def clear(self) -> None:
        with self._lock:
            self._tracked.clear()
            self._kept = 0

    def _patch_file(self, path: str, original: FileState, current: FileState, room: int) -> PatchFile:
        if original.kind == "absent":
            status = PatchFileStatus.CREATED
        elif current.kind == "absent":
            status = PatchFileStatus.DELETED
        else:
            status = PatchFileStatus.MODIFIED
        label = path_label(path, self._roots)
        size = current.size if current.kind in ("file", "link") else 0
        diff = unified_diff(label, original, current)
        length = len(diff.encode("utf-8"))
        if length > min(self._max_file_diff, room):
            reason = "too large to show" if length > self._max_file_diff else "past the preview's size limit"
            diff = _summary(diff, length, label, original, current, reason)
        return PatchFile(path=path, status=status, diff=diff, size_bytes=size)

    def proposed_diff(self, path: str, new_content: bytes | None) -> str:
        """The diff writing ``new_content`` to ``path`` (``None``: deleting it) would make to the disk
        now — what an approval request shows (seed 000 §10.2). Summarised past
        ``MAX_APPROVAL_DIFF_BYTES``; never raises."""
        label = path_label(path, self._roots)
        before = read_state(path, max_keep=self._max_diff, max_hash=self._max_hash)
        if new_content is None:
            after = FileState("absent")
        else:
            kept = new_content if len(new_content) <= self._max_diff else None
            after = FileState("file", size=len(new_content), content=kept)
        diff = unified_diff(label, before, after)
        length = len(diff.encode("utf-8"))
        if length > MAX_APPROVAL_DIFF_BYTES:
            diff = _summary(diff, length, label, before, after, "too large to show")
        return diff


def read_state(path: str, *, max_keep: int, max_hash: int) -> FileState:
    """``path`` now: kind, size, hash and (if at most ``max_keep`` bytes) content. Never raises."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return FileState("absent")
    except (OSError, ValueError):
        return FileState("other")
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            return FileState("other")
        data = os.fsencode(target)
        return FileState("link", size=len(data), content=data, mtime_ns=info.st_mtime_ns)
    if not stat.S_ISREG(info.st_mode):
        return FileState("other")
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _BINARY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        # Unreadable (permissions): size and mtime still tell a change apart.
        return FileState("file", size=info.st_size, mtime_ns=info.st_mtime_ns)
    with os.fdopen(fd, "rb") as handle:
        opened = os.fstat(handle.fileno())
        if not stat.S_ISREG(opened.st_mode):
            return FileState("other")
        if opened.st_size > max_hash:
            return FileState("file", size=opened.st_size, mtime_ns=opened.st_mtime_ns)
        hasher = hashlib.sha256()
        kept = bytearray()
        size = 0
        keep = opened.st_size <= max_keep
        while size <= max_hash:
            chunk = handle.read(_CHUNK)
            if not chunk:
                break
            size += len(chunk)
            hasher.update(chunk)
            if keep:
                if size > max_keep:  # it grew while read
                    keep = False
                    kept.clear()
                else:
                    kept += chunk
        if size > max_hash:
            return FileState("file", size=size, mtime_ns=opened.st_mtime_ns)
        return FileState(
            "file",
            size=size,
            digest=hasher.digest(),
            content=bytes(kept) if keep else None,
            mtime_ns=opened.st_mtime_ns,
        )


def unified_diff(label: str, before: FileState, after: FileState) -> str:
    """A unified diff of ``before`` → ``after``; git's one-line summary for binary or large sides."""
    old_name = "/dev/null" if before.kind == "absent" else f"a/{label}"
    new_name = "/dev/null" if after.kind == "absent" else f"b/{label}"
    sides = [s for s in (before, after) if s.kind != "absent"]
    if any(s.kind == "other" for s in sides):
        return f"Files {old_name} and {new_name} differ (not a regular file)\n"
    if any(s.content is not None and b"\x00" in s.content[:8192] for s in sides):
        return f"Binary files {old_name} and {new_name} differ\n"
    if any(s.content is None for s in sides):
        return (
            f"Files {old_name} and {new_name} differ (binary or large file changed: "
            f"{before.size:,} bytes before, {after.size:,} bytes after)\n"
        )
    out = []
    for line in difflib.unified_diff(
        _lines(before.content), _lines(after.content), fromfile=old_name, tofile=new_name
    ):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _summary(diff: str, length: int, label: str, before: FileState, after: FileState, reason: str) -> str:
    added, removed = _line_counts(diff)
    old_name = "/dev/null" if before.kind == "absent" else f"a/{label}"
    new_name = "/dev/null" if after.kind == "absent" else f"b/{label}"
    return (
        f"Files {old_name} and {new_name} differ (the diff is {length:,} bytes, {reason}:"
        f" +{added:,} -{removed:,} lines)\n"
    )


def _line_counts(diff: str) -> tuple[int, int]:
    added = removed = 0
    in_hunks = False  # the "--- a/x" / "+++ b/x" header comes before the first "@@"
    for line in diff.split("\n"):
        if line.startswith("@@"):
            in_hunks = True
        elif in_hunks and line.startswith("+"):
            added += 1
        elif in_hunks and line.startswith("-"):
            removed += 1
    return added, removed


def _lines(content: bytes | None) -> list[str]:
    # Display only: undecodable bytes become U+FFFD rather than breaking the JSON-RPC answer. Split on
    # "\n" only, keeping endings, so the diff applies (str.splitlines also splits on \r, \f, U+2028).
    text = (content or b"").decode("utf-8", errors="replace")
    lines = text.split("\n")
    result = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        result.append(lines[-1])
    return result


def path_label(path: str, roots: Sequence[str]) -> str:
    """``path`` as the user sees it in a diff: relative to the first project folder holding it, with
    forward slashes; outside them, without its drive and leading slash."""
    for root in roots:
        if is_within(path, root):
            relative = os.path.relpath(path, root)
            if relative != ".":
                return relative.replace(os.sep, "/")
    _drive, rest = os.path.splitdrive(path)
    return rest.replace(os.sep, "/").lstrip("/") or path
