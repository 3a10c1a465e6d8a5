"""Deleting a conversation: ``DELETE /workspaces/{id}/sessions/{sessionId}`` removes the session's
history and artifacts (and their search hits), leaves other sessions alone, and is the caller's own."""

from __future__ import annotations

from typing import Any

from tests.backend.helpers import PROJECT, BackendClient, history_upload, upload_body


def _conversation(session: dict[str, Any]) -> str:
    return f"/workspaces/{session['workspaceId']}/sessions/{session['sessionId']}"


async def _store(api: BackendClient, session: dict[str, Any], text: str, user: str = "alice") -> None:
    workspace, session_id = session["workspaceId"], session["sessionId"]
    for body in (
        history_upload(workspace, session_id, "2026-03-02T09:00:00Z", text),
        upload_body(workspace, session_id, f"log of {text}".encode(), name="build.log"),
    ):
        response = await api.call("POST", f"/workspaces/{workspace}/artifacts", json=body, user=user)
        assert response.status_code == 201, response.text


async def _artifacts(api: BackendClient, workspace_id: str, **filters: str) -> list[dict[str, Any]]:
    response = await api.call("GET", f"/workspaces/{workspace_id}/artifacts", params=filters)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["artifacts"]
    return found


async def test_deleting_a_conversation_removes_its_history_artifacts_and_search_hits(
    api: BackendClient,
) -> None:
    doomed = await api.session([PROJECT])
    kept = await api.session([PROJECT])
    assert doomed["workspaceId"] == kept["workspaceId"]
    workspace = doomed["workspaceId"]
    await _store(api, doomed, "zebra crossing plans")
    await _store(api, kept, "giraffe feeding schedule")
    stored = await _artifacts(api, workspace, sessionId=doomed["sessionId"])
    assert len(stored) == 2

    response = await api.call("DELETE", _conversation(doomed))

    assert response.status_code == 204
    assert await _artifacts(api, workspace, sessionId=doomed["sessionId"]) == []
    assert len(await _artifacts(api, workspace, sessionId=kept["sessionId"])) == 2
    for artifact in stored:
        gone = await api.call("GET", f"/workspaces/{workspace}/artifacts/{artifact['artifactId']}/content")
        assert gone.status_code == 404
    search = f"/workspaces/{workspace}/search"
    assert (await api.call("GET", search, params={"query": "zebra"})).json()["results"] == []
    assert (await api.call("GET", search, params={"query": "giraffe"})).json()["results"] != []


async def test_another_users_conversation_is_not_found_and_stays(api: BackendClient) -> None:
    theirs = await api.session([PROJECT], user="bob")
    await _store(api, theirs, "bob's secret plans", user="bob")

    mine = await api.call("DELETE", _conversation(theirs), user="alice")
    other_tenant = await api.call("DELETE", _conversation(theirs), tenant="globex", user="bob")

    assert (mine.status_code, other_tenant.status_code) == (404, 404)
    left = await api.call("GET", f"/workspaces/{theirs['workspaceId']}/artifacts", user="bob")
    assert len(left.json()["artifacts"]) == 2


async def test_an_unknown_session_is_not_found(api: BackendClient) -> None:
    session = await api.session([PROJECT])
    response = await api.call("DELETE", f"/workspaces/{session['workspaceId']}/sessions/sess_unknown")
    assert response.status_code == 404
    assert response.json()["code"] == "SESSION_NOT_FOUND"


async def test_a_session_with_nothing_stored_yet_deletes_to_nothing(api: BackendClient) -> None:
    session = await api.session([PROJECT])
    assert (await api.call("DELETE", _conversation(session))).status_code == 204
