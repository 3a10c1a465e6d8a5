"""The patch preview without Qt: the ``GetPatchPreview`` result read into entries, the kind of each diff
line for highlighting, what is shown of a very long diff, and what "Open in editor" may open.

The runtime sends, per file, the absolute path, ``created``/``modified``/``deleted``, a unified diff
whose headers name the file relative to its project folder, and the current size; a binary or
oversized file comes with git's one-line summary (``Binary files a/x and b/x differ``) instead of hunks.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, Literal

from desktop.i18n import QT_TRANSLATE_NOOP, translate

__all__ = [
    "DISPLAY_MAX_CHARS",
    "DISPLAY_MAX_LINES",
    "CannotOpen",
    "LineKind",
    "OpenTarget",
    "PatchEntry",
    "PreviewContents",
    "RevertRequest",
    "changes_from_history",
    "display_diff",
    "line_kind",
    "open_target",
    "read_preview",
    "reverted_summary",
    "task_revert",
]

LineKind = Literal["header", "hunk", "added", "removed", "context", "note"]

#: Past these a diff is cut for display (the runtime already summarises any diff over 1 MiB): a text
#: view with syntax highlighting stays responsive, and the editor is one click away for the rest.
DISPLAY_MAX_LINES = 10_000
DISPLAY_MAX_CHARS = 512 * 1024

STATUS_MARKERS = {"created": "A", "modified": "M", "deleted": "D"}
STATUS_WORDS = {
    "created": QT_TRANSLATE_NOOP("PatchPreview", "created"),
    "modified": QT_TRANSLATE_NOOP("PatchPreview", "modified"),
    "deleted": QT_TRANSLATE_NOOP("PatchPreview", "deleted"),
}

# Files the desktop would run, not show, if handed to the system: Windows runs these by extension,
# macOS opens .command/.tool in Terminal and runs them, Linux desktops launch .desktop entries.
_RUNNABLE_SUFFIXES = frozenset(
    {
        ".exe", ".com", ".bat", ".cmd", ".ps1", ".psm1", ".vbs", ".vbe", ".js", ".jse", ".wsf", ".wsh",
        ".msi", ".msp", ".scr", ".pif", ".cpl", ".hta", ".lnk", ".reg", ".jar", ".appref-ms",
        ".app", ".command", ".tool", ".terminal", ".workflow", ".action", ".pkg", ".mpkg",
        ".desktop", ".appimage", ".run", ".url", ".webloc", ".inetloc",
    }
)  # fmt: skip
# Windows also runs scripts of the interpreters installed on it by double-click (the Python launcher
# installs itself as the handler of .py): there those open their folder too.
_RUNNABLE_ON_WINDOWS = frozenset({".py", ".pyw", ".pyz", ".pyzw", ".sh", ".pl", ".rb", ".php", ".tcl"})


@dataclass(frozen=True)
class PatchEntry:
    path: str
    """Absolute, as the runtime resolved it (relative only from an older runtime)."""
    status: str
    diff: str
    size_bytes: int
    display_path: str
    """Relative to the workspace folder when inside it, with ``/``; else the path as sent."""
    added: int
    removed: int
    session_id: str | None = None
    """The earlier session whose tasks made the change; None: the conversation's current session."""
    task_ids: tuple[str, ...] = ()
    """The tasks that changed the file, oldest first."""
    revertible: bool = False
    revert_note: str = ""
    """Why revert is not available, as the runtime says it (empty when it is)."""

    @property
    def last_task(self) -> str | None:
        return self.task_ids[-1] if self.task_ids else None

    @property
    def marker(self) -> str:
        """``A``, ``M`` or ``D``, as version control shows them."""
        return STATUS_MARKERS.get(self.status, "?")

    @property
    def status_word(self) -> str:
        word = STATUS_WORDS.get(self.status)
        if word is not None:
            return translate("PatchPreview", word)
        return self.status or translate("PatchPreview", "changed")

    @property
    def has_hunks(self) -> bool:
        """False for binary, oversized and special files: the diff is a one-line summary."""
        return any(line.startswith("@@") for line in self.diff.splitlines())


@dataclass(frozen=True)
class PreviewContents:
    entries: tuple[PatchEntry, ...]
    skipped: int
    """Entries the dialog could not read (a field missing or of the wrong type); they are counted,
    not silently dropped."""


def read_preview(preview: Any, workspace_root: Path | None) -> PreviewContents:
    """The entries of a ``GetPatchPreview`` result (``{"files": [...]}``), in the runtime's order.

    ``ValueError`` when ``preview`` is not a preview at all; single bad entries are skipped and
    counted."""
    if not isinstance(preview, dict) or not isinstance(preview.get("files"), list):
        raise ValueError("the patch preview has no list of files")
    entries: list[PatchEntry] = []
    skipped = 0
    for item in preview["files"]:
        entry = _entry(item, workspace_root)
        if entry is None:
            skipped += 1
        else:
            entries.append(entry)
    return PreviewContents(tuple(entries), skipped)


