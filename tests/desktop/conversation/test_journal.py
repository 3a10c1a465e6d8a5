"""SessionJournal: the open sessions on disk, so a start after a crash knows what to offer to resume."""

from __future__ import annotations

from pathlib import Path

from desktop.conversation.journal import OpenSession, SessionJournal


def test_sessions_a_dead_desktop_left_open_are_offered_once_and_adopted(tmp_path: Path) -> None:
    path = tmp_path / "open-sessions.json"
    crashed = SessionJournal(path, pid=111, alive=lambda pid: pid == 222)
    crashed.add("sess_a", "ws_a", "/p/a")
    crashed.add("sess_b", "ws_b", None)
    crashed.remove("sess_b")  # shut down in order: not interrupted
    SessionJournal(path, pid=222, alive=lambda pid: True).add("sess_c", "ws_c", None)  # another window, alive

    restarted = SessionJournal(path, pid=333, alive=lambda pid: pid in (222, 333))
    assert restarted.interrupted() == [OpenSession("sess_a", "ws_a", "/p/a", 333)]
    # Adopted: the same start does not offer it twice, a later crash of this process offers it again.
    assert restarted.interrupted() == []
    assert SessionJournal(path, pid=444, alive=lambda pid: pid == 222).interrupted() == [
        OpenSession("sess_a", "ws_a", "/p/a", 444)
    ]


def test_a_damaged_journal_costs_only_the_offer(tmp_path: Path) -> None:
    path = tmp_path / "open-sessions.json"
    path.write_text("{not json")
    journal = SessionJournal(path, pid=1, alive=lambda pid: False)
    assert journal.interrupted() == []
    journal.add("sess_a", "ws", None)
    assert SessionJournal(path, pid=2, alive=lambda pid: False).interrupted()[0].session_id == "sess_a"
