"""The Local State Store: one crash-recovery checkpoint per session (seed 000 §9).

The checkpoint is written after every completed step, synchronously and atomically (§9.3), read once
on restart (§9.5), deleted on clean session end or when the Session Service says the session is gone
(§9.6). One that cannot be used (§9.7) is not deleted but renamed to
``<sessionId>.json.corrupt-<UTC time>`` beside it: it no longer blocks the session ID, and whoever
looks into why recovery failed still has the bytes.

The images of the thread are not in the checkpoint but in files beside it (:mod:`.images`), written
before the checkpoint that names them, read back by :meth:`CheckpointStore.load`, deleted with it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from agent_runtime.agent_host.state.errors import CheckpointCorrupt
from agent_runtime.agent_host.state.files import (
    TEMP_SUFFIX,
    fsync_directory,
    private_directory,
    replace_file,
    temp_prefix,
)
from agent_runtime.agent_host.state.images import ImageFiles
from agent_runtime.agent_host.state.journal import JOURNAL_SUFFIX, StepJournal, encode_record, latest_state
from agent_runtime.agent_host.state.location import checkpoints_dir, runtime_data_dir, safe_session_id
from agent_runtime.agent_host.state.serialize import CheckpointDocument, CheckpointEncoder
from contracts.checkpoint import SUPPORTED_CHECKPOINT_VERSIONS, Checkpoint, checkpoint_problem
from contracts.session_runtime import SNAPSHOT_SCHEMA, SessionRuntimeSnapshot, snapshot_problem
from contracts.validation import invalid_request

__all__ = ["CHECKPOINT_SUFFIX", "CORRUPT_MARK", "MAX_CHECKPOINT_BYTES", "CheckpointStore"]

logger = logging.getLogger(__name__)

_Document = TypeVar("_Document", Checkpoint, SessionRuntimeSnapshot)

CHECKPOINT_SUFFIX = ".json"
CORRUPT_MARK = ".corrupt-"
"""``<sessionId>.json.corrupt-<UTC time>``: a checkpoint set aside; never read back as a checkpoint."""
# Far above any real session (tool output is capped at 100 KiB a result) yet small enough that a
# stray huge file cannot exhaust memory when read back on start-up.
MAX_CHECKPOINT_BYTES = 512 * 1024 * 1024
# A journal may grow as large as its checkpoint (so the records cost at most as much as rewriting it
# would have), and at least this large, so that a short session's steps are records too.
_MIN_JOURNAL_BYTES = 256 * 1024


class CheckpointStore:
    """Checkpoints as ``<directory>/<sessionId>.json``: 0600 files in a 0700 directory.

    Thread-safe: the loop may write from a worker thread while shutdown deletes; one lock orders them.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._lock = threading.Lock()
        self._encoder = CheckpointEncoder()
        self._images = ImageFiles(directory)
        # Per session: the bytes of its last checkpoint written here and the messages it held (by
        # identity): what a journal record builds on.
        self._written: dict[str, tuple[bytes, list[int]]] = {}
        self._journals: dict[str, StepJournal] = {}

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> CheckpointStore:
        """The store in ``<runtime data dir>/checkpoints`` (``COWORK_RUNTIME_DATA_DIR`` or platformdirs)."""
        return cls(checkpoints_dir(runtime_data_dir(environ)))

    def path_for(self, session_id: str) -> Path:
        """The checkpoint file of ``session_id``; ``ValueError`` if the ID cannot safely name a file."""
        return self.directory / f"{safe_session_id(session_id)}{CHECKPOINT_SUFFIX}"

    def write(self, checkpoint: CheckpointDocument) -> bytes:
        """Replace the session's checkpoint, atomically and durably (fsync included); raises ``OSError``.

        The runtime writes the ``session_runtime_v2`` snapshot; the legacy form is still accepted (tests
        and tools that make a checkpoint of an older runtime).

        Returns the bytes written. After a failure the previous checkpoint, if any, is still there and
        still complete. Each
        message's JSON is reused from the previous write, so messages must not be changed in place
        once written (the thread never does; ``model_copy`` makes a new message).
        """
        path = self.path_for(checkpoint.session_id)
        with self._lock:
            private_directory(self.directory)
            data = self._encoder.encode(checkpoint, partial(self._images.referenced, checkpoint.session_id))
            if len(data) > MAX_CHECKPOINT_BYTES:
                raise OSError(
                    errno.EFBIG,
                    f"checkpoint of {len(data):,} bytes exceeds the {MAX_CHECKPOINT_BYTES:,}-byte limit",
                )
            self._remove_leftovers(path)
            replace_file(path, data)
            if isinstance(checkpoint, SessionRuntimeSnapshot):
                self._written[checkpoint.session_id] = (
                    data,
                    [id(message) for message in checkpoint.transcript.messages],
                )
                journal = self._journals.get(checkpoint.session_id)
                if journal is not None:
                    journal.restart()
            else:
                self._written.pop(checkpoint.session_id, None)
        return data

    def write_step(self, snapshot: CheckpointDocument) -> bool:
        """Make ``snapshot`` durable as cheaply as possible: True if that took a whole checkpoint, False
        if a record in the step journal on top of the last checkpoint did (:mod:`.journal`).

        A record needs the session's last checkpoint to have been written by this store and its
        messages to be the start of the snapshot's, unchanged; otherwise (the first write after a
        restore, a compacted thread, a legacy document), or once the journal has grown as large as
        the checkpoint, the checkpoint is written. Raises ``OSError``. Either way, once this returns a
        crash restores ``snapshot`` (:meth:`load`).
        """
        if not isinstance(snapshot, SessionRuntimeSnapshot):
            self.write(snapshot)
            return True
        messages = snapshot.transcript.messages
        with self._lock:
            written = self._written.get(snapshot.session_id)
            if written is not None:
                base, ids = written
                kept = len(ids)
                if len(messages) >= kept and all(
                    id(message) == key for message, key in zip(messages, ids, strict=False)
                ):
                    journal = self._journal(snapshot.session_id)
                    images = partial(self._images.referenced, snapshot.session_id)
                    envelope, added = self._encoder.encode_after(snapshot, kept, images)
                    record = encode_record(base, kept, envelope, added)
                    if journal.size + len(record) <= max(len(base), _MIN_JOURNAL_BYTES):
                        journal.append(record)
                        return False
        self.write(snapshot)
        return True

    def load(self, session_id: str) -> CheckpointDocument | None:
        """The session's checkpoint — a ``session_runtime_v2`` snapshot, or a legacy ``"1.0"``
        checkpoint of an older runtime; None if there is none.

        A checkpoint that cannot be used — unreadable, not a checkpoint, or one that parses but could
        not be resumed (:func:`~contracts.checkpoint.checkpoint_problem`) — is set aside, logged, and
        reported as ``CheckpointCorrupt`` (seed 000 §9.7), so the caller only has to tell the desktop
        and start fresh.
        """
        path = self.path_for(session_id)
        with self._lock:
            self._remove_leftovers(path)
            try:
                checkpoint = self._read(path, session_id)
            except CheckpointCorrupt as exc:
                raise self._set_aside(path, exc) from None
            if isinstance(checkpoint, SessionRuntimeSnapshot):
                return self._with_images(checkpoint)
            return None if checkpoint is None else self._with_images(checkpoint)

    def with_images(self, document: _Document) -> _Document:
        """``document`` (a checkpoint, or a snapshot of the session's event log, which carries the same
        bytes) with its images read back from their files, as :meth:`load` returns it."""
        with self._lock:
            return self._with_images(document)

    def _with_images(self, document: _Document) -> _Document:
        if isinstance(document, SessionRuntimeSnapshot):
            messages = self._images.resolved(document.session_id, document.transcript.messages)
            transcript = document.transcript.model_copy(update={"messages": messages})
            return document.model_copy(update={"transcript": transcript})
        return document.model_copy(
            update={"thread": self._images.resolved(document.session_id, document.thread)}
        )

    def set_aside(
        self, session_id: str, reason: str, *, workspace_id: str | None = None
    ) -> CheckpointCorrupt:
        """Treat the session's checkpoint as corrupt for ``reason`` — found only when rebuilding the
        session from it (a thread out of order, IDs the backend disagrees with): set it aside and log it
        as :meth:`load` does; returns the error to raise."""
        path = self.path_for(session_id)
        with self._lock:
            return self._set_aside(
                path, CheckpointCorrupt(reason, session_id=session_id, workspace_id=workspace_id)
            )

    def was_set_aside(self, session_id: str) -> bool:
        """A checkpoint of the session was set aside as corrupt (it is still beside the checkpoints)."""
        name = f"{safe_session_id(session_id)}{CHECKPOINT_SUFFIX}{CORRUPT_MARK}"
        try:
            with os.scandir(self.directory) as entries:
                return any(entry.name.startswith(name) for entry in entries)
        except (FileNotFoundError, NotADirectoryError):
            return False

    def delete(self, session_id: str) -> None:
        """Remove the session's checkpoint and any leftover temp file; absence is fine."""
        path = self.path_for(session_id)
        with self._lock:
            self._remove_leftovers(path)
            path.unlink(missing_ok=True)
            self._forget(session_id)
            self._images.delete(session_id)

    def session_ids(self) -> list[str]:
        """Sessions that have a checkpoint here, most recently written first."""
        try:
            entries = list(os.scandir(self.directory))
        except (FileNotFoundError, NotADirectoryError):
            return []
        found: list[tuple[int, str]] = []
        for entry in entries:
            if not entry.name.endswith(CHECKPOINT_SUFFIX):
                continue
            session_id = entry.name[: -len(CHECKPOINT_SUFFIX)]
            try:
                safe_session_id(session_id)
                if not entry.is_file(follow_symlinks=False):
                    continue
                modified = entry.stat(follow_symlinks=False).st_mtime_ns
            except (ValueError, OSError):
                continue
            found.append((modified, session_id))
        found.sort(key=lambda item: (-item[0], item[1]))
        return [session_id for _, session_id in found]

    def _read(self, path: Path, session_id: str) -> CheckpointDocument | None:
        try:
            with path.open("rb") as file:
                size = os.fstat(file.fileno()).st_size
                if size > MAX_CHECKPOINT_BYTES:
                    raise CheckpointCorrupt(
                        f"the checkpoint file is {size:,} bytes, more than a checkpoint can be",
                        session_id=session_id,
                    )
                raw = file.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise CheckpointCorrupt(
                f"the checkpoint file could not be read ({exc.strerror or type(exc).__name__})",
                session_id=session_id,
            ) from None
        latest = self._with_journal(raw, session_id)
        try:
            checkpoint = _parse(latest, session_id)
        except CheckpointCorrupt:
            if latest is raw:
                raise
            # The journal's state does not validate (never written so by this store): the checkpoint
            # it builds on still may.
            logger.warning("session %s: ignoring a step journal whose state is not valid", session_id)
            checkpoint = _parse(raw, session_id)
        if checkpoint.session_id != session_id:
            raise CheckpointCorrupt(
                f"the checkpoint file of session {session_id} holds session {checkpoint.session_id[:80]}",
                session_id=session_id,
            )
        problem = (
            snapshot_problem(checkpoint)
            if isinstance(checkpoint, SessionRuntimeSnapshot)
            else checkpoint_problem(checkpoint)
        )
        if problem is not None:
            raise CheckpointCorrupt(
                f"the checkpoint cannot be resumed: {problem}",
                session_id=session_id,
                workspace_id=checkpoint.workspace_id,
            )
        return checkpoint

    def _journal(self, session_id: str) -> StepJournal:
        found = self._journals.get(session_id)
        if found is None:
            found = self._journals[session_id] = StepJournal(self._journal_path(session_id))
        return found

    def _journal_path(self, session_id: str) -> Path:
        return self.directory / f"{safe_session_id(session_id)}{JOURNAL_SUFFIX}"

    def _with_journal(self, raw: bytes, session_id: str) -> bytes:
        """The checkpoint brought up to the session's last journal record for it, if there is one."""
        journal = self._journal(session_id).read()
        if not journal:
            return raw
        latest = latest_state(raw, journal)
        if latest is None:
            return raw
        logger.info("session %s: brought the checkpoint up to its step journal", session_id)
        return latest

    def _forget(self, session_id: str) -> None:
        """Drop the session's journal and what a record would build on."""
        self._written.pop(session_id, None)
        found = self._journals.pop(session_id, None)
        with contextlib.suppress(OSError):
            (found or StepJournal(self._journal_path(session_id))).discard()

    def _set_aside(self, path: Path, corrupt: CheckpointCorrupt) -> CheckpointCorrupt:
        """Rename the corrupt checkpoint beside itself (deleted only if it cannot be renamed: a corrupt
        file must never block its session again); log and return ``corrupt`` saying where it went."""
        target = self._aside_name(path)
        moved: Path | None = target
        try:
            os.rename(path, target)
            fsync_directory(path.parent)
        except FileNotFoundError:
            moved = None  # nothing there to move: it vanished or was never a regular file
        except OSError:
            logger.exception("could not set the corrupt checkpoint %s aside; deleting it", path)
            moved = None
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
        self._forget(corrupt.session_id)  # a record is only ever applied to its own checkpoint
        # the session starts afresh and never resumes from the set-aside file: its images go
        with contextlib.suppress(OSError):
            self._images.delete(corrupt.session_id)
        corrupt.moved_to = moved.name if moved is not None else None
        logger.error(
            "checkpoint of session %s is corrupt: %s; %s",
            corrupt.session_id,
            corrupt.reason,
            f"kept as {moved.name} for diagnosis" if moved is not None else "nothing was kept",
            extra={"sessionId": corrupt.session_id, "path": str(path)}
            | ({"movedTo": str(moved)} if moved is not None else {}),
        )
        return corrupt

    @staticmethod
    def _aside_name(path: Path) -> Path:
        """``<name>.corrupt-<UTC time>``, numbered if that name is taken: earlier evidence is kept."""
        base = f"{path.name}{CORRUPT_MARK}{datetime.now(UTC).strftime('%Y%m%dT%H%M%S.%fZ')}"
        candidate, number = path.with_name(base), 1
        while candidate.exists():
            number += 1
            candidate = path.with_name(f"{base}-{number}")
        return candidate

    def _remove_leftovers(self, path: Path) -> None:
        """Delete temp files a killed writer left for this session; never picked up as checkpoints.

        Only this session's: another runtime process may be mid-write on its own session right now.
        """
        prefix = temp_prefix(path.name)
        try:
            entries = list(os.scandir(self.directory))
        except (FileNotFoundError, NotADirectoryError):
            return
        for entry in entries:
            if entry.name.startswith(prefix) and entry.name.endswith(TEMP_SUFFIX):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
                    logger.info("removed a leftover checkpoint temp file %s", entry.name)


