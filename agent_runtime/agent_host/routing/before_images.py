"""What each task's file changes replaced, kept on disk so the user can revert them (``RevertChanges``).

Before a WriteFile, EditFile or DeleteFile runs, the first time a task touches a path, the file's
content is stored (its "before-image"; or the fact that the file did not exist), and after each of
the task's writes the SHA-256 of what the write left. A revert puts the before-image back only while
the file is exactly what the task's last write left: a file changed since (by the user, another
program or a later task) is refused, never overwritten.

Layout: ``<data dir>/changes/<sessionId>/index.json`` and ``blobs/<sha256>``. The directory outlives
the session's checkpoint (a clean shutdown removes that, not this), so a past conversation's changes
can still be reviewed and reverted; directories untouched for :data:`KEEP_DAYS` are removed when the
next session starts. Bounded: blobs of one session stay within :data:`MAX_SESSION_BYTES` (the oldest
tasks' images are dropped first) and a file over :data:`MAX_FILE_BYTES` is not kept at all; either
way the preview says revert is not available for that file.

Cost on a write: the before-image is one read and hash of the file (the first time a task touches it)
plus one blob write, both before the write; after it, the hash of the result (of the bytes the tool
wrote when the caller has them, else one read) and a rewrite of the index (small: paths and hashes).
That rewrite is not on the step's way to the next model call: it is queued to one writer thread,
which coalesces rewrites that pile up, and whatever reads the index waits for it — a revert, the
``exists`` check, another instance opened on the same directory, pruning, and the interpreter's exit.
Nothing is fsynced: the files survive the runtime's own crash (the kernel has them), and losing them to
a power cut — or the queued rewrite of the last quarter second (:data:`WRITE_DELAY_S`) to a kill —
loses only the ability to revert those writes (a file whose write is not in the index is refused, never
overwritten).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import logging
import os
import shutil
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agent_runtime.agent_host.routing.patches import (
    MAX_FILE_DIFF_BYTES,
    MAX_HASH_BYTES,
    FileState,
    path_label,
    read_state,
    unified_diff,
)
from agent_runtime.agent_host.session_runtime.errors import StateConflict
from agent_runtime.agent_host.state.files import private_directory, replace_file
from agent_runtime.agent_host.state.location import safe_session_id
from contracts.enums import PatchFileStatus
from contracts.errors import CoworkError, ErrorCode
from contracts.methods import PatchFile, RevertedFile

__all__ = [
    "KEEP_DAYS",
    "MAX_FILE_BYTES",
    "MAX_SESSION_BYTES",
    "BeforeImages",
    "RevertTarget",
    "changes_dir",
    "prune_old_sessions",
]

logger = logging.getLogger(__name__)

#: Before-images one session keeps; past it the oldest tasks' images are dropped.
MAX_SESSION_BYTES = 20 * 1024 * 1024
#: A file larger than this is not kept: the preview says it cannot be reverted.
MAX_FILE_BYTES = 5 * 1024 * 1024
#: Sessions whose stored changes were not touched for this long are removed.
KEEP_DAYS = 30

_INDEX = "index.json"
_BLOBS = "blobs"
_VERSION = 1

BeforeKind = Literal["absent", "file", "unavailable"]

#: How long a changed index waits before it is rewritten: the rewrites of a burst of steps become one,
#: done while the task waits for the model rather than on a step's way to it.
WRITE_DELAY_S = 0.25


class _IndexWriter:
    """One daemon thread that rewrites changed indexes :data:`WRITE_DELAY_S` after they change, in the
    order queued; :meth:`wait` has everything queued so far written at once (and runs at exit)."""

    def __init__(self, delay_s: float) -> None:
        self._delay = delay_s
        self._cond = threading.Condition()
        self._queued: dict[BeforeImages, None] = {}
        self._busy = False
        self._waiters = 0
        self._thread: threading.Thread | None = None

    def queue(self, images: BeforeImages) -> None:
        with self._cond:
            self._queued[images] = None
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="before-images", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def wait(self) -> None:
        """Return once every index queued before the call is written (blocking)."""
        with self._cond:
            self._waiters += 1
            self._cond.notify_all()
            try:
                while self._queued or self._busy:
                    if self._thread is None or not self._thread.is_alive():
                        break  # no writer (after fork, or at exit): written below, in this thread
                    self._cond.wait()
                left, self._queued = list(self._queued), {}
            finally:
                self._waiters -= 1
        for images in left:
            images._save()

    def forget(self) -> None:
        """After ``fork``: the child has no writer thread, and the parent writes what it queued."""
        self._cond = threading.Condition()
        self._queued = {}
        self._busy = False
        self._waiters = 0
        self._thread = None

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queued:
                    self._cond.wait()
                deadline = time.monotonic() + self._delay
                while not self._waiters and (left := deadline - time.monotonic()) > 0:
                    self._cond.wait(timeout=left)  # cut short only by a waiter
                batch, self._queued = list(self._queued), {}
                self._busy = True
            try:
                for images in batch:
                    images._save()
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()


_WRITER = _IndexWriter(WRITE_DELAY_S)
atexit.register(_WRITER.wait)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_WRITER.forget)


def changes_dir(data_dir: Path) -> Path:
    return data_dir / "changes"


@dataclass(slots=True)
class _FileRecord:
    path: str
    before: BeforeKind
    before_sha: str | None = None
    before_size: int = 0
    before_mode: int | None = None
    unavailable: str | None = None
    """Why the before-image is not kept (too large, dropped for room, not a regular file)."""
    after_sha: str | None = None
    """The SHA-256 of what the task's last write left; None when it left no file."""
    after_known: bool = False
    """False until a write of the task finished (and whenever the result could not be hashed)."""
    reverted: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "before": self.before,
            "beforeSha": self.before_sha,
            "beforeSize": self.before_size,
            "beforeMode": self.before_mode,
            "unavailable": self.unavailable,
            "afterSha": self.after_sha,
            "afterKnown": self.after_known,
            "reverted": self.reverted,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> _FileRecord:
        before = data["before"]
        if before not in ("absent", "file", "unavailable") or not isinstance(data["path"], str):
            raise ValueError("not a file record")
        return cls(
            path=data["path"],
            before=before,
            before_sha=data.get("beforeSha"),
            before_size=int(data.get("beforeSize") or 0),
            before_mode=data.get("beforeMode"),
            unavailable=data.get("unavailable"),
            after_sha=data.get("afterSha"),
            after_known=bool(data.get("afterKnown")),
            reverted=bool(data.get("reverted")),
        )


