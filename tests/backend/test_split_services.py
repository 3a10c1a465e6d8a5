"""Services apart (seed 001 §11: backend services talk over HTTP only): the Session Service alone on one
server, the others on another, each reaching the other over real HTTP with the caller's own token."""

from __future__ import annotations

import httpx

from backend.common.auth import TokenIssuer
from backend.storage.memory import open_memory_stores
from contracts.errors import ErrorCode
from tests.backend.approval.test_approvals_api import decision
from tests.backend.conftest import AppFactory
from tests.backend.helpers import PROJECT, BackendClient, listening_socket, serving, upload_body, url_of


async def test_a_session_service_alone_works_with_the_others_over_http(
    make_app: AppFactory, issuer: TokenIssuer
) -> None:
    session_socket, others_socket = listening_socket(), listening_socket()
    session_app = make_app(stores=open_memory_stores(), services=["session"], peers_url=url_of(others_socket))
    others = ["policy", "workspace", "approval", "audit", "telemetry"]
    others_app = make_app(stores=open_memory_stores(), services=others, peers_url=url_of(session_socket))
    with (
        serving(session_app, session_socket) as sessions_url,
        serving(others_app, others_socket) as others_url,
    ):
        async with (
            httpx.AsyncClient(base_url=sessions_url, timeout=30) as sessions_http,
            httpx.AsyncClient(base_url=others_url, timeout=30) as others_http,
        ):
            sessions, rest = BackendClient(sessions_http, issuer), BackendClient(others_http, issuer)
            created = await sessions.session([PROJECT])
            ws, sess = created["workspaceId"], created["sessionId"]
            assert created["policyBundle"]["capabilities"][0]["allowedPaths"] == [PROJECT]
            assert (await rest.call("GET", f"/workspaces/{ws}")).json()["localPaths"] == [PROJECT]
            uploaded = await rest.call("POST", f"/workspaces/{ws}/artifacts", json=upload_body(ws, sess))
            assert uploaded.status_code == 201
            assert (await rest.call("POST", "/approvals", json=decision(sess))).status_code == 201

            # Another tenant's token travels with the call, so the remote check still says "not yours".
            foreign = await rest.call("POST", "/approvals", json=decision(sess, "appr_x"), tenant="globex")
            assert (foreign.status_code, foreign.json()["code"]) == (404, ErrorCode.SESSION_NOT_FOUND)
            # Routes of services not served here are simply not there.
            assert (await sessions.call("GET", "/workspaces")).status_code == 404


async def test_an_unreachable_peer_is_a_retryable_error(make_app: AppFactory, issuer: TokenIssuer) -> None:
    nobody = listening_socket()
    peers_url = url_of(nobody)
    nobody.close()
    app = make_app(services=["session"], peers_url=peers_url)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b") as http:
        api = BackendClient(http, issuer)
        response = await api.call(
            "POST",
            "/sessions",
            json={
                "clientInfo": {
                    "desktopAppVersion": "1.0",
                    "localAgentHostVersion": "1.0",
                    "osFamily": "Linux",
                },
                "supportedCapabilities": [],
            },
        )
    assert response.status_code == 503
    assert (response.json()["code"], response.json()["retryable"]) == (ErrorCode.INTERNAL_ERROR, True)
