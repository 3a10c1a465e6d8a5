"""Every endpoint, called with another tenant's token (and another user's), about records that exist:
404 with the very body a missing ID gets, or 403 where the caller names someone else — never data."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI

from tests.backend.approval.test_approvals_api import decision
from tests.backend.helpers import PROJECT, BackendClient, envelope, history_upload, upload_body

OWNER = {"tenant": "acme", "user": "alice"}
INTRUDERS = [{"tenant": "globex", "user": "alice"}, {"tenant": "acme", "user": "bob"}]


@pytest.fixture
async def owned(api: BackendClient) -> dict[str, Any]:
    """A session with an artifact, a history and an approval, all alice's at acme."""
    session = await api.session([PROJECT], **OWNER)
    ws, sess = session["workspaceId"], session["sessionId"]
    artifact = (
        await api.call("POST", f"/workspaces/{ws}/artifacts", json=upload_body(ws, sess), **OWNER)
    ).json()
    await api.call(
        "POST", f"/workspaces/{ws}/artifacts", json=history_upload(ws, sess, "2026-03-02T07:00:00Z"), **OWNER
    )
    assert (await api.call("POST", "/approvals", json=decision(sess), **OWNER)).status_code == 201
    return {"ws": ws, "sess": sess, "art": artifact["artifactId"]}


def _not_found_cases(o: dict[str, Any]) -> list[tuple[str, str, Any]]:
    ws, sess, art = o["ws"], o["sess"], o["art"]
    return [
        ("GET", f"/sessions/{sess}", None),
        ("POST", f"/sessions/{sess}/resume", {}),
        ("POST", f"/sessions/{sess}/cancel", {"reason": "hostile"}),
        ("GET", f"/sessions/{sess}/policy-status", None),
        ("GET", f"/workspaces/{ws}", None),
        ("DELETE", f"/workspaces/{ws}", None),
        ("DELETE", f"/workspaces/{ws}/sessions/{sess}", None),
        ("GET", f"/workspaces/{ws}/artifacts", None),
        ("GET", f"/workspaces/{ws}/artifacts?sessionId={sess}", None),
        ("GET", f"/workspaces/{ws}/artifacts/{art}", None),
        ("GET", f"/workspaces/{ws}/artifacts/{art}/content", None),
        ("GET", f"/workspaces/{ws}/search?query=hello", None),
        ("GET", f"/workspaces/{ws}/search?query=hello&sessionId={sess}", None),
        ("POST", f"/workspaces/{ws}/artifacts", upload_body(ws, sess)),
        (
            "POST",
            f"/workspaces/{ws}/artifacts",
            history_upload(ws, sess, "2026-03-02T08:00:00Z", "overwritten"),
        ),
        ("POST", "/approvals", decision(sess, "appr_hostile")),
        ("GET", f"/approvals?sessionId={sess}", None),
    ]


def _as_missing(o: dict[str, Any], method: str, path: str, body: Any) -> tuple[str, Any]:
    """The same request about IDs that do not exist at all."""
    swap = {o["ws"]: "ws_" + "0" * 32, o["sess"]: "sess_" + "0" * 32, o["art"]: "art_" + "0" * 32}

    def replace(value: Any) -> Any:
        if isinstance(value, str):
            for old, new in swap.items():
                value = value.replace(old, new)
            return value
        if isinstance(value, dict):
            return {k: replace(v) for k, v in value.items()}
        return value

    return replace(path), replace(body)


@pytest.mark.parametrize("intruder", INTRUDERS, ids=lambda i: f"{i['tenant']}-{i['user']}")
async def test_records_of_others_answer_exactly_like_missing_ones(
    api: BackendClient, owned: dict[str, Any], intruder: dict[str, str]
) -> None:
    for method, path, body in _not_found_cases(owned):
        response = await api.call(method, path, json=body, **intruder)
        missing_path, missing_body = _as_missing(owned, method, path, body)
        missing = await api.call(method, missing_path, json=missing_body, **intruder)
        assert response.status_code == 404, (method, path, response.text)
        _, expected = _as_missing(owned, method, path, missing.json())
        assert _as_missing(owned, method, path, response.json())[1] == expected, (method, path)


