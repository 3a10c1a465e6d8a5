"""The sidebar's search: filter as you type across titles and message text, every word must match,
case-insensitively; a renamed conversation shows (and is found by) its new name."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from desktop.conversation.sidebar import build_sidebar, filter_sidebar, summarize_history

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def history(session: str, *turns: tuple[str, str]) -> dict[str, object]:
    return {
        "sessionId": session,
        "workspaceId": f"ws_{session}",
        "messages": [{"sessionId": session, "role": role, "content": text} for role, text in turns],
    }


SUMMARIES = [
    summarize_history(
        history("a", ("user", "Fix the build"), ("assistant", "The Zebra linker was misconfigured.")),
        folder="/p/alpha",
        updated_at=T0,
    ),
    summarize_history(
        history("b", ("user", "Plan a trip"), ("assistant", "Lisbon in May?")), folder=None, updated_at=T0
    ),
    summarize_history(
        history("c", ("user", "Write release notes"), ("tool", "zebra appears only in tool output")),
        folder=None,
        updated_at=T0 + timedelta(minutes=1),
    ),
]


def ids(sidebar: object) -> list[str]:
    return [summary.session_id for summary in sidebar.all()]  # type: ignore[attr-defined]


def test_the_search_finds_titles_and_replies_case_insensitively() -> None:
    sidebar = build_sidebar(SUMMARIES)
    assert ids(filter_sidebar(sidebar, "zebra")) == ["a"], "tool output is not searched"
    assert ids(filter_sidebar(sidebar, "PLAN")) == ["b"]
    assert ids(filter_sidebar(sidebar, "lisbon trip")) == ["b"], "words may come from title and text"
    assert ids(filter_sidebar(sidebar, "lisbon build")) == []
    assert ids(filter_sidebar(sidebar, "  ")) == ids(sidebar)


def test_the_filtered_list_keeps_its_groups() -> None:
    shown = filter_sidebar(build_sidebar(SUMMARIES), "fix")
    assert [(g.folder, [c.session_id for c in g.conversations]) for g in shown.projects] == [
        ("/p/alpha", ["a"])
    ]
    assert shown.general == []


def test_a_renamed_conversation_is_shown_and_found_by_its_new_name() -> None:
    names = {"b": "Holiday 2026"}

    def title_of(sessions: object) -> str | None:
        return next((names[s] for s in sessions if s in names), None)  # type: ignore[attr-defined]

    sidebar = build_sidebar(SUMMARIES, title_of)
    renamed = sidebar.find("b")
    assert renamed is not None
    assert (renamed.title, renamed.renamed) == ("Holiday 2026", True)
    assert ids(filter_sidebar(sidebar, "holiday")) == ["b"]
    assert ids(filter_sidebar(sidebar, "lisbon")) == ["b"], "its messages are still searched"
