"""The scripted gateway over real HTTP on loopback, checked with a plain HTTP client."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from agent_runtime.scripted_gateway import ScriptedGateway, ScriptedGatewayThread

ANTHROPIC = "/v1/messages"
OPENAI = "/v1/chat/completions"
BODY = {"model": "m-1", "max_tokens": 10, "stream": True, "messages": [{"role": "user", "content": "hi"}]}


def events(text: str) -> list[tuple[str | None, Any]]:
    """(event name, decoded data) for each event of an SSE body."""
    out: list[tuple[str | None, Any]] = []
    for block in text.strip().split("\n\n"):
        name = None
        data = []
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        joined = "\n".join(data)
        out.append((name, joined if joined == "[DONE]" else json.loads(joined)))
    return out


async def post(url: str, path: str, body: Any = None, **kwargs: Any) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(url + path, json=BODY if body is None else body, **kwargs)


async def test_anthropic_responses_follow_the_messages_streaming_event_sequence() -> None:
    script = [{"text": "Hello", "chunkSize": 3, "toolCalls": [{"name": "ReadFile", "arguments": {"p": 1}}]}]
    async with ScriptedGateway(script) as gateway:
        response = await post(gateway.url, ANTHROPIC)
    assert response.headers["content-type"].startswith("text/event-stream")
    got = events(response.text)
    assert [name for name, _ in got] == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(name == data["type"] for name, data in got)
    assert got[0][1]["message"]["model"] == "m-1"
    assert got[6][1]["content_block"]["type"] == "tool_use"
    assert "".join(d["delta"]["partial_json"] for _, d in got[7:10]) == '{"p": 1}'
    assert got[11][1]["delta"]["stop_reason"] == "tool_use"


async def test_openai_responses_are_chunks_ending_in_done_with_usage_only_when_asked() -> None:
    async with ScriptedGateway({"turns": [{"text": "Hi"}], "repeatLastTurn": True}) as gateway:
        plain = events((await post(gateway.url, OPENAI)).text)
        asked = events(
            (await post(gateway.url, OPENAI, {**BODY, "stream_options": {"include_usage": True}})).text
        )
    assert plain[-1] == (None, "[DONE]")
    assert plain[-2][1]["choices"][0]["finish_reason"] == "stop"
    assert all("usage" not in data for _, data in plain[:-1])
    assert asked[-2][1]["choices"] == []
    assert set(asked[-2][1]["usage"]) == {
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "prompt_tokens_details",
    }


async def test_requests_are_recorded_with_secrets_redacted_in_process_and_over_http() -> None:
    async with ScriptedGateway([{"text": "a"}]) as gateway:
        await post(
            gateway.url, ANTHROPIC, headers={"x-api-key": "k-secret", "authorization": "Bearer b-secret"}
        )
        (request,) = gateway.requests
        async with httpx.AsyncClient() as http:
            remote = (await http.get(gateway.url + "/_scripted/requests")).json()["requests"]
    assert request.method == "POST"
    assert request.path == ANTHROPIC
    assert request.dialect == "anthropic"
    assert request.body == BODY
    assert request.outcome == "completed"
    assert request.turn_index == 0
    assert request.headers["x-api-key"] == "[redacted]"
    assert request.headers["authorization"] == "[redacted]"
    assert remote == [request.to_json()]
    assert "secret" not in json.dumps(remote)


async def test_state_reports_unplayed_turns_and_assert_done_fails_on_leftovers() -> None:
    async with ScriptedGateway([{"text": "a"}, {"kind": "error", "status": 500}]) as gateway:
        await post(gateway.url, OPENAI)
        async with httpx.AsyncClient() as http:
            state = (await http.get(gateway.url + "/_scripted/state")).json()
        with pytest.raises(AssertionError, match="turn 1"):
            gateway.assert_done()
    assert state["turnsTotal"] == 2
    assert state["turnsPlayed"] == 1
    assert state["turnsLeft"] == 1
    assert len(state["leftovers"]) == 1


@pytest.mark.parametrize("path", [ANTHROPIC, OPENAI])
async def test_a_request_beyond_the_script_gets_a_clear_500_and_fails_assert_done(path: str) -> None:
    async with ScriptedGateway([{"text": "a"}]) as gateway:
        await post(gateway.url, path)
        response = await post(gateway.url, path)
        with pytest.raises(AssertionError, match="after the script ran out"):
            gateway.assert_done()
        assert gateway.requests[1].outcome == "script_exhausted"
    assert response.status_code == 500
    assert "ran out" in json.dumps(response.json())


async def test_repeat_last_turn_never_runs_out() -> None:
    async with ScriptedGateway({"turns": [{"text": "a"}, {"text": "b"}], "repeatLastTurn": True}) as gateway:
        texts = [(await post(gateway.url, OPENAI)).text for _ in range(5)]
        gateway.assert_done()
    assert sum('"b"' in text for text in texts) == 4


async def test_error_turns_use_each_dialects_error_body_and_send_retry_after() -> None:
    script = [
        {"kind": "error", "status": 429, "retryAfter": 3},
        {"kind": "error", "status": 529, "message": "busy"},
    ]
    async with ScriptedGateway(script) as gateway:
        rate_limited = await post(gateway.url, ANTHROPIC)
        overloaded = await post(gateway.url, OPENAI)
    assert rate_limited.status_code == 429
    assert rate_limited.headers["retry-after"] == "3"
    assert rate_limited.json() == {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "Rate limited (scripted)"},
    }
    assert overloaded.status_code == 529
    assert overloaded.json()["error"]["message"] == "busy"


async def test_a_scripted_cut_is_an_incomplete_response_not_a_clean_end() -> None:
    received = bytearray()

    async def read_all(url: str) -> None:
        async with httpx.AsyncClient() as http, http.stream("POST", url + OPENAI, json=BODY) as response:
            async for chunk in response.aiter_raw():
                received.extend(chunk)

    async with ScriptedGateway([{"text": "abcdef", "chunkSize": 2, "cutAfterChunks": 1}]) as gateway:
        with pytest.raises(httpx.RemoteProtocolError):
            await read_all(gateway.url)
        assert gateway.requests[0].outcome == "cut"
    assert b'"content":"ab"' in received
    assert b'"content":"cd"' not in received


@pytest.mark.parametrize(
    ("path", "headers", "status"),
    [
        (ANTHROPIC, {}, 401),
        (ANTHROPIC, {"x-api-key": "wrong"}, 401),
        (ANTHROPIC, {"x-api-key": "tok"}, 200),
        (ANTHROPIC, {"authorization": "Bearer tok"}, 200),
        (OPENAI, {"authorization": "Bearer tok"}, 200),
        (OPENAI, {"x-api-key": "tok"}, 401),
        (OPENAI, {"authorization": "Bearer tok2"}, 401),
        (OPENAI, {"authorization": "tok"}, 401),
    ],
)
async def test_the_optional_token_is_checked_per_dialect(
    path: str, headers: dict[str, str], status: int
) -> None:
    async with ScriptedGateway({"turns": [{"text": "a"}], "repeatLastTurn": True}, token="tok") as gateway:
        response = await post(gateway.url, path, headers=headers)
        assert gateway.snapshot()["turnsPlayed"] == (1 if status == 200 else 0)
    assert response.status_code == status
    if status == 401:
        body = response.json()
        assert (
            (body["error"]["type"] == "authentication_error")
            if path == ANTHROPIC
            else ("message" in body["error"])
        )


async def test_with_a_token_the_control_routes_require_it_too() -> None:
    async with ScriptedGateway([], token="tok") as gateway, httpx.AsyncClient() as http:
        refused = await http.get(gateway.url + "/_scripted/requests")
        allowed = await http.get(gateway.url + "/_scripted/state", headers={"authorization": "Bearer tok"})
    assert refused.status_code == 401
    assert allowed.status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        json.dumps({**BODY, "stream": False}).encode(),
        json.dumps({"stream": True}).encode(),
    ],
)
async def test_malformed_requests_get_422_and_consume_no_turn(body: bytes) -> None:
    async with ScriptedGateway([{"text": "a"}]) as gateway:
        async with httpx.AsyncClient() as http:
            response = await http.post(gateway.url + ANTHROPIC, content=body)
        assert gateway.requests[0].outcome == "invalid"
        assert gateway.snapshot()["turnsLeft"] == 1
    assert response.status_code == 422
    assert response.json()["type"] == "error"


async def test_unknown_routes_and_methods_are_answered_not_crashed() -> None:
    async with ScriptedGateway([]) as gateway, httpx.AsyncClient() as http:
        missing = await http.post(gateway.url + "/v2/other", json={})
        wrong_method = await http.get(gateway.url + OPENAI)
    assert missing.status_code == 404
    assert wrong_method.status_code == 405


async def test_concurrent_streams_are_served_at_once() -> None:
    script = [{"text": f"stream {n}", "holdAfterChunks": 0} for n in range(4)]
    async with ScriptedGateway(script) as gateway:
        calls = [asyncio.create_task(post(gateway.url, OPENAI)) for _ in range(4)]
        # All four are held inside the gateway at the same time before any is released.
        await gateway.wait_for(
            lambda: len(gateway.requests) == 4 and all(r.turn_index is not None for r in gateway.requests)
        )
        assert not any(call.done() for call in calls)
        async with httpx.AsyncClient() as http:
            for _ in range(4):
                assert (await http.post(gateway.url + "/_scripted/release")).status_code == 200
        responses = await asyncio.gather(*calls)
        gateway.assert_done()
    assert sorted(next(t for t in ("0", "1", "2", "3") if f"stream {t}" in r.text) for r in responses) == [
        "0",
        "1",
        "2",
        "3",
    ]


async def test_a_delay_before_the_answer_is_applied() -> None:
    async with ScriptedGateway([{"text": "a", "delayMs": 150}]) as gateway:
        loop = asyncio.get_running_loop()
        started = loop.time()
        await post(gateway.url, ANTHROPIC)
        assert loop.time() - started >= 0.15


def test_the_thread_backed_gateway_serves_synchronous_code() -> None:
    with ScriptedGatewayThread([{"text": "from a thread"}]) as gateway:
        response = httpx.post(gateway.url + OPENAI, json=BODY, timeout=10)
        gateway.wait_for(lambda: gateway.requests[0].outcome == "completed")
        gateway.assert_done()
    assert "from a thread" in response.text


def test_the_thread_backed_gateway_releases_holds_from_another_thread() -> None:
    with (
        ScriptedGatewayThread([{"text": "held", "holdAfterChunks": 0}]) as gateway,
        httpx.Client(timeout=10) as http,
        http.stream("POST", gateway.url + ANTHROPIC, json=BODY) as response,
    ):
        gateway.wait_for(lambda: len(gateway.requests) == 1)
        gateway.release()
        body = response.read()
    assert b"message_stop" in body


async def test_only_the_latest_requests_are_kept_when_a_bound_is_set() -> None:
    async with ScriptedGateway({"turns": [{"text": "a"}], "repeatLastTurn": True}, max_recorded=3) as gateway:
        for _ in range(5):
            await post(gateway.url, OPENAI)
        assert [r.index for r in gateway.requests] == [2, 3, 4]
        assert gateway.snapshot()["requestsReceived"] == 5


async def test_chunks_per_second_paces_a_stream_beyond_one_chunk_a_millisecond() -> None:
    turn = {"text": "x" * 1500, "chunkSize": 1, "chunksPerSecond": 5000}
    async with ScriptedGateway([turn]) as gateway:
        loop = asyncio.get_running_loop()
        started = loop.time()
        response = await post(gateway.url, ANTHROPIC)
        elapsed = loop.time() - started
    deltas = [data for name, data in events(response.text) if name == "content_block_delta"]
    assert len(deltas) == 1500
    # 1,500 chunks at 5,000/s take 0.3 s: not much less (paced), not much more (no per-chunk sleep).
    assert 0.28 <= elapsed < 1.0


def test_chunks_per_second_and_a_chunk_delay_do_not_go_together() -> None:
    from agent_runtime.scripted_gateway import ScriptError, parse_script

    with pytest.raises(ScriptError, match="chunkDelayMs or chunksPerSecond"):
        parse_script({"turns": [{"text": "a", "chunkDelayMs": 1, "chunksPerSecond": 10}]})


def test_connections_to_the_gateway_send_small_writes_at_once() -> None:
    # Without TCP_NODELAY a paced SSE stream arrived in bursts 40 ms apart (Nagle's algorithm waiting
    # for the client's delayed ACK); accepted sockets inherit the listening socket's setting.
    import socket

    from agent_runtime.scripted_gateway.server import bind

    listener = bind("127.0.0.1", 0)
    try:
        client = socket.create_connection(listener.getsockname()[:2])
        listener.setblocking(True)
        accepted, _ = listener.accept()
        with client, accepted:
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        listener.close()