@dataclass(slots=True)
class _TaskRecord:
    task_id: str
    files: dict[str, _FileRecord] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RevertTarget:
    """One file of a revert: what it goes back to and what it must be now."""

    path: str
    restore: _FileRecord
    """The record whose before-image is put back (the earliest task's, for a whole-session revert)."""
    expect: _FileRecord
    """The record whose after-hash the file must still match (the latest task's)."""
    records: tuple[_FileRecord, ...]

    @property
    def deletes(self) -> bool:
        return self.restore.before == "absent"


class BeforeImages:
    """One session's before-images. Thread-safe: writes run in worker threads before and after a
    call, reads in the preview's thread."""

    def __init__(
        self,
        directory: Path,
        *,
        max_bytes: int = MAX_SESSION_BYTES,
        max_file_bytes: int = MAX_FILE_BYTES,
    ) -> None:
        self._dir = directory
        self._max_bytes = max_bytes
        self._max_file = max_file_bytes
        self._tasks: list[_TaskRecord] = []
        self._lock = threading.Lock()
        self._dirty = False
        """Records changed since the index was last written (a rewrite is queued)."""
        _WRITER.wait()  # an instance on this directory may have queued a rewrite a moment ago
        self._load()

    @classmethod
    def for_session(cls, data_dir: Path, session_id: str, **limits: int) -> BeforeImages:
        """``ValueError`` for a session ID that cannot be a directory name."""
        return cls(changes_dir(data_dir) / safe_session_id(session_id), **limits)

    @property
    def exists(self) -> bool:
        self.flush()
        return (self._dir / _INDEX).is_file()

    def flush(self) -> None:
        """Wait until the index on disk has every change recorded so far (blocking)."""
        if self._dirty:
            _WRITER.wait()

    # ------------------------------------------------------------------ recording

    def before_write(self, path: str, task_id: str) -> None:
        """Keep ``path``'s content before ``task_id`` first changes it (blocking I/O; never raises)."""
        with self._lock:
            task = self._task(task_id)
            if path in task.files and not task.files[path].reverted:
                return
        state = read_state(path, max_keep=self._max_file, max_hash=self._max_file)
        record = _FileRecord(path=path, before="absent")
        if state.kind == "file" and state.content is not None and state.digest is not None:
            record.before, record.before_sha, record.before_size = "file", state.digest.hex(), state.size
            record.before_mode = _mode(path)
        elif state.kind == "file":
            record.before, record.before_size = "unavailable", state.size
            record.unavailable = (
                f"the file was larger than {self._max_file // (1024 * 1024)} MB before this task changed it"
            )
        elif state.kind != "absent":
            record.before = "unavailable"
            record.unavailable = "it was not a regular file before this task changed it"
        with self._lock:
            task = self._task(task_id)
            if path in task.files and not task.files[path].reverted:
                return  # a parallel call of the same task was first
            if record.before == "file" and state.content is not None:
                if not self._make_room(state.size, keep=task):
                    record.before, record.before_sha = "unavailable", None
                    record.unavailable = (
                        "the changes kept for this conversation reached their size limit"
                        f" ({self._max_bytes // (1024 * 1024)} MB)"
                    )
                else:
                    self._write_blob(record.before_sha or "", state.content)
            # The index is saved after the write (``after_write``): until then a revert is refused anyway
            # (the write's result is unknown), so one index write per call is enough.
            task.files[path] = record

    def after_write(self, path: str, task_id: str, *, left: bytes | None = None) -> None:
        """Note what the task's write left at ``path``: ``left``, the bytes the tool wrote when it
        succeeded (hashed, not read back: a change by someone else since then must fail the revert's
        comparison), or else what is there now (read: blocking I/O). Never raises."""
        if left is not None:
            state = FileState("file", size=len(left), digest=hashlib.sha256(left).digest())
        else:
            state = read_state(path, max_keep=0, max_hash=MAX_HASH_BYTES)
        with self._lock:
            task = next((t for t in self._tasks if t.task_id == task_id), None)
            record = task.files.get(path) if task is not None else None
            if record is None:
                return
            if state.kind == "absent":
                record.after_sha, record.after_known = None, True
            elif state.kind == "file" and state.digest is not None:
                record.after_sha, record.after_known = state.digest.hex(), True
            else:
                record.after_sha, record.after_known = None, False
            self._save_soon()

    # ------------------------------------------------------------------ reading

    def task_ids(self, path: str) -> list[str]:
        with self._lock:
            return [t.task_id for t in self._tasks if path in t.files and not t.files[path].reverted]

    def paths(self) -> list[str]:
        with self._lock:
            seen = dict.fromkeys(p for t in self._tasks for p, r in t.files.items() if not r.reverted)
        return list(seen)

    def availability(self, path: str) -> tuple[bool, str | None]:
        """Whether the whole conversation's change of ``path`` can be reverted now, and if not why."""
        try:
            target = self.target(path, None)
            self._check(target)
        except CoworkError as exc:
            return False, exc.shape.message
        return True, None

    def preview(self, roots: Sequence[str], session_id: str | None) -> list[PatchFile]:
        """The net change of every path against the disk now (an earlier session's changes)."""
        files = []
        for path in sorted(self.paths()):
            try:
                target = self.target(path, None)
            except CoworkError:
                continue
            original = self._state_of(target.restore)
            current = read_state(path, max_keep=self._max_file, max_hash=MAX_HASH_BYTES)
            if original is not None and original.same_as(current):
                continue
            if original is None:
                original = FileState("file", size=target.restore.before_size)
            diff = unified_diff(path_label(path, roots), original, current)
            if len(diff) > MAX_FILE_DIFF_BYTES:
                label = path_label(path, roots)
                diff = f"Files a/{label} and b/{label} differ (too large to show)\n"
            status = (
                PatchFileStatus.CREATED
                if target.restore.before == "absent"
                else PatchFileStatus.DELETED
                if current.kind == "absent"
                else PatchFileStatus.MODIFIED
            )
            revertible, note = self.availability(path)
            files.append(
                PatchFile(
                    path=path,
                    status=status,
                    diff=diff,
                    size_bytes=current.size if current.kind == "file" else 0,
                    session_id=session_id,
                    task_ids=self.task_ids(path),
                    revertible=revertible,
                    revert_note=note,
                )
            )
        return files

    # ------------------------------------------------------------------ reverting

    def targets(self, task_id: str | None, paths: Sequence[str] | None) -> list[RevertTarget]:
        """What a revert of ``task_id`` (all its files, or ``paths`` of them) or of ``paths`` over the
        whole conversation would do. ``CoworkError`` (FILE_NOT_FOUND) for a task or path with no
        stored change."""
        if task_id is not None:
            with self._lock:
                task = next((t for t in self._tasks if t.task_id == task_id), None)
                known = [] if task is None else [p for p, r in task.files.items() if not r.reverted]
            if task is None or not known:
                raise CoworkError(
                    ErrorCode.FILE_NOT_FOUND,
                    f"No changes of task {task_id} are kept that could be reverted.",
                    details={"taskId": task_id},
                )
            chosen = known if paths is None else list(paths)
        else:
            chosen = list(paths or ())
        return [self.target(path, task_id) for path in dict.fromkeys(chosen)]

    def target(self, path: str, task_id: str | None) -> RevertTarget:
        later: list[_FileRecord] = []
        with self._lock:
            if task_id is None:
                records = [t.files[path] for t in self._tasks if _live(t, path)]
            else:
                task = next((t for t in self._tasks if t.task_id == task_id), None)
                record = task.files.get(path) if task is not None else None
                records = [record] if record is not None and not record.reverted else []
                later = self._later_records(task_id, path)
        if not records:
            raise CoworkError(
                ErrorCode.FILE_NOT_FOUND,
                f"No change of {path} is kept that could be reverted"
                + (f" for task {task_id}." if task_id else "."),
                details={"path": path, **({"taskId": task_id} if task_id else {})},
            )
        if task_id is not None and later:
            # a state conflict (seed 001 §6.5): the same revert succeeds once the later task's is done
            raise StateConflict(
                f"{path} was changed again by a later task: revert that task first.",
                reason="changedByLaterTask",
                path=path,
                taskId=task_id,
            )
        return RevertTarget(path=path, restore=records[0], expect=records[-1], records=tuple(records))

    def check(self, targets: Iterable[RevertTarget]) -> None:
        """``CoworkError`` for the first target that cannot be reverted now."""
        for target in targets:
            self._check(target)

    def _check(self, target: RevertTarget) -> None:
        restore, expect = target.restore, target.expect
        if restore.before == "unavailable":
            raise CoworkError(
                ErrorCode.FILE_TOO_LARGE,
                f"Revert is not available for {target.path}:"
                f" {restore.unavailable or 'its content was not kept'}.",
                details={"path": target.path},
            )
        if restore.before == "file" and not self._blob(restore.before_sha).is_file():
            raise CoworkError(
                ErrorCode.FILE_NOT_FOUND,
                f"Revert is not available for {target.path}: its earlier content is no longer kept.",
                details={"path": target.path},
            )
        current = read_state(target.path, max_keep=0, max_hash=MAX_HASH_BYTES)
        now_sha = current.digest.hex() if current.kind == "file" and current.digest is not None else None
        if not expect.after_known or current.kind not in ("absent", "file") or now_sha != expect.after_sha:
            raise StateConflict(
                f"{target.path} was changed after the agent's last write to it; it is left as it is.",
                reason="changedOnDisk",
                path=target.path,
            )

    def apply(self, target: RevertTarget) -> RevertedFile:
        """Put ``target`` back (checked by :meth:`check` just before). ``OSError`` when the disk refuses."""
        restore = target.restore
        if restore.before == "absent":
            with contextlib.suppress(FileNotFoundError):
                os.unlink(target.path)
            action: Literal["restored", "removed"] = "removed"
        else:
            data = self._blob(restore.before_sha).read_bytes()
            os.makedirs(os.path.dirname(target.path), exist_ok=True)
            replace_file(Path(target.path), data)
            if restore.before_mode is not None:
                os.chmod(target.path, restore.before_mode)
            action = "restored"
        with self._lock:
            for record in target.records:
                record.reverted = True
            self._save_soon()
        self.flush()
        return RevertedFile(path=target.path, action=action)

    # ------------------------------------------------------------------ storage

    def _task(self, task_id: str) -> _TaskRecord:
        for task in self._tasks:
            if task.task_id == task_id:
                return task
        task = _TaskRecord(task_id)
        self._tasks.append(task)
        return task

    def _later_records(self, task_id: str, path: str) -> list[_FileRecord]:
        index = next((i for i, t in enumerate(self._tasks) if t.task_id == task_id), len(self._tasks))
        return [
            t.files[path] for t in self._tasks[index + 1 :] if path in t.files and not t.files[path].reverted
        ]

    def _state_of(self, record: _FileRecord) -> FileState | None:
        if record.before == "absent":
            return FileState("absent")
        if record.before != "file":
            return None
        try:
            content = self._blob(record.before_sha).read_bytes()
        except OSError:
            return None
        return FileState("file", size=len(content), digest=hashlib.sha256(content).digest(), content=content)

    def _blob(self, sha: str | None) -> Path:
        return self._dir / _BLOBS / (sha or "missing")

    def _used(self) -> dict[str, int]:
        return {
            r.before_sha: r.before_size
            for t in self._tasks
            for r in t.files.values()
            if r.before == "file" and r.before_sha
        }

    def _make_room(self, size: int, *, keep: _TaskRecord) -> bool:
        """Drop the oldest tasks' images until ``size`` more fits; False if it cannot."""
        if size > self._max_bytes:
            return False
        while sum(self._used().values()) + size > self._max_bytes:
            oldest = next((t for t in self._tasks if t is not keep and _has_images(t)), None)
            if oldest is None:
                return False
            for record in oldest.files.values():
                if record.before == "file":
                    record.before, record.unavailable = (
                        "unavailable",
                        (
                            "the changes kept for this conversation reached their size limit and this"
                            " task's were dropped"
                        ),
                    )
            used = self._used()
            for blob in (self._dir / _BLOBS).glob("*"):
                if blob.name not in used:
                    blob.unlink(missing_ok=True)
        return True

    def _write_blob(self, sha: str, content: bytes) -> None:
        blob = self._blob(sha)
        if blob.is_file():
            return
        try:
            private_directory(self._dir / _BLOBS)
            replace_file(blob, content, durable=False)
        except OSError as exc:
            logger.warning("could not keep the earlier content of a file for revert: %s", exc)

    def _save_soon(self) -> None:
        """Queue a rewrite of the index (called holding the lock). One queued rewrite takes every change
        made until it runs, so a burst of writes costs one rewrite."""
        if not self._dirty:
            self._dirty = True
            _WRITER.queue(self)

    def _save(self) -> None:
        """The queued rewrite (by the writer; one batch at a time, so never an older one last)."""
        with self._lock:
            if not self._dirty:
                return
            self._dirty = False
            document = self._document()
        self._write_index(document)

    def _document(self) -> dict[str, Any]:
        return {
            "version": _VERSION,
            "tasks": [
                {"taskId": t.task_id, "files": [r.to_json() for r in t.files.values()]} for t in self._tasks
            ],
        }

    def _write_index(self, document: dict[str, Any]) -> None:
        try:
            private_directory(self._dir)
            replace_file(self._dir / _INDEX, json.dumps(document).encode("utf-8"), durable=False)
        except OSError as exc:
            logger.warning("could not save the changes kept for revert: %s", exc)

    def _load(self) -> None:
        try:
            document = json.loads((self._dir / _INDEX).read_bytes())
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            logger.warning("the changes kept for revert in %s cannot be read: %s", self._dir, exc)
            return
        try:
            for task in document["tasks"]:
                record = _TaskRecord(str(task["taskId"]))
                for item in task["files"]:
                    file = _FileRecord.from_json(item)
                    record.files[file.path] = file
                self._tasks.append(record)
        except (KeyError, TypeError, ValueError) as exc:
            logger.warning("the changes kept for revert in %s are damaged: %s", self._dir, exc)
            self._tasks.clear()


def prune_old_sessions(
    data_dir: Path, *, keep_days: int = KEEP_DAYS, now: Callable[[], float] = time.time
) -> int:
    """Remove sessions' stored changes untouched for ``keep_days``; how many. Never raises."""
    root = changes_dir(data_dir)
    cutoff = now() - keep_days * 86400
    _WRITER.wait()
    removed = 0
    try:
        entries = list(root.iterdir())
    except OSError:
        return 0
    for entry in entries:
        try:
            if entry.is_dir() and (entry / _INDEX).stat().st_mtime < cutoff:
                shutil.rmtree(entry)
                removed += 1
        except OSError:
            continue
    return removed


def _live(task: _TaskRecord, path: str) -> bool:
    return path in task.files and not task.files[path].reverted


def _has_images(task: _TaskRecord) -> bool:
    return any(r.before == "file" for r in task.files.values())


def _mode(path: str) -> int | None:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None
