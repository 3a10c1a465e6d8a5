"""The Session Service's server push, its polling fallback and the remote admin stop, on a real uvicorn
server with a real WebSocket client (contracts.rest.push; issue 22 "Policy revocation and server push").

Adversarial: the push is a way into another session's news, so every wrong credential is refused the
same way — no token, a malformed or expired one, one in the URL, another tenant's or another user's.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from backend.common.auth import TokenIssuer
from backend.common.settings import Settings
from backend.policy.admin import install_policy, revoke_policy
from backend.policy.config import PolicyDirectory, builtin_policy
from backend.session.push import PushSettings
from backend.session.records import SessionRecord
from backend.storage import Stores
from backend.storage.local import open_local_stores
from backend.storage.memory import open_memory_stores
from contracts.policy import PolicyBundle
from contracts.validation import validate_json_value
from tests.backend.conftest import AppFactory
from tests.backend.helpers import PROJECT, BackendClient, ManualClock, serving, session_body

WAIT_S = 10.0
FAST = PushSettings(poll_s=0.05, record_every=1, heartbeat_s=0.5, client_poll_s=0.5)

NO_SHELL = """\
[[capabilities]]
name = "File.Read"
allowedPaths = ["${workspace}"]

[[capabilities]]
name = "LLM.Call"
"""


@pytest.fixture
def policies(tmp_path: Path) -> PolicyDirectory:
    config = tmp_path / "config"
    config.mkdir()
    return PolicyDirectory(config, builtin_policy())


@pytest.fixture
def server(make_app: AppFactory, stores: Stores, policies: PolicyDirectory) -> Iterator[str]:
    app: FastAPI = make_app(stores=stores, settings=Settings(), policies=policies, push=FAST)
    with serving(app) as url:
        yield url


@pytest.fixture
async def live(server: str, issuer: TokenIssuer) -> AsyncIterator[BackendClient]:
    async with httpx.AsyncClient(base_url=server, timeout=10) as http:
        yield BackendClient(http, issuer)


def push_url(server: str, session_id: str, query: str = "") -> str:
    return server.replace("http://", "ws://") + f"/sessions/{session_id}/push" + query


async def receive(ws: ClientConnection, *, skip_heartbeats: bool = True) -> dict[str, Any]:
    while True:
        async with asyncio.timeout(WAIT_S):
            message: dict[str, Any] = json.loads(await ws.recv())
        if not (skip_heartbeats and message["type"] == "heartbeat"):
            return message


async def closed_with(ws: ClientConnection) -> tuple[int | None, list[dict[str, Any]]]:
    """The messages until the server closed the connection, and its close code."""
    said = []
    try:
        while True:
            async with asyncio.timeout(WAIT_S):
                said.append(json.loads(await ws.recv()))
    except ConnectionClosed as exc:
        return (exc.rcvd.code if exc.rcvd is not None else None), said


async def test_a_revocation_a_new_policy_and_a_stop_reach_the_sessions_push_in_order(
    live: BackendClient, server: str, policies: PolicyDirectory, clock: ManualClock
) -> None:
    created = await live.session([PROJECT])
    session_id = created["sessionId"]
    headers = live.headers()
    async with connect(push_url(server, session_id), additional_headers=headers) as ws:
        hello = await receive(ws)
        revoke_policy(policies, "acme", "compromised laptop", now=clock.now())
        revoked = await receive(ws)
        refused = await live.call("POST", "/sessions", json=session_body([PROJECT]))
        source = policies.directory / "new.toml"  # type: ignore[operator]
        source.write_text(NO_SHELL)
        installed = install_policy(policies, "acme", source, now=clock.now())
        changed = await receive(ws)
        status = (await live.call("GET", f"/sessions/{session_id}/policy-status")).json()
        stopped = await live.call(
            "POST", f"/sessions/{session_id}/stop", json={"reason": "offboarding"}, user="root", admin=True
        )
        code, rest = await closed_with(ws)

    assert hello == {"type": "hello", "sessionId": session_id, "policyVersion": 0, "heartbeatSeconds": 0.5}
    assert revoked == {
        "type": "policy_revoked",
        "sessionId": session_id,
        "policyVersion": 1,
        "reason": "compromised laptop",
    }
    # No bundle is issued under a revoked policy: new sessions are refused too.
    assert refused.status_code == 403
    assert refused.json()["code"] == "POLICY_EXPIRED"
    assert refused.json()["details"]["reason"] == "revoked"
    # The new policy's bundle comes with the push, signed for this session, and is recorded as its own.
    assert changed["type"] == "policy_changed"
    assert changed["policyVersion"] == installed.state.version == 2
    bundle = validate_json_value(PolicyBundle, changed["policyBundle"])
    assert bundle.session_id == session_id
    assert [grant.name.value for grant in bundle.capabilities] == ["File.Read", "LLM.Call"]
    assert bundle.capabilities[0].allowed_paths == [PROJECT]
    assert status["heldPolicyVersion"] == 2
    assert status["policyChanged"] is False
    assert status["policyRevoked"] is False
    assert stopped.status_code == 200, stopped.text
    assert [m for m in rest if m["type"] != "heartbeat"] == [
        {
            "type": "session_stop",
            "sessionId": session_id,
            "reason": "Stopped by an administrator: offboarding",
        }
    ]
    assert code == 1000


async def test_heartbeats_keep_an_idle_connection_alive(live: BackendClient, server: str) -> None:
    created = await live.session([PROJECT])
    async with connect(push_url(server, created["sessionId"]), additional_headers=live.headers()) as ws:
        await receive(ws)  # hello
        beats = [await receive(ws, skip_heartbeats=False) for _ in range(2)]
    assert beats == [{"type": "heartbeat"}, {"type": "heartbeat"}]


async def test_the_token_may_come_as_the_first_message_instead_of_a_header(
    live: BackendClient, server: str
) -> None:
    created = await live.session([PROJECT])
    async with connect(push_url(server, created["sessionId"])) as ws:
        await ws.send(json.dumps({"type": "auth", "token": live.token()}))
        hello = await receive(ws)
    assert hello["type"] == "hello"


@pytest.mark.parametrize(
    ("credential", "code"),
    [
        ("none", "UNAUTHORIZED"),
        ("malformed", "UNAUTHORIZED"),
        ("expired", "UNAUTHORIZED"),
        ("in_the_url", "UNAUTHORIZED"),
        ("other_tenant", "SESSION_NOT_FOUND"),
        ("other_user", "SESSION_NOT_FOUND"),
        ("other_tenant_admin", "SESSION_NOT_FOUND"),
    ],
)
async def test_the_push_of_a_session_is_refused_to_anyone_but_its_owner(
    live: BackendClient, server: str, issuer: TokenIssuer, clock: ManualClock, credential: str, code: str
) -> None:
    session_id = (await live.session([PROJECT]))["sessionId"]
    headers: dict[str, str] = {}
    query = ""
    first: str | None = None
    if credential == "none":
        first = json.dumps({"type": "subscribe"})  # not an auth message
    elif credential == "malformed":
        headers = {"Authorization": "Bearer not.a.jwt"}
    elif credential == "expired":
        clock.advance(days=-2)
        stale = issuer.mint("acme", "alice", timedelta(hours=1))
        clock.advance(days=2)
        headers = {"Authorization": f"Bearer {stale}"}
    elif credential == "in_the_url":
        # A token in the URL is never read (URLs are logged): the connection still has to authenticate.
        query = f"?token={live.token()}&access_token={live.token()}"
        first = json.dumps({"type": "hello"})
    elif credential == "other_tenant":
        headers = live.headers(tenant="globex")
    elif credential == "other_user":
        headers = live.headers(user="mallory")
    else:
        headers = live.headers(tenant="globex", user="root", admin=True)
    async with connect(push_url(server, session_id, query), additional_headers=headers) as ws:
        if first is not None:
            await ws.send(first)
        close_code, said = await closed_with(ws)

    assert [m["type"] for m in said] == ["error"]
    assert said[0]["error"]["code"] == code
    assert close_code == (4401 if code == "UNAUTHORIZED" else 4404)
    if code == "SESSION_NOT_FOUND":
        # Someone else's session reads exactly as one that does not exist: nothing leaks.
        async with connect(push_url(server, "sess_missing"), additional_headers=headers) as ws:
            _, missing = await closed_with(ws)
        assert json.dumps(said).replace(session_id, "ID") == json.dumps(missing).replace("sess_missing", "ID")


async def test_polling_says_what_the_push_would(
    live: BackendClient, policies: PolicyDirectory, clock: ManualClock
) -> None:
    session_id = (await live.session([PROJECT]))["sessionId"]
    path = f"/sessions/{session_id}/policy-status"
    before = (await live.call("GET", path)).json()
    revoke_policy(policies, "acme", "audit", now=clock.now())
    revoked = (await live.call("GET", path)).json()
    source = policies.directory / "p.toml"  # type: ignore[operator]
    source.write_text(NO_SHELL)
    install_policy(policies, "acme", source, now=clock.now())
    changed = (await live.call("GET", path)).json()
    resumed = await live.call("POST", f"/sessions/{session_id}/resume", json={})
    fetched = (await live.call("GET", path)).json()
    elsewhere = await live.call("GET", path, tenant="globex")

    assert before["policyChanged"] is False
    assert before["policyRevoked"] is False
    assert before["stopped"] is False
    assert revoked["policyRevoked"] is True
    assert revoked["revocationReason"] == "audit"
    assert changed["policyChanged"] is True
    assert changed["policyVersion"] == 2
    assert changed["heldPolicyVersion"] == 0
    # A resume fetches the new policy and records it as the session's.
    assert resumed.status_code == 200
    assert fetched["policyChanged"] is False
    assert fetched["heldPolicyVersion"] == 2
    assert elsewhere.status_code == 404


async def test_only_an_administrator_of_the_sessions_tenant_may_stop_it(live: BackendClient) -> None:
    session_id = (await live.session([PROJECT]))["sessionId"]
    path = f"/sessions/{session_id}/stop"
    as_owner = await live.call("POST", path, json={"reason": "mine"})
    other_admin = await live.call("POST", path, json={}, tenant="globex", user="root", admin=True)
    stopped = await live.call("POST", path, json={"reason": "policy breach"}, user="root", admin=True)
    again = await live.call("POST", path, json={"reason": "twice"}, user="root", admin=True)
    resumed = await live.call("POST", f"/sessions/{session_id}/resume", json={})

    assert as_owner.status_code == 403
    assert as_owner.json()["code"] == "PERMISSION_DENIED"
    assert other_admin.status_code == 404
    assert stopped.status_code == 200
    assert stopped.json()["status"] == "SESSION_CANCELLED"
    assert stopped.json()["endReason"] == "Stopped by an administrator: policy breach"
    assert stopped.json()["resumable"] is False
    # Idempotent: the first stop's record stands.
    assert again.json()["endReason"] == "Stopped by an administrator: policy breach"
    assert resumed.status_code == 410
    assert resumed.json()["details"]["reason"] == "cancelled"


@pytest.mark.parametrize("store", ["memory", "local"])
def test_the_stores_keep_the_policy_version_and_who_stopped_a_session(tmp_path: Path, store: str) -> None:
    from datetime import UTC, datetime

    from contracts.enums import ExecutionEnvironment, SessionStatus, WorkspaceScope
    from contracts.methods import ClientInfo

    stores = open_memory_stores() if store == "memory" else open_local_stores(tmp_path / "data")
    now = datetime(2026, 3, 2, tzinfo=UTC)
    record = SessionRecord(
        session_id="sess_1",
        tenant_id="acme",
        user_id="alice",
        workspace_id="ws_1",
        workspace_scope=WorkspaceScope.GENERAL,
        workspace_paths=(),
        execution_environment=ExecutionEnvironment.DESKTOP,
        status=SessionStatus.SESSION_CANCELLED,
        client_info=validate_json_value(
            ClientInfo, {"desktopAppVersion": "1.0.0", "localAgentHostVersion": "1.0.0", "osFamily": "macOS"}
        ),
        supported_capabilities=(),
        granted_capabilities=(),
        policy_bundle_version="v1",
        created_at=now,
        updated_at=now,
        expires_at=now,
        tenant_policy_version=7,
        stopped_by="root",
        end_reason="Stopped by an administrator",
    )
    try:
        stores.sessions.create(record)
        found = stores.sessions.get("acme", "sess_1")
    finally:
        stores.close()
    assert found is not None
    assert found.tenant_policy_version == 7
    assert found.stopped_by == "root"
    # Records stored before these fields existed read as version 0, not stopped.
    legacy = {k: v for k, v in record.to_document().items() if k not in ("tenantPolicyVersion", "stoppedBy")}
    old = SessionRecord.from_document(legacy)
    assert (old.tenant_policy_version, old.stopped_by) == (0, None)
