"""RuntimeServer: owner-only socket, one authenticated runtime, everything else cut (real processes)."""

from __future__ import annotations

import asyncio
import os
import stat
import sys

import pytest
from PySide6.QtNetwork import QLocalSocket

from contracts.ipc.client_core import ConnectionClosed
from contracts.ipc.framing import encode
from contracts.ipc.handshake import HANDSHAKE_MAX_FRAME_BYTES, SECRET_ENV, new_secret
from contracts.ipc.transport import MAX_UNIX_SOCKET_PATH_BYTES
from desktop.ipc import QtJsonRpcClient, RuntimeServer
from tests.desktop.support import Peers, RawSocket, Recorder, Run

unix_only = pytest.mark.skipif(sys.platform == "win32", reason="a Unix socket file")


def secret_of(server: RuntimeServer) -> str:
    return server.child_environment()[SECRET_ENV]


@unix_only
def test_the_socket_is_owner_only_and_short_enough_for_macos(run: Run[None]) -> None:
    async def scenario() -> None:
        server = RuntimeServer()
        try:
            mode = os.stat(server.full_name).st_mode
            assert stat.S_ISSOCK(mode)
            assert stat.S_IMODE(mode) & 0o077 == 0, oct(stat.S_IMODE(mode))
            assert len(server.full_name.encode()) < MAX_UNIX_SOCKET_PATH_BYTES
            assert os.path.basename(server.full_name).startswith("cw-")
        finally:
            server.close()

    run(scenario())


def test_each_server_has_its_own_name_and_secret(run: Run[None]) -> None:
    async def scenario() -> None:
        first, second = RuntimeServer(), RuntimeServer()
        try:
            assert first.full_name != second.full_name
            assert secret_of(first) != secret_of(second)
            assert len(secret_of(first)) == 64
        finally:
            first.close()
            second.close()

    run(scenario())


def test_the_runtime_authenticates_and_the_server_stops_listening(run: Run[None], peers: Peers) -> None:
    async def scenario() -> None:
        server = RuntimeServer()
        connected = Recorder(server.runtime_connected)
        peers.spawn(server.full_name, secret_of(server))
        client = await server.accept(timeout=15)
        assert isinstance(client, QtJsonRpcClient)
        assert connected.calls == [(client,)]
        assert server.client is client
        assert not server.is_listening
        if sys.platform != "win32":
            assert not os.path.exists(server.full_name)
        assert await client.call("get_data") == ["hello", 5]
        assert server.rejected == 0
        await client.close()

    run(scenario())


def test_the_runtime_connected_signal_alone_is_enough(run: Run[None], peers: Peers) -> None:
    async def scenario() -> None:
        server = RuntimeServer()
        connected = Recorder(server.runtime_connected)
        peers.spawn(server.full_name, secret_of(server))
        ((client,),) = await connected.wait(1, timeout=15)
        assert await client.call("subtract", [42, 23]) == 19
        assert await server.accept(timeout=1) is client
        await client.close()

    run(scenario())


def test_a_wrong_secret_is_cut_and_the_right_runtime_still_gets_in(run: Run[None], peers: Peers) -> None:
    async def scenario() -> None:
        server = RuntimeServer()
        rejected = Recorder(server.peer_rejected)
        impostor = peers.spawn(server.full_name, new_secret())
        ((reason,),) = await rejected.wait(1, timeout=15)
        assert "proof does not match" in reason
        assert await impostor.exited() == 3, impostor.stderr()
        assert "could not authenticate the desktop" in impostor.stderr()
        assert server.is_listening
        peers.spawn(server.full_name, secret_of(server))
        client = await server.accept(timeout=15)
        assert await client.call("noop") is None
        assert server.rejected == 1
        await client.close()

    run(scenario())


def test_a_second_runtime_is_refused(run: Run[None], peers: Peers) -> None:
    async def scenario() -> None:
        server = RuntimeServer()
        peers.spawn(server.full_name, secret_of(server))
        client = await server.accept(timeout=15)
        second = peers.spawn(server.full_name, secret_of(server))
        assert await second.exited() != 0
        assert await client.call("get_data") == ["hello", 5]
        await client.close()

    run(scenario())


