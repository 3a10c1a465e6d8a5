"""What the window's runtime-update indicator says: an update round's progress and result, and a
crash-loop rollback, as one short line (and a longer tooltip).

The updater works in the background and needs nothing from the user, so the indicator is quiet:
routine checks that find nothing say nothing, a failure is a note with its reason (the runtime in use
stays and the next check tries again), and only a check the user asked for (Help → Check for Runtime
Updates) answers "up to date".
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop.updater.outcome import UpdateProgress, UpdateResult, UpdateStage, UpdateStatus

if TYPE_CHECKING:  # the installer's imports are not needed to draw a note
    from desktop.updater.install import Rollback

__all__ = ["NoteKind", "UpdateNote", "progress_note", "result_note", "rollback_note"]

ANSWER_SECONDS = 10.0
"""How long the answer to a check the user asked for stays when there is nothing to install."""


class NoteKind(enum.StrEnum):
    WORKING = "working"
    """A round in progress (with ``percent`` while downloading)."""
    DONE = "done"
    """Something changed for the better: a new runtime is active."""
    INFO = "info"
    PROBLEM = "problem"
    """A refusal, a failure or a rollback: shown quietly, the user need not act."""


@dataclass(frozen=True, slots=True)
class UpdateNote:
    text: str
    detail: str = ""
    """The tooltip: the whole message and what it means for the user."""
    kind: NoteKind = NoteKind.INFO
    percent: int | None = None
    linger_seconds: float | None = None
    """None: stays until the next round; else hidden after this long."""


_STAGE_TEXT = {
    UpdateStage.INSTALLING: "Installing runtime {version}…",
    UpdateStage.HEALTH_CHECK: "Checking that runtime {version} starts…",
    UpdateStage.ACTIVATING: "Activating runtime {version}…",
}


def progress_note(progress: UpdateProgress, *, asked: bool) -> UpdateNote | None:
    """The note while a round runs; None for a routine check that has found nothing yet."""
    if progress.stage is UpdateStage.CHECKING:
        return UpdateNote("Checking for runtime updates…", kind=NoteKind.WORKING) if asked else None
    version = progress.version or "update"
    if progress.stage is UpdateStage.DOWNLOADING:
        if progress.total <= 0:
            return UpdateNote(f"Downloading runtime {version}…", kind=NoteKind.WORKING)
        percent = min(100, progress.done * 100 // progress.total)
        return UpdateNote(
            f"Downloading runtime {version} — {percent} %",
            detail=f"{_size(progress.done)} of {_size(progress.total)}, in the background",
            kind=NoteKind.WORKING,
            percent=percent,
        )
    return UpdateNote(_STAGE_TEXT[progress.stage].format(version=version), kind=NoteKind.WORKING)


def result_note(result: UpdateResult, *, asked: bool) -> UpdateNote | None:
    """The note a round leaves; None when a routine check found nothing to say."""
    status = result.status
    if status is UpdateStatus.INSTALLED:
        return UpdateNote(
            f"Runtime {result.version} installed; new conversations use it",
            detail=f"{_sentence(result.message)} Conversations already open keep their runtime until"
            " they are closed.",
            kind=NoteKind.DONE,
        )
    if status is UpdateStatus.ROLLED_BACK:
        return UpdateNote(
            f"Runtime {result.version} was withdrawn by its publisher; new conversations use another",
            detail=_sentence(result.message),
            kind=NoteKind.PROBLEM,
        )
    if status in (UpdateStatus.UP_TO_DATE, UpdateStatus.NOT_OFFERED):
        if not asked:
            return None
        text = (
            "The agent runtime is up to date"
            if status is UpdateStatus.UP_TO_DATE
            else "No runtime update for this installation yet"
        )
        return UpdateNote(text, detail=_sentence(result.message), linger_seconds=ANSWER_SECONDS)
    lead = "Runtime update refused" if status is UpdateStatus.REJECTED else "Runtime update postponed"
    return UpdateNote(
        f"{lead}: {result.message}",
        detail=f"{_sentence(result.message)} Nothing to do: the runtime in use stays, and Cowork checks"
        " again later.",
        kind=NoteKind.PROBLEM,
    )


def rollback_note(rollback: Rollback) -> UpdateNote:
    """A crash-looping runtime was taken out of service."""
    now = f"runtime {rollback.to_version}" if rollback.to_version else "the previous runtime"
    return UpdateNote(
        f"Runtime {rollback.from_version} kept crashing; new conversations use {now}",
        detail=f"Runtime {rollback.from_version} {rollback.reason}; it will not be used again.",
        kind=NoteKind.PROBLEM,
    )


def _sentence(message: str) -> str:
    message = message.strip()
    return message if message.endswith((".", "!", "?")) else message + "."


def _size(count: int) -> str:
    if count >= 1024 * 1024:
        return f"{count / (1024 * 1024):.1f} MB"
    return f"{max(1, round(count / 1024)) if count else 0} KB"
