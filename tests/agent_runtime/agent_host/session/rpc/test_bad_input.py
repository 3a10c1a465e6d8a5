"""Bad input on the real socket: the server answers per spec or drops that peer; nothing crashes and
nothing is left behind."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

import pytest

from contracts.errors import ErrorCode
from contracts.ipc.client import ChildProcess
from contracts.ipc.client_core import ConnectionClosed, RpcCallError
from contracts.ipc.framing import DEFAULT_MAX_FRAME_BYTES, encode
from contracts.ipc.handshake import hello_frame
from contracts.ipc.listener import RuntimeListener
from tests.support.peers import REPO_ROOT, raw_peer, spawn_peer, start_connected_peer, stop


async def test_an_oversize_frame_gets_one_clear_error_then_the_connection_closes() -> None:
    async with raw_peer() as peer:
        await peer.send(b"x" * (DEFAULT_MAX_FRAME_BYTES + 10))
        reply = await peer.receive()
        assert reply["id"] is None
        assert reply["error"]["code"] == -32600
        assert reply["error"]["data"]["details"]["maxFrameBytes"] == DEFAULT_MAX_FRAME_BYTES
        assert "larger than" in reply["error"]["message"]
        assert await peer.at_eof()
        assert await stop(peer.process) == 0


async def test_a_truncated_frame_then_disconnect_ends_the_server_cleanly() -> None:
    async with raw_peer() as peer:
        await peer.send(b'{"jsonrpc": "2.0", "method": "noop", "id": 1')
        peer.writer.close()
        assert await stop(peer.process) == 0
        assert peer.process.stderr is not None
        assert b"Traceback" not in await peer.process.stderr.read()


async def test_a_flood_of_requests_is_answered_in_full() -> None:
    count = 20_000
    async with raw_peer() as peer:
        await peer.send(b"".join(encode({"jsonrpc": "2.0", "id": i, "method": "noop"}) for i in range(count)))
        seen = set()
        for _ in range(count):
            reply = await peer.receive(timeout=30)
            assert reply["result"] is None
            seen.add(reply["id"])
        assert seen == set(range(count))


async def test_slow_requests_beyond_the_in_flight_limit_wait_their_turn() -> None:
    async with raw_peer() as peer:
        frames = [
            encode({"jsonrpc": "2.0", "id": i, "method": "sleep", "params": {"seconds": 0.02}})
            for i in range(300)
        ]
        await peer.send(b"".join(frames))
        replies = [await peer.receive(timeout=30) for _ in range(300)]
        assert sorted(r["id"] for r in replies) == list(range(300))
        assert all(r["result"] == "slept" for r in replies)


async def test_a_reader_that_falls_behind_still_gets_every_notification_in_order() -> None:
    async with raw_peer() as peer:
        await peer.send_json({"jsonrpc": "2.0", "id": 1, "method": "emit", "params": {"count": 50_000}})
        await asyncio.sleep(0.2)  # let the server run ahead while nobody reads
        seqs = []
        while True:
            message = await peer.receive(timeout=30)
            if message.get("id") == 1:
                break
            seqs.append(message["params"]["seq"])
        assert seqs == list(range(50_000))
        assert message["result"] == 50_000


async def test_calls_pending_when_the_runtime_dies_fail_with_connection_closed() -> None:
    client, process = await start_connected_peer()
    async with client:
        calls = [asyncio.ensure_future(client.call("sleep", {"seconds": 30})) for _ in range(5)]
        await client.call("noop")  # the sleeps are in flight on the server by now
        process.kill()
        results = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 10)
        assert all(isinstance(r, ConnectionClosed) for r in results)
        assert client.closed
        with pytest.raises(ConnectionClosed):
            await client.call("noop")
    await process.wait()


async def test_a_client_call_that_times_out_leaves_nothing_pending() -> None:
    client, process = await start_connected_peer()
    async with client:
        with pytest.raises(TimeoutError, match=r"sleep got no answer within 0\.1 s"):
            await client.call("sleep", {"seconds": 0.5}, timeout=0.1)
        assert client.pending_calls == 0
        assert await client.call("subtract", [5, 3]) == 2  # the late reply was ignored
    await stop(process)


async def test_a_server_reply_over_the_clients_frame_limit_closes_the_client_clearly() -> None:
    client, process = await start_connected_peer(max_frame_bytes=1024)
    async with client:
        with pytest.raises(ConnectionClosed, match="larger than 1024 bytes"):
            await client.call("big", {"size": 5000})
    await stop(process)


async def test_the_secret_never_appears_on_the_command_line_or_in_the_runtimes_environment() -> None:
    listener = await RuntimeListener.open()
    async with listener:
        process = await spawn_peer("--connect", listener.name, env=listener.child_environment())
        client = await listener.accept(timeout=15)
    async with client:
        cmdline = Path(f"/proc/{process.pid}/cmdline")
        if cmdline.exists():
            assert listener.secret.encode() not in cmdline.read_bytes()
        assert await client.call("environment") == {"hasSecret": False}
    await stop(process)


async def test_a_runtime_with_the_wrong_secret_is_refused_and_the_right_one_still_gets_in() -> None:
    listener = await RuntimeListener.open()
    async with listener:
        impostor = await spawn_peer("--connect", listener.name, env={"COWORK_RPC_SECRET": "ab" * 32})
        assert await stop(impostor, timeout=15) == 3  # it got no welcome and gave up
        assert listener.rejected == 1
        process = await spawn_peer("--connect", listener.name, env=listener.child_environment())
        client = await listener.accept(timeout=15)
    async with client:
        assert await client.call("get_data") == ["hello", 5]
    await stop(process)


@pytest.mark.parametrize(
    "first_bytes",
    [
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        b'{"jsonrpc": "2.0", "id": 1, "method": "noop"}\n',
        b"x" * 10_000,
        b"",
    ],
    ids=["http", "request-before-hello", "oversize-hello", "silence"],
)
async def test_a_peer_that_does_not_prove_the_secret_is_cut_before_anything_else_is_read(
    first_bytes: bytes,
) -> None:
    listener = await RuntimeListener.open(handshake_timeout=0.5)
    async with listener:
        reader, writer = await asyncio.open_unix_connection(listener.name)
        writer.write(first_bytes)
        await writer.drain()
        async with asyncio.timeout(5):
            assert await reader.read() == b""  # closed without a word
        writer.close()
        assert listener.rejected == 1


async def test_a_replayed_hello_cannot_open_a_second_connection() -> None:
    listener = await RuntimeListener.open()
    async with listener:
        frame, _ = hello_frame(listener.secret)
        _, first_writer = await asyncio.open_unix_connection(listener.name)
        first_writer.write(frame)
        _, accepted = await listener.accept_stream(timeout=5)
        assert not os.path.exists(listener.name)  # one runtime per server name: the socket is gone
        with pytest.raises((FileNotFoundError, ConnectionRefusedError)):
            await asyncio.open_unix_connection(listener.name)
        for writer in (accepted, first_writer):
            writer.close()
            await writer.wait_closed()


async def test_the_listening_socket_is_private_to_its_owner_and_removed_on_close() -> None:
    listener = await RuntimeListener.open()
    directory = os.path.dirname(listener.name)
    assert os.stat(directory).st_mode & 0o777 == 0o700
    assert os.stat(listener.name).st_mode & 0o077 == 0
    await listener.close()
    assert not os.path.exists(directory)


async def test_a_runtime_refuses_a_desktop_that_cannot_prove_the_secret(tmp_path: Path) -> None:
    path = str(tmp_path / "s")
    served = asyncio.Event()
    answered: list[bytes] = []

    async def impostor(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        writer.write(b'{"jsonrpc": "2.0", "method": "cowork.welcome", "params": {"proof": "00"}}\n')
        writer.write(encode({"jsonrpc": "2.0", "id": 1, "method": "get_data"}))
        served.set()
        # The runtime may hang up as soon as it reads the bad proof, before the request is drained.
        with contextlib.suppress(ConnectionError):
            await writer.drain()
            answered.append(await reader.read(100))
        writer.close()

    server = await asyncio.start_unix_server(impostor, path)
    async with server:
        process = await spawn_peer("--connect", path, env={"COWORK_RPC_SECRET": "cd" * 32})
        assert await stop(process, timeout=15) == 3
        assert served.is_set()
    assert not any(answered), f"the runtime answered an unauthenticated desktop: {answered}"


async def test_stdio_mode_serves_the_same_methods_and_stray_prints_do_not_corrupt_it() -> None:
    stderr: list[bytes] = []
    client, process = await ChildProcess.spawn(
        [sys.executable, "-m", "tests.support.rpc_peer", "--stdio"],
        cwd=str(REPO_ROOT),
        on_stderr=stderr.append,
    )
    async with client:
        assert await client.call("subtract", {"minuend": 42, "subtrahend": 23}) == 19
        assert await client.call("stray_print") == "printed"
        assert await client.call("get_data") == ["hello", 5]
    assert await process.wait() == 0
    assert b"a stray print" in b"".join(stderr)


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell closes its stdout")
async def test_a_child_that_closes_its_stdout_at_once_fails_the_first_call_without_waiting() -> None:
    # The end of its output may arrive before the client is attached; it must not be lost.
    client, process = await ChildProcess.spawn(["/bin/sh", "-c", "exec 1>&-; sleep 30"])
    started = asyncio.get_running_loop().time()
    with pytest.raises(ConnectionClosed):
        await client.call("anything", timeout=20)
    assert asyncio.get_running_loop().time() - started < 5
    process.kill()
    await process.wait()


async def test_a_slow_request_does_not_hold_up_a_quick_one() -> None:
    async with raw_peer() as peer:
        await peer.send_json({"jsonrpc": "2.0", "id": "slow", "method": "sleep", "params": {"seconds": 1}})
        await peer.send_json({"jsonrpc": "2.0", "id": "quick", "method": "get_data"})
        first = await peer.receive()
        assert first == {"jsonrpc": "2.0", "id": "quick", "result": ["hello", 5]}
        assert (await peer.receive())["id"] == "slow"


async def test_an_application_error_reaches_the_asyncio_client_with_its_seed_code() -> None:
    client, process = await start_connected_peer()
    async with client:
        with pytest.raises(RpcCallError) as raised:
            await client.call("fail")
        assert raised.value.error_code is ErrorCode.SESSION_NOT_FOUND
        assert raised.value.data is not None
        assert raised.value.data.details == {"sessionId": "sess_x"}
    await stop(process)
