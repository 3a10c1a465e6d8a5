"""Deleting a conversation through HistoryClient against the real local backend: its history goes
from every workspace its chain of sessions ran in, other conversations stay."""

from __future__ import annotations

from pathlib import Path

from desktop.conversation.history_client import HistoryClient
from desktop.conversation.sidebar import build_sidebar
from tests.desktop.conversation.test_history_client import session, store_history
from tests.support.backend import Backend


async def test_deleting_a_continued_conversation_removes_every_session_of_it(
    backend: Backend, tmp_path: Path
) -> None:
    first_ws, first = await session(backend, None)
    later_ws, later = await session(backend, None)
    kept_ws, kept = await session(backend, tmp_path / "kept")
    await store_history(backend, first_ws, first, [(first, "user", "Plan a trip")], "2026-01-01T09:00:00Z")
    await store_history(
        backend,
        later_ws,
        later,
        [(first, "user", "Plan a trip"), (later, "user", "Lisbon")],
        "2026-01-01T10:00:00Z",
    )
    await store_history(backend, kept_ws, kept, [(kept, "user", "Keep me")], "2026-01-01T11:00:00Z")
    client = HistoryClient(backend.url, backend.token)
    try:
        before = build_sidebar(await client.conversations())
        doomed = before.find(later)
        assert doomed is not None
        assert doomed.chain == {first, later}
        await client.delete_conversation(doomed)
        after = build_sidebar(await client.conversations())
        assert await client.history(first_ws, first) is None
        assert await client.history(later_ws, later) is None
        await client.delete_conversation(doomed)  # already gone: nothing to complain about
    finally:
        await client.aclose()
    titles = [c.title for c in after.all()]
    assert "Plan a trip" not in titles
    assert "Keep me" in titles
