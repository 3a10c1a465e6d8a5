"""HistoryClient against the real local backend: the sidebar's conversations from the stored
``session_history`` artifacts, one history read back, and failures said plainly."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from desktop.conversation.history_client import BackendUnavailable, HistoryClient
from desktop.conversation.sidebar import build_sidebar
from tests.support.backend import Backend


async def session(backend: Backend, folder: Path | None) -> tuple[str, str]:
    """A session as the runtime creates it: ``(workspaceId, sessionId)``."""
    body: dict[str, Any] = {
        "clientInfo": {"desktopAppVersion": "0.1.0", "localAgentHostVersion": "0.1.0", "osFamily": "Linux"},
        "supportedCapabilities": ["File.Read"],
    }
    if folder is not None:
        folder.mkdir(exist_ok=True)
        body["workspaceHint"] = {"localPaths": [str(folder)]}
    async with backend.http() as http:
        response = await http.post("/sessions", json=body)
    assert response.status_code in (200, 201), response.text
    created = response.json()
    return str(created["workspaceId"]), str(created["sessionId"])


async def store_history(
    backend: Backend, workspace_id: str, session_id: str, turns: list[tuple[str, str, str]], at: str
) -> None:
    """Upload a session_history of ``(sessionId, role, content)`` messages, as the runtime does."""
    history = {
        "workspaceId": workspace_id,
        "sessionId": session_id,
        "snapshotAfterTaskId": "task_1",
        "snapshotAt": at,
        "messages": [
            {
                "messageId": f"m{i}",
                "sessionId": sid,
                "taskId": "task_1",
                "role": role,
                "content": text,
                "timestamp": at,
            }
            for i, (sid, role, text) in enumerate(turns)
        ],
    }
    upload = {
        "workspaceId": workspace_id,
        "sessionId": session_id,
        "artifactType": "session_history",
        "artifactName": "session_history.json",
        "contentType": "application/json",
        "contentBase64": base64.b64encode(json.dumps(history).encode()).decode(),
    }
    async with backend.http() as http:
        response = await http.post(f"/workspaces/{workspace_id}/artifacts", json=upload)
    assert response.status_code in (200, 201), response.text


async def test_the_sidebar_lists_stored_conversations_with_titles_folders_and_chains(
    backend: Backend, tmp_path: Path
) -> None:
    project, p1 = await session(backend, tmp_path / "alpha")
    chat, g1 = await session(backend, None)
    later_chat, g2 = await session(backend, None)
    await store_history(
        backend,
        project,
        p1,
        [(p1, "user", "Fix the build"), (p1, "assistant", "Fixed.")],
        "2026-01-01T10:00:00Z",
    )
    await store_history(backend, chat, g1, [(g1, "user", "Plan a trip")], "2026-01-01T09:00:00Z")
    await store_history(
        backend,
        later_chat,
        g2,
        [(g1, "user", "Plan a trip"), (g1, "assistant", "Where to?"), (g2, "user", "Lisbon")],
        "2026-01-01T11:00:00Z",
    )
    client = HistoryClient(backend.url, backend.token)
    try:
        sidebar = build_sidebar(await client.conversations())
        again = build_sidebar(await client.conversations())  # served from the summaries it kept
        history = await client.history(project, p1)
        missing = await client.history(project, "sess_nothing")
    finally:
        await client.aclose()
    [group] = sidebar.projects
    assert group.folder == str(tmp_path / "alpha")
    assert [c.title for c in group.conversations] == ["Fix the build"]
    assert [(c.session_id, c.title) for c in sidebar.general] == [(g2, "Plan a trip")]
    assert again == sidebar
    assert history is not None
    assert [m.content for m in history.messages] == ["Fix the build", "Fixed."]
    assert missing is None


async def test_an_unreachable_backend_or_a_refusal_is_a_clear_error(backend: Backend) -> None:
    async def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"code": "UNAUTHORIZED", "message": "The token has expired."})

    refusing = HistoryClient("http://127.0.0.1:9", "t", transport=httpx.MockTransport(refuse))
    with pytest.raises(BackendUnavailable, match="The token has expired"):
        await refusing.conversations()
    await refusing.aclose()
    gone = HistoryClient("http://127.0.0.1:9", "t", timeout=2)
    with pytest.raises(BackendUnavailable, match="cannot be reached"):
        await gone.conversations()
    await gone.aclose()