def _entry(item: Any, root: Path | None) -> PatchEntry | None:
    if not isinstance(item, dict):
        return None
    path, status, diff, size = item.get("path"), item.get("status"), item.get("diff"), item.get("sizeBytes")
    if not isinstance(path, str) or not path or not isinstance(status, str) or not isinstance(diff, str):
        return None
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        size = 0
    added, removed = _counts(diff)
    session_id, tasks, note = item.get("sessionId"), item.get("taskIds"), item.get("revertNote")
    return PatchEntry(
        path=path,
        status=status,
        diff=diff,
        size_bytes=size,
        display_path=_display_path(path, root),
        added=added,
        removed=removed,
        session_id=session_id if isinstance(session_id, str) and session_id else None,
        task_ids=tuple(t for t in tasks if isinstance(t, str)) if isinstance(tasks, list) else (),
        revertible=item.get("revertible") is True,
        revert_note=note if isinstance(note, str) else "",
    )


@dataclass(frozen=True)
class RevertRequest:
    """One ``RevertChanges`` call as the preview asks for it: ``paths`` over the whole conversation, or
    every file of ``task_id`` (``paths`` then empty)."""

    paths: tuple[str, ...]
    task_id: str | None
    session_id: str | None
    """The earlier session whose changes these are (``changeSessionId``); None: the current one."""
    display_paths: tuple[str, ...]
    """What the confirmation names."""

    def params(self, session_id: str) -> dict[str, Any]:
        params: dict[str, Any] = {"sessionId": session_id}
        if self.paths:
            params["paths"] = list(self.paths)
        if self.task_id is not None:
            params["taskId"] = self.task_id
        if self.session_id is not None and self.session_id != session_id:
            params["changeSessionId"] = self.session_id
        return params


def task_revert(entries: tuple[PatchEntry, ...], entry: PatchEntry) -> RevertRequest | None:
    """Revert of the last task that changed ``entry``: every file of that task (None: no task known)."""
    task = entry.last_task
    if task is None:
        return None
    files = [e for e in entries if e.session_id == entry.session_id and task in e.task_ids]
    return RevertRequest(
        paths=(),
        task_id=task,
        session_id=entry.session_id,
        display_paths=tuple(e.display_path for e in files),
    )


_FILE_TOOLS = {"WriteFile": "modified", "EditFile": "modified", "DeleteFile": "deleted"}


def changes_from_history(
    messages: Any, workspace_root: Path | None, known: set[str], kept_sessions: set[str]
) -> list[dict[str, Any]]:
    """Preview entries for the files a past conversation's tasks wrote, edited or deleted (its
    ``session_history`` messages) in sessions other than ``kept_sessions`` (whose changes the runtime
    has listed), and not among ``known`` paths: what is left to show when this computer no longer
    keeps their earlier content (another computer, or removed after a month). They carry no diff
    and cannot be reverted."""
    calls: dict[str, tuple[str, str, str | None, str | None]] = {}
    succeeded: set[str] = set()
    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool" and message.get("toolStatus") == "succeeded":
            succeeded.add(str(message.get("toolCallId")))
        if message.get("sessionId") in kept_sessions:
            continue
        for call in message.get("toolCalls") or ():
            if not isinstance(call, dict) or call.get("toolName") not in _FILE_TOOLS:
                continue
            arguments = call.get("arguments")
            path = arguments.get("path") if isinstance(arguments, dict) else None
            if isinstance(path, str) and path:
                calls[str(call.get("toolCallId"))] = (
                    path,
                    _FILE_TOOLS[call["toolName"]],
                    message.get("sessionId"),
                    message.get("taskId"),
                )
    entries: dict[str, dict[str, Any]] = {}
    note = translate(
        "PatchPreview", "Its earlier content is not kept on this computer, so it cannot be reverted."
    )
    for call_id, (path, status, session_id, task_id) in calls.items():
        if call_id not in succeeded:
            continue
        if not os.path.isabs(path) and workspace_root is not None:
            path = os.path.normpath(os.path.join(workspace_root, path))
        if path in known:
            continue
        label = _display_path(path, workspace_root)
        entry = entries.setdefault(
            path,
            {
                "path": path,
                "status": status,
                "sizeBytes": 0,
                "taskIds": [],
                "revertible": False,
                "revertNote": note,
                **({"sessionId": session_id} if isinstance(session_id, str) else {}),
            },
        )
        entry["status"] = status  # the last change tells what is there now
        entry["diff"] = f"Files a/{label} and b/{label} differ ({note})\n"
        if isinstance(task_id, str) and task_id not in entry["taskIds"]:
            entry["taskIds"].append(task_id)
    return [entries[path] for path in sorted(entries)]


