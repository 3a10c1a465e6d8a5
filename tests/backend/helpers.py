"""What the backend tests share: a clock tests can move, request bodies, a client that speaks as any
tenant, and a real uvicorn server on 127.0.0.1 in a thread."""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI

from backend.apps import Backend
from backend.common.auth import TokenIssuer

ALL_CAPABILITIES = [
    "File.Read",
    "File.Write",
    "File.Delete",
    "Shell.Exec",
    "Network.Http",
    "Workspace.Upload",
    "BackendTool.Invoke",
    "LLM.Call",
]
PROJECT = "/home/alice/projects/demo"


class ManualClock:
    """A clock that stands still until a test moves it."""

    def __init__(self, start: datetime = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)) -> None:
        self.moment = start

    def now(self) -> datetime:
        return self.moment

    def advance(self, **delta: float) -> None:
        self.moment += timedelta(**delta)


def client_info(host: str = "1.0.0", desktop: str = "1.0.0") -> dict[str, str]:
    return {"desktopAppVersion": desktop, "localAgentHostVersion": host, "osFamily": "macOS"}


def session_body(
    paths: list[str] | None = None, capabilities: list[str] | None = None, **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "clientInfo": client_info(),
        "supportedCapabilities": ALL_CAPABILITIES if capabilities is None else capabilities,
        **extra,
    }
    if paths is not None:
        body["workspaceHint"] = {"localPaths": paths}
    return body


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def upload_body(
    workspace_id: str,
    session_id: str,
    content: bytes = b"hello, artifact",
    *,
    artifact_type: str = "tool_output",
    name: str = "output.txt",
    task_id: str | None = "task_001",
    step_id: str | None = "step_001",
    content_type: str = "text/plain",
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "workspaceId": workspace_id,
        "sessionId": session_id,
        "artifactType": artifact_type,
        "artifactName": name,
        "contentType": content_type,
        "contentBase64": b64(content),
    }
    if task_id is not None:
        body["taskId"] = task_id
    if step_id is not None:
        body["stepId"] = step_id
    return body


def history(
    workspace_id: str, session_id: str, snapshot_at: str, text: str = "hello", task: str = "task_001"
) -> bytes:
    """A valid session_history document (seed 004)."""
    return json.dumps(
        {
            "workspaceId": workspace_id,
            "sessionId": session_id,
            "snapshotAfterTaskId": task,
            "snapshotAt": snapshot_at,
            "messages": [
                {
                    "messageId": "msg_001",
                    "sessionId": session_id,
                    "taskId": task,
                    "role": "user",
                    "content": text,
                    "timestamp": snapshot_at,
                }
            ],
        }
    ).encode()


def history_upload(
    workspace_id: str, session_id: str, snapshot_at: str, text: str = "hello"
) -> dict[str, Any]:
    return upload_body(
        workspace_id,
        session_id,
        history(workspace_id, session_id, snapshot_at, text),
        artifact_type="session_history",
        name="session_history.json",
        task_id=None,
        step_id=None,
        content_type="application/json",
    )


def envelope(
    tenant: str, user: str, workspace_id: str = "ws_1", session_id: str = "sess_1", **extra: Any
) -> dict[str, Any]:
    """An audit/telemetry event envelope (seed 001 §6.3)."""
    return {
        "eventId": extra.pop("eventId", f"evt_{uuid.uuid4().hex}"),
        "eventType": "tool_completed",
        "timestamp": "2026-03-02T09:00:00Z",
        "tenantId": tenant,
        "userId": user,
        "workspaceId": workspace_id,
        "sessionId": session_id,
        "taskId": "task_001",
        "component": "LocalAgentHost",
        "boundedContext": "AgentExecution",
        "severity": "info",
        "payload": {"toolName": "RunCommand", "status": "succeeded", "latencyMs": 12},
        **extra,
    }


class BackendClient:
    """An httpx client that signs in as whichever tenant and user a call names."""

    def __init__(self, http: httpx.AsyncClient, issuer: TokenIssuer, app: FastAPI | None = None) -> None:
        self.http = http
        self._issuer = issuer
        self._tokens: dict[tuple[str, str, bool], str] = {}
        self._app = app

    @property
    def backend(self) -> Backend:
        """The service objects behind the app, to look at what a request stored."""
        assert self._app is not None
        backend: Backend = self._app.state.backend
        return backend

    def token(self, tenant: str = "acme", user: str = "alice", *, admin: bool = False) -> str:
        """A token of ``user`` at ``tenant``; ``admin``: with the tenant administrators' scope."""
        key = (tenant, user, admin)
        if key not in self._tokens:
            scopes = ["admin"] if admin else []
            self._tokens[key] = self._issuer.mint(tenant, user, timedelta(days=365), scopes=scopes)
        return self._tokens[key]

    def headers(self, tenant: str = "acme", user: str = "alice", *, admin: bool = False) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token(tenant, user, admin=admin)}"}

    async def call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        tenant: str = "acme",
        user: str = "alice",
        admin: bool = False,
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        merged = {**self.headers(tenant, user, admin=admin), **(headers or {})}
        return await self.http.request(method, path, json=json, headers=merged, **kwargs)

    async def session(
        self, paths: list[str] | None = None, *, tenant: str = "acme", user: str = "alice"
    ) -> dict[str, Any]:
        """A new session (201), as the JSON the Session Service answered."""
        response = await self.call("POST", "/sessions", json=session_body(paths), tenant=tenant, user=user)
        assert response.status_code == 201, response.text
        created: dict[str, Any] = response.json()
        return created


def listening_socket() -> socket.socket:
    """A socket on a free port of 127.0.0.1, to know a server's URL before its app exists."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    return sock


def url_of(sock: socket.socket) -> str:
    return f"http://127.0.0.1:{sock.getsockname()[1]}"


@contextlib.contextmanager
def serving(app: FastAPI, sock: socket.socket | None = None) -> Iterator[str]:
    """``app`` on a real uvicorn server on 127.0.0.1 (a free port) in a thread; yields its base URL."""
    sock = sock or listening_socket()
    started = threading.Event()

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            started.set()

    config = uvicorn.Config(
        app,
        lifespan="off",
        log_config=None,
        access_log=False,
        loop="uvloop",
        http="httptools",
        timeout_keep_alive=60,
    )
    server = Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        if not started.wait(15):
            raise RuntimeError("the test server did not start")
        yield url_of(sock)
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()
