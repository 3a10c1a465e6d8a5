"""The window's runtime-update note, without widgets: progress in words and percent, results that
matter, silence for routine checks that find nothing, failures as quiet notes with their reason."""

from __future__ import annotations

import pytest

from desktop.updater.indicator import (
    ANSWER_SECONDS,
    NoteKind,
    UpdateNote,
    progress_note,
    result_note,
    rollback_note,
)
from desktop.updater.install import Rollback
from desktop.updater.outcome import UpdateProgress, UpdateResult, UpdateStage, UpdateStatus


def test_a_download_shows_its_version_and_percentage() -> None:
    note = progress_note(
        UpdateProgress(UpdateStage.DOWNLOADING, 45 * 1024 * 1024, 100 * 1024 * 1024, "1.4.0"), asked=False
    )
    assert note == UpdateNote(
        "Downloading runtime 1.4.0 — 45 %",
        detail="45.0 MB of 100.0 MB, in the background",
        kind=NoteKind.WORKING,
        percent=45,
    )
    almost = progress_note(UpdateProgress(UpdateStage.DOWNLOADING, 999, 1000, "1.4.0"), asked=False)
    assert almost is not None
    assert almost.text.endswith("— 99 %")
    unknown = progress_note(UpdateProgress(UpdateStage.DOWNLOADING, 0, 0, "1.4.0"), asked=False)
    assert unknown == UpdateNote("Downloading runtime 1.4.0…", kind=NoteKind.WORKING)


def test_the_later_stages_name_the_version() -> None:
    texts = [
        progress_note(UpdateProgress(stage, version="1.4.0"), asked=False)
        for stage in (UpdateStage.INSTALLING, UpdateStage.HEALTH_CHECK, UpdateStage.ACTIVATING)
    ]
    assert [note.text if note else None for note in texts] == [
        "Installing runtime 1.4.0…",
        "Checking that runtime 1.4.0 starts…",
        "Activating runtime 1.4.0…",
    ]


def test_checking_is_shown_only_when_the_user_asked() -> None:
    assert progress_note(UpdateProgress(UpdateStage.CHECKING), asked=False) is None
    asked = progress_note(UpdateProgress(UpdateStage.CHECKING), asked=True)
    assert asked is not None
    assert asked.text == "Checking for runtime updates…"


def test_an_installed_runtime_says_new_conversations_use_it() -> None:
    result = UpdateResult(UpdateStatus.INSTALLED, "Runtime 1.4.0 is installed; new sessions use it", "1.4.0")
    note = result_note(result, asked=False)
    assert note is not None
    assert note.text == "Runtime 1.4.0 installed; new conversations use it"
    assert note.kind is NoteKind.DONE
    assert note.linger_seconds is None
    assert "already open keep their runtime" in note.detail


@pytest.mark.parametrize("status", [UpdateStatus.UP_TO_DATE, UpdateStatus.NOT_OFFERED])
def test_nothing_new_is_said_only_to_a_user_who_asked(status: UpdateStatus) -> None:
    result = UpdateResult(status, "Runtime 1.4.0 is the newest offered")
    assert result_note(result, asked=False) is None
    note = result_note(result, asked=True)
    assert note is not None
    assert note.linger_seconds == ANSWER_SECONDS
    assert note.detail == "Runtime 1.4.0 is the newest offered."
    assert note.text == (
        "The agent runtime is up to date"
        if status is UpdateStatus.UP_TO_DATE
        else "No runtime update for this installation yet"
    )


@pytest.mark.parametrize(
    ("status", "lead"),
    [(UpdateStatus.REJECTED, "Runtime update refused"), (UpdateStatus.FAILED, "Runtime update postponed")],
)
def test_a_refusal_or_failure_is_a_quiet_note_with_its_reason(status: UpdateStatus, lead: str) -> None:
    reason = "The release manifest is not trusted: no valid signature by a delegated key"
    for asked in (False, True):
        note = result_note(UpdateResult(status, reason, code="bad_signature"), asked=asked)
        assert note is not None
        assert note.text == f"{lead}: {reason}"
        assert note.kind is NoteKind.PROBLEM
        assert note.detail.startswith(reason + ". Nothing to do: the runtime in use stays")


def test_a_revoked_runtime_and_a_crash_loop_say_what_new_conversations_use() -> None:
    revoked = result_note(
        UpdateResult(
            UpdateStatus.ROLLED_BACK,
            "Runtime 1.4.0 was revoked by its publisher; new sessions use 1.3.0",
            "1.4.0",
            "revoked",
        ),
        asked=False,
    )
    assert revoked is not None
    assert revoked.text == "Runtime 1.4.0 was withdrawn by its publisher; new conversations use another"
    crashed = rollback_note(Rollback("1.4.0", "1.3.0", "crashed 3 times within 60 s of starting"))
    assert crashed.text == "Runtime 1.4.0 kept crashing; new conversations use runtime 1.3.0"
    assert (
        crashed.detail == "Runtime 1.4.0 crashed 3 times within 60 s of starting; it will not be used again."
    )
    assert crashed.kind is NoteKind.PROBLEM
