"""The sidebar's list: project conversations by folder, general chats below, newest first, one entry
per chain of continued sessions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from desktop.conversation.sidebar import ConversationSummary, build_sidebar, summarize_history, title_of

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def summary(session: str, minutes: int, folder: str | None, *earlier: str) -> ConversationSummary:
    return ConversationSummary(
        session_id=session,
        workspace_id=f"ws_{session}",
        title=session,
        updated_at=T0 + timedelta(minutes=minutes),
        folder=folder,
        message_count=2,
        earlier_sessions=frozenset(earlier),
    )


def test_projects_by_folder_newest_first_and_general_chats_below() -> None:
    sidebar = build_sidebar(
        [
            summary("a1", 1, "/p/alpha"),
            summary("g1", 9, None),
            summary("b1", 5, "/p/beta"),
            summary("a2", 7, "/p/alpha"),
            summary("g2", 3, None),
        ]
    )
    assert [(g.folder, [c.session_id for c in g.conversations]) for g in sidebar.projects] == [
        ("/p/alpha", ["a2", "a1"]),
        ("/p/beta", ["b1"]),
    ]
    assert [c.session_id for c in sidebar.general] == ["g1", "g2"]
    assert sidebar.projects[0].name == "alpha"


def test_a_continued_conversation_shows_once_under_its_newest_session() -> None:
    sidebar = build_sidebar(
        [summary("s1", 1, None), summary("s2", 2, None, "s1"), summary("s3", 3, None, "s1", "s2")]
    )
    [only] = sidebar.general
    assert only.session_id == "s3"
    found = sidebar.find("s1")
    assert found is not None
    assert found.session_id == "s3"


def test_a_history_is_titled_by_its_first_prompt_and_knows_its_earlier_sessions() -> None:
    history = {
        "workspaceId": "ws",
        "sessionId": "s2",
        "messages": [
            {"role": "user", "sessionId": "s1", "content": "\n  Fix   the\tbuild please  \nthen more"},
            {"role": "assistant", "sessionId": "s1", "content": "ok"},
            {"role": "user", "sessionId": "s2", "content": "again"},
        ],
    }
    made = summarize_history(history, folder="/p", updated_at=T0)
    assert made.title == "Fix the build please"
    assert made.earlier_sessions == {"s1"}
    assert made.message_count == 3
    assert title_of([{"role": "user", "content": "x" * 200}]).endswith("…")
    assert len(title_of([{"role": "user", "content": "x" * 200}])) == 80
    assert title_of([]) == "Conversation"
