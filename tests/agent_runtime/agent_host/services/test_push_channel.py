"""The runtime's end of the server push (:mod:`agent_runtime.agent_host.services.push`) against a real
WebSocket server on loopback (the ``websockets`` library's) that misbehaves on request: it drops the
connection, falls silent, refuses the token, or serves no WebSocket at all — then the channel polls
``GET /sessions/{id}/policy-status``, which the same server answers over plain HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from agent_runtime.agent_host.llm.config import RetrySettings
from agent_runtime.agent_host.services import BackendClient, BackendConfig
from agent_runtime.agent_host.services.push import PushChannel, PushEvent, PushMode, PushSettings
from contracts.rest.push import PolicyChanged, PolicyRevoked, SessionStop

SESSION = "sess_1"
TOKEN = "token-abc.def"
FAST = PushSettings(
    poll_s=0.05,
    websocket_retry_s=0.3,
    open_timeout_s=2.0,
    heartbeat_margin_s=0.1,
    backoff=RetrySettings(0, 0.01, 0.02),
)


def hello(heartbeat: float = 30.0) -> str:
    return json.dumps(
        {"type": "hello", "sessionId": SESSION, "policyVersion": 1, "heartbeatSeconds": heartbeat}
    )


@dataclass
class Server:
    """Each WebSocket connection plays the next entry of ``plays``; ``websocket`` False answers upgrades
    404; ``status`` is what ``policy-status`` answers."""

    plays: list[Callable[[ServerConnection], Any]] = field(default_factory=list)
    websocket: bool = True
    status: dict[str, Any] = field(default_factory=dict)
    connections: int = 0
    authorizations: list[str | None] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    polls: int = 0
    url: str = ""

    def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        self.paths.append(request.path)
        if request.path.endswith("/policy-status"):
            self.polls += 1
            body = json.dumps(self.status).encode()
            headers = Headers([("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return Response(200, "OK", headers, body)
        self.authorizations.append(request.headers.get("Authorization"))
        if not self.websocket:
            return connection.respond(HTTPStatus.NOT_FOUND, "no WebSockets here\n")
        return None

    async def handler(self, connection: ServerConnection) -> None:
        self.connections += 1
        play = self.plays[min(self.connections, len(self.plays)) - 1]
        await play(connection)


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    state = Server()
    async with serve(state.handler, "127.0.0.1", 0, process_request=state.process_request) as running:
        port = running.sockets[0].getsockname()[1]
        state.url = f"http://127.0.0.1:{port}"
        yield state


async def run_channel(
    server: Server,
    until: Callable[[list[PushEvent]], bool],
    *,
    settings: PushSettings = FAST,
    wait: float = 10,
) -> tuple[list[PushEvent], PushChannel]:
    config = BackendConfig(url=server.url, token=TOKEN)
    got: list[PushEvent] = []
    changed = asyncio.Event()

    async def deliver(event: PushEvent) -> None:
        got.append(event)
        changed.set()

    async with BackendClient(config, retries=0) as client:
        channel = PushChannel(config, client, SESSION, deliver, settings=settings, random=lambda: 1.0)
        channel.start()
        try:
            async with asyncio.timeout(wait):
                while not until(got):
                    changed.clear()
                    # Woken by each delivery, and now and then for conditions about the server.
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(0.05):
                            await changed.wait()
        finally:
            await channel.aclose()
    return got, channel


def revoked(reason: str = "leak") -> str:
    return json.dumps({"type": "policy_revoked", "sessionId": SESSION, "policyVersion": 2, "reason": reason})


async def test_a_dropped_connection_is_opened_again_and_its_news_delivered(server: Server) -> None:
    async def drop(connection: ServerConnection) -> None:
        await connection.send(hello())
        await connection.close(1011, "server restarting")

    async def tell(connection: ServerConnection) -> None:
        await connection.send(hello())
        await connection.send(revoked())
        await connection.wait_closed()

    server.plays = [drop, tell]
    got, channel = await run_channel(server, lambda got: len(got) == 1)

    assert got == [PolicyRevoked(session_id=SESSION, policy_version=2, reason="leak")]
    assert server.connections == 2
    assert channel.transport == "websocket"
    # The token travels in the header, never in the URL.
    assert server.authorizations == [f"Bearer {TOKEN}", f"Bearer {TOKEN}"]
    assert all(TOKEN not in path for path in server.paths)
    assert server.paths[0] == f"/sessions/{SESSION}/push"


async def test_a_silent_connection_is_taken_for_dead_and_opened_again(server: Server) -> None:
    async def silent(connection: ServerConnection) -> None:
        await connection.send(hello(heartbeat=0.05))
        await connection.wait_closed()  # says nothing more; the client hangs up

    async def stop(connection: ServerConnection) -> None:
        await connection.send(hello())
        await connection.send(json.dumps({"type": "session_stop", "sessionId": SESSION, "reason": "bye"}))
        await connection.close(1000)

    server.plays = [silent, stop]
    got, _ = await run_channel(server, lambda got: len(got) == 1)
    assert got == [SessionStop(session_id=SESSION, reason="bye")]
    assert server.connections == 2


async def test_a_refused_token_ends_the_channel_without_retrying(server: Server) -> None:
    async def refuse(connection: ServerConnection) -> None:
        error = {"code": "UNAUTHORIZED", "message": "no", "retryable": False, "details": {}}
        await connection.send(json.dumps({"type": "error", "error": error}))
        await connection.close(4401)

    server.plays = [refuse]
    config = BackendConfig(url=server.url, token=TOKEN)

    async def deliver(event: PushEvent) -> None:
        raise AssertionError("nothing to deliver")

    async with BackendClient(config, retries=0) as client:
        channel = PushChannel(config, client, SESSION, deliver, settings=FAST)
        channel.start()
        assert channel._task is not None
        async with asyncio.timeout(5):
            await channel._task  # it ends by itself
    assert server.connections == 1
    assert server.polls == 0


async def test_without_websockets_it_polls_and_delivers_each_change_once(server: Server) -> None:
    server.websocket = False
    server.status = {
        "sessionId": SESSION,
        "sessionStatus": "SESSION_RUNNING",
        "policyVersion": 3,
        "heldPolicyVersion": 2,
        "policyChanged": True,
        "policyRevoked": False,
        "stopped": False,
        "pollSeconds": 0.05,
    }

    def after_polls(count: int) -> Callable[[list[PushEvent]], bool]:
        return lambda got: server.polls >= count

    got, channel = await run_channel(server, after_polls(4))
    # A changed policy is announced once, without a bundle: the session fetches it (a resume).
    assert got == [PolicyChanged(session_id=SESSION, policy_version=3)]
    assert channel.transport == "poll"

    server.status.update(
        {"policyChanged": False, "policyRevoked": True, "revocationReason": "audit", "policyVersion": 4}
    )
    got, _ = await run_channel(server, lambda got: len(got) == 1)
    assert got == [PolicyRevoked(session_id=SESSION, policy_version=4, reason="audit")]


async def test_the_mode_poll_never_opens_a_websocket_and_off_does_nothing(server: Server) -> None:
    server.status = {
        "sessionId": SESSION,
        "sessionStatus": "SESSION_CANCELLED",
        "policyVersion": 0,
        "heldPolicyVersion": 0,
        "policyChanged": False,
        "policyRevoked": False,
        "stopped": True,
        "stopReason": "Stopped by an administrator",
        "pollSeconds": 0.05,
    }
    poll = PushSettings(mode=PushMode.POLL, poll_s=0.05)
    got, _ = await run_channel(server, lambda got: len(got) == 1, settings=poll)
    assert got == [SessionStop(session_id=SESSION, reason="Stopped by an administrator")]
    assert server.connections == 0

    config = BackendConfig(url=server.url, token=TOKEN)
    async with BackendClient(config) as client:
        off = PushChannel(
            config, client, SESSION, lambda event: asyncio.sleep(0), settings=PushSettings(mode=PushMode.OFF)
        )
        off.start()
        assert off._task is None


def test_the_settings_come_from_the_environment() -> None:
    assert PushSettings.from_environment({}).mode is PushMode.AUTO
    chosen = PushSettings.from_environment({"COWORK_PUSH": "POLL", "COWORK_PUSH_POLL_S": "2.5"})
    assert (chosen.mode, chosen.poll_s) == (PushMode.POLL, 2.5)
    # A value that cannot be used is not a reason to fail the session: the default is taken.
    wrong = PushSettings.from_environment({"COWORK_PUSH": "sometimes", "COWORK_PUSH_POLL_S": "nan"})
    assert (wrong.mode, wrong.poll_s) == (PushMode.AUTO, None)
