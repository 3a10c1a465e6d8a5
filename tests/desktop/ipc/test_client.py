"""QtJsonRpcClient against the runtime's real server code in its own process, over the real socket."""

from __future__ import annotations

import asyncio
import itertools
import sys
import time
from typing import Any

import pytest
from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QApplication

from contracts.errors import ErrorCode
from contracts.ipc.client_core import ConnectionClosed, RpcCallError
from contracts.ipc.framing import encode
from contracts.ipc.handshake import SECRET_ENV
from desktop.ipc import QtJsonRpcClient, RuntimeServer
from tests.desktop.support import Peer, Peers, RawSocket, Recorder, Run, signalled


async def connect(peers: Peers, **server_options: Any) -> tuple[QtJsonRpcClient, Peer]:
    server = RuntimeServer(**server_options)
    peer = peers.spawn(server.full_name, server.child_environment()[SECRET_ENV])
    return await server.accept(timeout=15), peer


async def fake_runtime(**server_options: Any) -> tuple[QtJsonRpcClient, RawSocket]:
    """An in-process runtime that has authenticated and then writes whatever bytes a test says."""
    server = RuntimeServer(**server_options)
    runtime = RawSocket()
    await runtime.connect(server.full_name)
    await runtime.authenticate(server.child_environment()[SECRET_ENV])
    return await server.accept(timeout=5), runtime


def test_calls_return_their_results(run: Run[None], peers: Peers) -> None:
    async def scenario() -> None:
        client, _ = await connect(peers)
        assert await client.call("subtract", [42, 23]) == 19
        assert await client.call("subtract", {"subtrahend": 23, "minuend": 42}) == 19
        assert await client.call("get_data") == ["hello", 5]
        assert await client.call("noop") is None
        results = await asyncio.gather(*(client.call("subtract", [n, 1]) for n in range(50)))
        assert results == [n - 1 for n in range(50)]
        assert client.pending_calls == 0
        await client.notify("update", [1, 2, 3])
        assert await client.call("noop") is None
        await client.close()
        assert client.closed
        assert client.close_reason == "client closed the connection"

    run(scenario())


def test_an_application_error_raises_rpc_call_error(run: Run[None], peers: Peers) -> None:
    async def scenario() -> None:
        client, _ = await connect(peers)
        with pytest.raises(RpcCallError, match="No session sess_x") as raised:
            await client.call("fail")
        assert raised.value.rpc_code == -32000
        assert await client.call("noop") is None, "an error reply does not hurt the connection"
        await client.close()

    run(scenario())


def test_an_application_error_carries_the_seed_error_code(run: Run[None], peers: Peers) -> None:
    async def scenario() -> None:
        client, _ = await connect(peers)
        with pytest.raises(RpcCallError) as raised:
            await client.call("fail")
        await client.close()
        assert raised.value.error_code == ErrorCode.SESSION_NOT_FOUND
        assert raised.value.data is not None
        assert raised.value.data.details == {"sessionId": "sess_x"}

    run(scenario())


def test_notifications_arrive_as_signals_in_order_before_the_reply(run: Run[None], peers: Peers) -> None:
    async def scenario() -> None:
        client, _ = await connect(peers)
        notes = Recorder(client.notification)
        assert await client.call("emit", {"count": 1000}) == 1000
        assert len(notes.calls) == 1000, "the reply was sent after the last notification"
        assert {method for method, _ in notes.calls} == {"SessionEvent"}
        assert [params["seq"] for _, params in notes.calls] == list(range(1000))
        await client.close()

    run(scenario())


def test_a_flood_of_notifications_never_holds_the_event_loop_for_long(run: Run[None], peers: Peers) -> None:
    """Each turn dispatches for about the budget, then lets timers and input through."""

    async def scenario() -> None:
        client, _ = await connect(peers, dispatch_budget=0.004)
        work_per_note = 50e-6  # a slot that does some work, so 3000 notes take ~150 ms in all

        def busy_slot(_method: str, _params: Any) -> None:
            until = time.perf_counter() + work_per_note
            while time.perf_counter() < until:
                pass

        client.notification.connect(busy_slot)
        ticks: list[float] = []
        heartbeat = QTimer()
        heartbeat.setTimerType(Qt.TimerType.PreciseTimer)
        heartbeat.setInterval(2)
        heartbeat.timeout.connect(lambda: ticks.append(time.perf_counter()))
        heartbeat.start()
        started = time.perf_counter()
        await client.call("emit", {"count": 3000})
        elapsed = time.perf_counter() - started
        heartbeat.stop()
        gaps = [later - earlier for earlier, later in itertools.pairwise(ticks)]
        assert elapsed > 0.1, "the slot's work must dominate for this test to mean anything"
        assert len(ticks) > 10
        assert max(gaps) < 0.05, f"the event loop was held for {max(gaps) * 1000:.0f} ms"
        await client.close()

    run(scenario())