@pytest.mark.parametrize("intruder", INTRUDERS, ids=lambda i: f"{i['tenant']}-{i['user']}")
async def test_nothing_of_others_is_listed_or_changed(
    api: BackendClient, owned: dict[str, Any], intruder: dict[str, str]
) -> None:
    for method, path, body in _not_found_cases(owned):
        await api.call(method, path, json=body, **intruder)
    listed = await api.call("GET", f"/sessions?workspaceId={owned['ws']}", **intruder)
    assert listed.json() == {"sessions": []}
    assert (await api.call("GET", "/workspaces", **intruder)).json() == {"workspaces": []}
    # Alice's records are as she left them: not cancelled, deleted or overwritten.
    session = (await api.call("GET", f"/sessions/{owned['sess']}", **OWNER)).json()
    assert session["status"] == "SESSION_CREATED"
    artifacts = (await api.call("GET", f"/workspaces/{owned['ws']}/artifacts", **OWNER)).json()["artifacts"]
    assert len(artifacts) == 2
    history = next(a for a in artifacts if a["artifactType"] == "session_history")
    assert history["snapshotAt"] == "2026-03-02T07:00:00Z"
    approvals = (await api.call("GET", f"/approvals?sessionId={owned['sess']}", **OWNER)).json()["approvals"]
    assert [a["approvalId"] for a in approvals] == ["appr_001"]


@pytest.mark.parametrize("intruder", INTRUDERS, ids=lambda i: f"{i['tenant']}-{i['user']}")
async def test_events_naming_another_tenant_or_user_are_forbidden(
    api: BackendClient, owned: dict[str, Any], intruder: dict[str, str]
) -> None:
    for path in ("/audit/events", "/telemetry/events"):
        response = await api.call(
            "POST", path, json=envelope("acme", "alice", owned["ws"], owned["sess"]), **intruder
        )
        assert response.status_code == 403


async def test_an_administrator_reads_and_verifies_only_their_own_tenants_audit_log(
    api: BackendClient, owned: dict[str, Any]
) -> None:
    await api.call(
        "POST", "/audit/events", json=envelope("acme", "alice", owned["ws"], owned["sess"]), **OWNER
    )
    await api.call(
        "POST", "/audit/events", json=envelope("globex", "mallory"), tenant="globex", user="mallory"
    )
    theirs = {"tenant": "globex", "user": "mallory", "admin": True}
    for query in (
        "",
        f"?workspaceId={owned['ws']}",
        f"?sessionId={owned['sess']}",
        "?userId=alice",
        "?eventType=tool_completed&order=asc",
    ):
        page = (await api.call("GET", f"/audit/events{query}", **theirs)).json()
        assert {event["event"]["tenantId"] for event in page["events"]} <= {"globex"}, query
        assert all(owned["sess"] not in str(event) for event in page["events"]), query
    verified = (await api.call("GET", "/audit/verify", **theirs)).json()
    assert (verified["tenantId"], verified["checked"]) == ("globex", 1)
    # A cursor names a position, never a tenant: acme's cursor read with globex's token stays at globex.
    acme_page = (await api.call("GET", "/audit/events?limit=1&order=asc", **{**OWNER, "admin": True})).json()
    followed = await api.call("GET", f"/audit/events?order=asc&cursor={acme_page['nextCursor']}", **theirs)
    assert all(event["event"]["tenantId"] == "globex" for event in followed.json()["events"])


