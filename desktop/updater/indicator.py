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

from desktop.i18n import translate
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


def _stage_text(stage: UpdateStage) -> str:
    """Asked each time: the text follows the language installed."""
    return {
        UpdateStage.INSTALLING: translate("Updates", "Installing runtime {version}…"),
        UpdateStage.HEALTH_CHECK: translate("Updates", "Checking that runtime {version} starts…"),
        UpdateStage.ACTIVATING: translate("Updates", "Activating runtime {version}…"),
    }[stage]


def progress_note(progress: UpdateProgress, *, asked: bool) -> UpdateNote | None:
    """The note while a round runs; None for a routine check that has found nothing yet."""
    if progress.stage is UpdateStage.CHECKING:
        checking = translate("Updates", "Checking for runtime updates…")
        return UpdateNote(checking, kind=NoteKind.WORKING) if asked else None
    version = progress.version or translate("Updates", "update")
    if progress.stage is UpdateStage.DOWNLOADING:
        if progress.total <= 0:
            text = translate("Updates", "Downloading runtime {version}…").format(version=version)
            return UpdateNote(text, kind=NoteKind.WORKING)
        percent = min(100, progress.done * 100 // progress.total)
        return UpdateNote(
            translate("Updates", "Downloading runtime {version} — {percent} %").format(
                version=version, percent=percent
            ),
            detail=translate("Updates", "{done} of {total}, in the background").format(
                done=_size(progress.done), total=_size(progress.total)
            ),
            kind=NoteKind.WORKING,
            percent=percent,
        )
    return UpdateNote(_stage_text(progress.stage).format(version=version), kind=NoteKind.WORKING)


def result_note(result: UpdateResult, *, asked: bool) -> UpdateNote | None:
    """The note a round leaves; None when a routine check found nothing to say."""
    status = result.status
    if status is UpdateStatus.INSTALLED:
        return UpdateNote(
            translate("Updates", "Runtime {version} installed; new conversations use it").format(
                version=result.version
            ),
            detail=translate(
                "Updates", "{message} Conversations already open keep their runtime until they are closed."
            ).format(message=_sentence(result.message)),
            kind=NoteKind.DONE,
        )
    if status is UpdateStatus.ROLLED_BACK:
        return UpdateNote(
            translate(
                "Updates", "Runtime {version} was withdrawn by its publisher; new conversations use another"
            ).format(version=result.version),
            detail=_sentence(result.message),
            kind=NoteKind.PROBLEM,
        )
    if status in (UpdateStatus.UP_TO_DATE, UpdateStatus.NOT_OFFERED):
        if not asked:
            return None
        text = (
            translate("Updates", "The agent runtime is up to date")
            if status is UpdateStatus.UP_TO_DATE
            else translate("Updates", "No runtime update for this installation yet")
        )
        return UpdateNote(text, detail=_sentence(result.message), linger_seconds=ANSWER_SECONDS)
    lead = (
        translate("Updates", "Runtime update refused: {message}")
        if status is UpdateStatus.REJECTED
        else translate("Updates", "Runtime update postponed: {message}")
    )
    return UpdateNote(
        lead.format(message=result.message),
        detail=translate(
            "Updates", "{message} Nothing to do: the runtime in use stays, and Cowork checks again later."
        ).format(message=_sentence(result.message)),
        kind=NoteKind.PROBLEM,
    )


def rollback_note(rollback: Rollback) -> UpdateNote:
    """A crash-looping runtime was taken out of service."""
    text = (
        translate("Updates", "Runtime {failed} kept crashing; new conversations use runtime {now}").format(
            failed=rollback.from_version, now=rollback.to_version
        )
        if rollback.to_version
        else translate(
            "Updates", "Runtime {failed} kept crashing; new conversations use the previous runtime"
        ).format(failed=rollback.from_version)
    )
    return UpdateNote(
        text,
        detail=translate("Updates", "Runtime {version} {reason}; it will not be used again.").format(
            version=rollback.from_version, reason=rollback.reason
        ),
        kind=NoteKind.PROBLEM,
    )


def _sentence(message: str) -> str:
    message = message.strip()
    return message if message.endswith((".", "!", "?")) else message + "."


def _size(count: int) -> str:
    if count >= 1024 * 1024:
        return f"{count / (1024 * 1024):.1f} MB"
    return f"{max(1, round(count / 1024)) if count else 0} KB"