def test_a_peer_mid_handshake_is_cut_when_the_runtime_authenticates(run: Run[None], peers: Peers) -> None:
    async def scenario() -> None:
        server = RuntimeServer()
        early = RawSocket()
        await early.connect(server.full_name)
        peers.spawn(server.full_name, secret_of(server))
        client = await server.accept(timeout=15)
        await early.cut()
        assert server.rejected == 1
        await client.close()
        early.close()

    run(scenario())


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        pytest.param(b"GET / HTTP/1.1\r\n\r\n", "not JSON", id="garbage"),
        pytest.param(b"x" * (HANDSHAKE_MAX_FRAME_BYTES + 100), "larger than", id="oversize-no-newline"),
        pytest.param(b"{" * (HANDSHAKE_MAX_FRAME_BYTES + 1) + b"\n", "larger than", id="oversize-line"),
        pytest.param(b"", "no hello within", id="silence"),
        pytest.param(
            encode({"jsonrpc": "2.0", "id": 1, "method": "cowork.hello", "params": {}}),
            "expected a cowork.hello notification",
            id="hello-as-request",
        ),
        pytest.param(
            encode(
                {
                    "jsonrpc": "2.0",
                    "method": "cowork.hello",
                    "params": {"protocol": "cowork-ipc/1", "nonce": "0" * 32, "proof": "0" * 64},
                }
            ),
            "proof does not match",
            id="forged-proof",
        ),
    ],
)
def test_a_raw_client_that_does_not_prove_the_secret_is_cut(
    run: Run[None], peers: Peers, payload: bytes, reason: str
) -> None:
    async def scenario() -> None:
        server = RuntimeServer(handshake_timeout=0.3)
        rejected = Recorder(server.peer_rejected)
        raw = RawSocket()
        await raw.connect(server.full_name)
        if payload:
            raw.send(payload)
        await raw.cut()
        ((why,),) = await rejected.wait(1)
        assert reason in why
        assert raw.received == b"", "an unauthenticated peer must learn nothing"
        assert server.rejected == 1
        assert server.is_listening
        raw.close()
        peers.spawn(server.full_name, secret_of(server))
        client = await server.accept(timeout=15)
        assert await client.call("noop") is None
        await client.close()

    run(scenario())


def test_bytes_right_behind_the_hello_reach_the_client(run: Run[None]) -> None:
    async def scenario() -> None:
        server = RuntimeServer()
        runtime = RawSocket()
        await runtime.connect(server.full_name)
        first = encode({"jsonrpc": "2.0", "method": "SessionEvent", "params": {"seq": 0}})
        second = encode({"jsonrpc": "2.0", "method": "SessionEvent", "params": {"seq": 1}})
        await runtime.authenticate(secret_of(server), then=first + second)
        client = await server.accept(timeout=5)
        notes = Recorder(client.notification)
        assert await notes.wait(2) == [("SessionEvent", {"seq": 0}), ("SessionEvent", {"seq": 1})]
        await client.close()
        runtime.close()

    run(scenario())


def test_close_removes_the_socket_and_fails_a_waiting_accept(run: Run[None]) -> None:
    async def scenario() -> None:
        server = RuntimeServer()
        name = server.full_name
        if sys.platform != "win32":
            assert os.path.exists(name)
        waiting = asyncio.ensure_future(server.accept(timeout=5))
        await asyncio.sleep(0)
        server.close()
        with pytest.raises(ConnectionClosed, match="closed"):
            await waiting
        assert not server.is_listening
        if sys.platform != "win32":
            assert not os.path.exists(name)
        with pytest.raises(ConnectionClosed, match="closed before a runtime connected"):
            await server.accept(timeout=1)
        nobody = RawSocket()
        failed = Recorder(nobody.socket.errorOccurred)
        nobody.socket.connectToServer(name)
        ((error,),) = await failed.wait(1)
        assert error == QLocalSocket.LocalSocketError.ServerNotFoundError

    run(scenario())


def test_accept_gives_up_after_its_timeout(run: Run[None]) -> None:
    async def scenario() -> None:
        server = RuntimeServer()
        with pytest.raises(TimeoutError):
            await server.accept(timeout=0.05)
        assert server.is_listening
        server.close()

    run(scenario())