async def test_a_bundle_is_only_ever_for_the_callers_own_tenant(
    api: BackendClient, owned: dict[str, Any]
) -> None:
    response = await api.call(
        "POST",
        "/policy/bundles",
        json={"sessionId": owned["sess"], "workspacePaths": [PROJECT]},
        tenant="globex",
    )
    bundle = response.json()["policyBundle"]
    assert (bundle["tenantId"], bundle["userId"]) == ("globex", "alice")


async def test_resolving_someone_elses_project_path_gives_the_callers_own_workspace(
    api: BackendClient, owned: dict[str, Any]
) -> None:
    for intruder in INTRUDERS:
        body = {"workspaceScope": "local", "localPaths": [PROJECT]}
        mine = (await api.call("POST", "/workspaces", json=body, **intruder)).json()
        assert mine["workspaceId"] != owned["ws"]


@pytest.mark.parametrize("intruder", INTRUDERS, ids=lambda i: f"{i['tenant']}-{i['user']}")
async def test_deleting_someone_elses_conversation_from_ones_own_workspace_deletes_nothing(
    api: BackendClient, owned: dict[str, Any], intruder: dict[str, str]
) -> None:
    # The intruder's own workspace for the same project, naming alice's session: the session is not
    # theirs, so it is missing, exactly like a session that never existed.
    body = {"workspaceScope": "local", "localPaths": [PROJECT]}
    theirs = (await api.call("POST", "/workspaces", json=body, **intruder)).json()["workspaceId"]
    response = await api.call("DELETE", f"/workspaces/{theirs}/sessions/{owned['sess']}", **intruder)
    missing = await api.call("DELETE", f"/workspaces/{theirs}/sessions/sess_{'0' * 32}", **intruder)
    assert response.status_code == 404, response.text
    assert _as_missing(owned, "DELETE", "", response.json())[1] == missing.json()
    artifacts = (await api.call("GET", f"/workspaces/{owned['ws']}/artifacts", **OWNER)).json()["artifacts"]
    assert len(artifacts) == 2


def test_every_route_is_covered_by_these_tests(app: FastAPI) -> None:
    covered = {
        ("GET", "/sessions/{session_id}"),
        ("POST", "/sessions/{session_id}/resume"),
        ("POST", "/sessions/{session_id}/cancel"),
        ("GET", "/sessions"),
        ("POST", "/sessions"),
        ("GET", "/workspaces/{workspace_id}"),
        ("DELETE", "/workspaces/{workspace_id}"),
        ("DELETE", "/workspaces/{workspace_id}/sessions/{session_id}"),
        ("GET", "/workspaces"),
        ("POST", "/workspaces"),
        ("GET", "/workspaces/{workspace_id}/artifacts"),
        ("POST", "/workspaces/{workspace_id}/artifacts"),
        ("GET", "/workspaces/{workspace_id}/artifacts/{artifact_id}"),
        ("GET", "/workspaces/{workspace_id}/artifacts/{artifact_id}/content"),
        ("POST", "/approvals"),
        ("GET", "/approvals"),
        ("POST", "/audit/events"),
        ("GET", "/audit/events"),
        ("GET", "/audit/verify"),
        ("POST", "/telemetry/events"),
        ("POST", "/policy/bundles"),
        ("GET", "/policy/keys"),
        ("GET", "/workspaces/{workspace_id}/search"),
        # The Backend Tool Service's: a tenant's own tools; another tenant's or user's session is
        # SESSION_NOT_FOUND (tests/backend/tools/test_tools_api.py, with a policy granting the tools).
        ("GET", "/tools"),
        ("POST", "/tools/{tool_name}/invoke"),
        ("GET", "/sessions/{session_id}/policy-status"),
        # Remote admin stop: refused to anyone without the admin scope, and another tenant's
        # administrator gets SESSION_NOT_FOUND (tests/backend/session/test_push.py).
        ("POST", "/sessions/{session_id}/stop"),
    }
    routes = {(method.upper(), path) for path, item in app.openapi()["paths"].items() for method in item}
    assert routes == covered