def reverted_summary(result: Any, workspace_root: Path | None) -> tuple[str, ...]:
    """The display paths a ``RevertChanges`` result names, each with what happened to it."""
    files = result.get("files") if isinstance(result, dict) else None
    shown = []
    for item in files if isinstance(files, list) else ():
        if isinstance(item, dict) and isinstance(item.get("path"), str):
            path = _display_path(item["path"], workspace_root)
            removed = item.get("action") == "removed"
            shown.append(translate("PatchPreview", "{path} (removed)").format(path=path) if removed else path)
    return tuple(shown)


def _display_path(path: str, root: Path | None) -> str:
    if root is None or not os.path.isabs(path):
        return path.replace(os.sep, "/")
    try:
        relative = PurePath(os.path.relpath(path, root))
    except ValueError:  # another drive on Windows
        return path
    if relative.parts and relative.parts[0] == os.pardir:
        return path
    return relative.as_posix()


def _counts(diff: str) -> tuple[int, int]:
    added = removed = 0
    in_hunks = False
    for line in diff.splitlines():
        kind, in_hunks = line_kind(line, in_hunks)
        if kind == "added":
            added += 1
        elif kind == "removed":
            removed += 1
    return added, removed


def line_kind(line: str, in_hunks: bool) -> tuple[LineKind, bool]:
    """The kind of one diff line, and whether the next line is inside hunks.

    Before the first ``@@`` everything is header (``--- a/x``, ``+++ b/x``, ``diff --git``…); after it,
    ``-``/``+`` are removed/added lines even when they look like headers (a removed ``-- x`` line is
    ``--- x``), until a ``diff `` line starts the next file."""
    if line.startswith("@@"):
        return "hunk", True
    if line.startswith("diff "):
        return "header", False
    if not in_hunks:
        if line.startswith(("Binary files ", "Files ")):
            return "note", False
        return "header", False
    if line.startswith("+"):
        return "added", True
    if line.startswith("-"):
        return "removed", True
    if line.startswith("\\"):
        return "note", True
    return "context", True


def display_diff(diff: str) -> tuple[str, str]:
    """What to show of ``diff`` and, when it was cut, a line saying so (``""`` otherwise)."""
    lines = diff.splitlines()
    shown = lines[:DISPLAY_MAX_LINES]
    text = "\n".join(shown)
    if len(text) > DISPLAY_MAX_CHARS:
        text = text[:DISPLAY_MAX_CHARS].rsplit("\n", 1)[0]
        shown = text.split("\n")
    hidden = len(lines) - len(shown)
    if hidden <= 0:
        return text, ""
    return text, translate(
        "PatchPreview", "… {count} more lines not shown here: open the file in the editor to see it all."
    ).format(count=f"{hidden:,}")


@dataclass(frozen=True)
class OpenTarget:
    path: Path
    reveal: bool
    """True: open the folder that holds the file, not the file (the system would run it)."""
    note: str
    """Why the folder was opened instead; ``""`` when the file itself is opened."""


class CannotOpen(Exception):
    """There is nothing to open for this entry; the message says why, for the user."""


def open_target(entry: PatchEntry, workspace_root: Path | None, *, windows: bool | None = None) -> OpenTarget:
    """What "Open in editor" opens for ``entry``: the file, or its folder when the system would run
    the file instead of showing it (an ``.exe``, a ``.command``, anything with an execute bit; on
    Windows also scripts such as ``.py``). ``windows``: the platform's rules (default: this one's).

    ``CannotOpen`` for a deleted file, a relative path without a workspace, or a file that is gone."""
    windows = sys.platform == "win32" if windows is None else windows
    if entry.status == "deleted":
        raise CannotOpen(
            translate("PatchPreview", "{path} was deleted: there is no file to open.").format(
                path=entry.display_path
            )
        )
    path = Path(entry.path)
    if not path.is_absolute():
        if workspace_root is None:
            raise CannotOpen(
                translate("PatchPreview", "{path} has no folder to be found in.").format(
                    path=entry.display_path
                )
            )
        path = workspace_root / path
    try:
        info = path.stat()
    except OSError:
        raise CannotOpen(
            translate("PatchPreview", "{path} no longer exists.").format(path=entry.display_path)
        ) from None
    suffix = path.suffix.lower()
    runnable = (
        stat.S_ISDIR(info.st_mode)
        or suffix in _RUNNABLE_SUFFIXES
        or (windows and suffix in _RUNNABLE_ON_WINDOWS)
        or (not windows and bool(info.st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)))
    )
    if runnable:
        return OpenTarget(
            path.parent,
            reveal=True,
            note=translate(
                "PatchPreview", "Opened the folder of {name}: the system would run this file, not show it."
            ).format(name=path.name),
        )
    return OpenTarget(path, reveal=False, note="")
