"""Conversation names the user gave: kept on disk across restarts, found by any session of the
conversation, cleaned up, refused when empty, forgotten when the conversation is deleted."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.conversation.titles import MAX_TITLE_CHARS, TitleError, TitleStore


def test_a_name_survives_a_restart_and_is_found_by_any_session_of_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "desktop" / "conversation-names.json"
    assert TitleStore(path).rename(["s1", "s2"], "  Release   plan \n") == "Release plan"
    again = TitleStore(path)
    assert again.title_of(["s2"]) == "Release plan"
    assert again.title_of(["s3", "s1"]) == "Release plan"
    assert again.title_of(["s9"]) is None


@pytest.mark.parametrize(
    ("title", "problem"), [("  \n", "cannot be empty"), ("x" * (MAX_TITLE_CHARS + 1), "at most")]
)
def test_an_unusable_name_is_refused(tmp_path: Path, title: str, problem: str) -> None:
    store = TitleStore(tmp_path / "names.json")
    with pytest.raises(TitleError, match=problem):
        store.rename(["s1"], title)
    assert not (tmp_path / "names.json").exists()


def test_a_deleted_conversation_forgets_its_name_and_is_remembered_as_deleted(tmp_path: Path) -> None:
    path = tmp_path / "names.json"
    store = TitleStore(path)
    store.rename(["s1"], "Gone soon")
    store.rename(["s2"], "Stays")
    store.forget(["s1"])
    assert TitleStore(path).title_of(["s1"]) is None
    assert TitleStore(path).title_of(["s2"]) == "Stays"
    # The deletion is remembered: a history that reaches the backend late is not shown again.
    assert TitleStore(path).was_deleted(["s0", "s1"])
    assert not TitleStore(path).was_deleted(["s2"])


def test_an_unreadable_file_leaves_the_first_prompt_titles(tmp_path: Path) -> None:
    path = tmp_path / "names.json"
    path.write_text("{not json")
    assert TitleStore(path).title_of(["s1"]) is None