def _parse(raw: bytes, session_id: str) -> CheckpointDocument:
    model: type[CheckpointDocument] = SessionRuntimeSnapshot if _is_v2(raw) else Checkpoint
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        raise CheckpointCorrupt(
            _why_invalid(raw, exc), session_id=session_id, workspace_id=_workspace_of(raw)
        ) from None


def _is_v2(raw: bytes) -> bool:
    """The file says it is a v2 snapshot (its ``schema``), checked without parsing it twice: the key
    appears near the start of every snapshot the runtime writes."""
    return b'"schema":"' + SNAPSHOT_SCHEMA.encode() + b'"' in raw[:200] or _schema_of(raw) == SNAPSHOT_SCHEMA


def _schema_of(raw: bytes) -> object:
    if b'"schema"' not in raw:
        return None
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return document.get("schema") if isinstance(document, dict) else None


def _workspace_of(raw: bytes) -> str | None:
    """The ``workspaceId`` an invalid file still names, if any: the recovery-failed event needs one."""
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    found = document.get("workspaceId") if isinstance(document, dict) else None
    return found if isinstance(found, str) and 0 < len(found) <= 256 else None


def _why_invalid(raw: bytes, exc: ValidationError) -> str:
    """One plain sentence for the first thing wrong with the file, in the order of seed 000 §9.7."""
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError):
        return "the checkpoint file is not valid JSON (truncated or overwritten)"
    if not isinstance(document, dict):
        return "the checkpoint file does not hold a JSON object"
    if document.get("schema") == SNAPSHOT_SCHEMA:
        if document.get("version") != 2:
            shown = json.dumps(document.get("version"))[:40]
            return (
                f"snapshot version {shown} of {SNAPSHOT_SCHEMA} is not supported by this runtime (it reads 2)"
            )
        return (
            f"the checkpoint file is not a valid {SNAPSHOT_SCHEMA} snapshot: {invalid_request(exc).message}"
        )
    version = document.get("checkpointVersion")
    if version not in SUPPORTED_CHECKPOINT_VERSIONS:
        supported = ", ".join([f"{SNAPSHOT_SCHEMA} version 2", *sorted(SUPPORTED_CHECKPOINT_VERSIONS)])
        shown = json.dumps(version if "schema" not in document else document.get("schema"))[:40]
        return f"checkpoint version {shown} is not supported by this runtime (it reads {supported})"
    return f"the checkpoint file is not a valid checkpoint: {invalid_request(exc).message}"