def test_a_call_times_out_and_its_late_reply_is_ignored(run: Run[None], peers: Peers) -> None:
    async def scenario() -> None:
        client, _ = await connect(peers)
        with pytest.raises(TimeoutError, match=r"sleep got no answer within 0\.05 s"):
            await client.call("sleep", {"seconds": 0.3}, timeout=0.05)
        assert client.pending_calls == 0
        # Answered after the first call's late reply has come in (the runtime serves calls concurrently).
        assert await client.call("sleep", {"seconds": 0.5}) == "slept"
        assert not client.closed
        await client.close()

    run(scenario())


def test_pending_calls_fail_when_the_runtime_is_killed(run: Run[None], peers: Peers) -> None:
    async def scenario() -> None:
        client, peer = await connect(peers)
        gone = Recorder(client.disconnected)
        waiting = [asyncio.ensure_future(client.call("sleep", {"seconds": 30})) for _ in range(3)]
        assert await client.call("noop") is None  # the sleeps have reached the runtime
        assert client.pending_calls == 3
        peer.kill()
        ((reason,),) = await gone.wait(1)
        assert reason == "server closed the connection"
        for call in waiting:
            with pytest.raises(ConnectionClosed, match="server closed the connection"):
                await call
        assert client.pending_calls == 0
        with pytest.raises(ConnectionClosed, match="server closed the connection"):
            await client.call("noop")
        await client.wait_closed()
        assert gone.calls == [(reason,)], "disconnected is emitted once"

    run(scenario())


def test_a_result_over_the_frame_limit_closes_the_connection(run: Run[None], peers: Peers) -> None:
    async def scenario() -> None:
        client, _ = await connect(peers, max_frame_bytes=64 * 1024)
        gone = Recorder(client.disconnected)
        assert await client.call("big", {"size": 60 * 1024}) == "x" * (60 * 1024)
        with pytest.raises(ConnectionClosed, match="larger than 65536 bytes"):
            await client.call("big", {"size": 100 * 1024})
        ((reason,),) = await gone.wait(1)
        assert reason == "server sent a message larger than 65536 bytes"
        assert client.closed

    run(scenario())


@pytest.mark.parametrize(
    ("sent", "reason"),
    [
        pytest.param(b"{not json\n", "invalid JSON", id="not-json"),
        pytest.param(encode([1, 2]), "not JSON-RPC 2.0", id="not-json-rpc"),
        pytest.param(encode({"jsonrpc": "2.0", "id": 7, "method": "x"}), "sent a request", id="a-request"),
    ],
)
def test_a_runtime_that_breaks_the_protocol_is_cut(run: Run[None], sent: bytes, reason: str) -> None:
    async def scenario() -> None:
        client, runtime = await fake_runtime()
        gone = Recorder(client.disconnected)
        call = asyncio.ensure_future(client.call("noop"))
        runtime.send(sent)
        with pytest.raises(ConnectionClosed, match=reason):
            await call
        ((why,),) = await gone.wait(1)
        assert reason in why
        await runtime.cut()

    run(scenario())


def test_what_the_runtime_sent_before_it_closed_is_delivered_first(run: Run[None]) -> None:
    async def scenario() -> None:
        client, runtime = await fake_runtime(dispatch_budget=0.0005)
        notes = Recorder(client.notification)
        gone = Recorder(client.disconnected)
        call = asyncio.ensure_future(client.call("noop"))
        await runtime.read_until(b'"noop"')
        burst = b"".join(
            encode({"jsonrpc": "2.0", "method": "SessionEvent", "params": {"seq": n}}) for n in range(5000)
        )
        runtime.send(burst + encode({"jsonrpc": "2.0", "id": 1, "result": "done"}) + b'{"jsonrpc"')
        runtime.socket.disconnectFromServer()
        assert await call == "done"
        ((reason,),) = await gone.wait(1)
        assert [params["seq"] for _, params in notes.calls] == list(range(5000))
        assert reason == "server closed the connection in the middle of a message"

    run(scenario())


def test_a_closed_client_refuses_new_calls(run: Run[None], peers: Peers) -> None:
    async def scenario() -> None:
        client, _ = await connect(peers)
        reason = await asyncio.gather(signalled(client.disconnected), client.close())
        assert reason[0] == ("client closed the connection",)
        with pytest.raises(ConnectionClosed, match="client closed the connection"):
            await client.call("noop")
        with pytest.raises(ConnectionClosed):
            await client.notify("update", [])

    run(scenario())


def test_the_installed_pyside6_leaves_the_references_to_none_and_true_alone(qapp: QApplication) -> None:
    """PySide6 6.12.0 on CPython 3.11 dropped a reference to None on every void call and to True on
    every emit, until the interpreter aborted; pyproject.toml keeps that combination out."""

    class Probe(QObject):
        fired = Signal()

    probe, timer = Probe(), QTimer()
    before = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(10_000):
        timer.stop()
        probe.fired.emit()
    after = sys.getrefcount(None), sys.getrefcount(True)
    assert after[0] > before[0] - 100
    assert after[1] > before[1] - 100
