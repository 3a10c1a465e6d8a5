"""The streamable-HTTP session against the official SDK's server (and a hand-written one for the edges
the SDK never produces), on loopback."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from agent_runtime.tool_runtime.mcp.elicitation import (
    ElicitationAnswer,
    ElicitationRequest,
    answer_with_defaults,
)
from agent_runtime.tool_runtime.mcp.errors import (
    McpAuthorizationError,
    McpInsecureUrl,
    McpProtocolError,
    McpResponseTooLarge,
    McpTimeout,
    McpTransportError,
    McpUnsupportedVersion,
)
from agent_runtime.tool_runtime.mcp.manifest import translate_tools
from agent_runtime.tool_runtime.mcp.protocol import Progress
from agent_runtime.tool_runtime.mcp.results import translate_result
from agent_runtime.tool_runtime.mcp.session import McpSession
from tests.agent_runtime.tool_runtime.mcp.fixtures import Served, edge, eventually, sdk, session
from tests.support.mcp_servers import PAGE_SIZE, SDK_TOOLS, ServerThread, sdk_server

__all__ = ["edge", "sdk", "session"]


def _session(url: str, **options: Any) -> McpSession:
    options.setdefault("call_timeout_s", 20)
    return McpSession("tests", url, allow_insecure_loopback=True, **options)


def _text(result: dict[str, object]) -> str:
    content = result["content"]
    assert isinstance(content, list)
    return "".join(block["text"] for block in content if block.get("type") == "text")


# ---------------------------------------------------------------------- lifecycle


async def test_open_initializes_with_the_newest_revision_and_names_the_client(sdk: Served) -> None:
    opened = _session(sdk.url, elicitation=answer_with_defaults)
    info = await opened.open()
    try:
        assert info.protocol_version == "2025-11-25"
        assert (info.name, info.version) == ("cowork-test", "1.0")
        assert "tools" in info.capabilities
        params = sdk.log.initialize_params[0]
        assert params["protocolVersion"] == "2025-11-25"
        assert params["clientInfo"]["name"] == "cowork"
        assert params["clientInfo"]["version"]
        assert params["capabilities"] == {"elicitation": {"form": {}}}
        assert sdk.log.methods[:2] == ["initialize", "notifications/initialized"]
        assert opened.session_id
    finally:
        await opened.aclose()


async def test_without_a_handler_no_elicitation_capability_is_declared(sdk: Served) -> None:
    opened = _session(sdk.url)
    await opened.open()
    await opened.aclose()
    assert sdk.log.initialize_params[0]["capabilities"] == {}


async def test_headers_carry_the_session_and_the_negotiated_version_after_initialize(sdk: Served) -> None:
    opened = _session(sdk.url)
    await opened.open()
    await opened.ping()
    await opened.aclose()
    posts = [h for h in sdk.log.headers if h["method"] == "POST"]
    assert "mcp-session-id" not in posts[0]
    assert "mcp-protocol-version" not in posts[0]
    for later in posts[1:]:
        assert later["mcp-session-id"] == posts[1]["mcp-session-id"]
        assert later["mcp-protocol-version"] == "2025-11-25"
        assert "application/json" in later["accept"]
        assert "text/event-stream" in later["accept"]


@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26"])
async def test_an_older_revision_the_server_answers_is_accepted_and_sent_back(
    edge: Callable[..., Served], version: str
) -> None:
    served = edge(protocol_version=version)
    opened = _session(served.url)
    info = await opened.open()
    await opened.ping()
    await opened.aclose()
    assert info.protocol_version == version
    assert served.log.headers[-2]["mcp-protocol-version"] == version  # the ping (the last is DELETE)


@pytest.mark.parametrize("version", ["2024-11-05", "2099-01-01", "1.0"])
async def test_a_revision_outside_the_supported_ones_is_refused_and_the_session_dropped(
    edge: Callable[..., Served], version: str
) -> None:
    served = edge(protocol_version=version)
    opened = _session(served.url)
    with pytest.raises(McpUnsupportedVersion, match=version):
        await opened.open()
    assert "notifications/initialized" not in served.log.methods
    assert served.log.deletes == ["edge-session"]


async def test_close_sends_delete_with_the_session_id_once(sdk: Served) -> None:
    opened = _session(sdk.url)
    await opened.open()
    session_id = opened.session_id
    await opened.aclose()
    await opened.aclose()
    assert sdk.log.deletes == [session_id]
    with pytest.raises(Exception, match="closed"):
        await opened.ping()


async def test_ping(session: McpSession) -> None:
    await session.ping()


# ---------------------------------------------------------------------- tools


async def test_tools_list_follows_every_page(session: McpSession, sdk: Served) -> None:
    tools = await session.list_tools()
    assert [tool["name"] for tool in tools] == [tool.name for tool in SDK_TOOLS]
    pages = -(-len(SDK_TOOLS) // PAGE_SIZE)
    assert pages > 1
    assert sdk.log.methods.count("tools/list") == pages


async def test_a_malformed_tool_is_rejected_and_the_others_kept(session: McpSession) -> None:
    specs, rejected = translate_tools("tests", await session.list_tools())
    assert {bad.tool_name for bad in rejected} == {"bad_dialect", "bad_schema"}
    assert "echo" in {spec.tool_name for spec in specs}
    assert len(specs) == len(SDK_TOOLS) - 2


async def test_call_returns_the_result_and_structured_content(session: McpSession) -> None:
    assert _text(await session.call_tool("echo", {"text": "hello"})) == "hello"
    result = await session.call_tool("add", {"a": 2, "b": 3})
    assert result["structuredContent"] == {"sum": 5}
    output_schema = next(tool.output_schema for tool in SDK_TOOLS if tool.name == "add")
    translated = translate_result(result, output_schema)
    assert not translated.failed
    assert translated.structured == {"sum": 5}


async def test_a_tool_error_is_a_result_flagged_is_error(session: McpSession) -> None:
    result = await session.call_tool("fail", {})
    assert result["isError"] is True
    translated = translate_result(result, None)
    assert translated.failed
    assert translated.output_text == "the tool broke"


async def test_a_json_rpc_error_raises_with_its_code_and_message(session: McpSession) -> None:
    with pytest.raises(McpProtocolError) as raised:
        await session.call_tool("no_such_tool", {})
    assert "Unknown tool: no_such_tool" in raised.value.message
    assert isinstance(raised.value.code, int)
    await session.ping()  # the session goes on


async def test_concurrent_calls_each_get_their_own_answer(session: McpSession) -> None:
    texts = [f"call {index}" for index in range(12)]
    results = await asyncio.gather(*(session.call_tool("echo", {"text": text}) for text in texts))
    assert [_text(result) for result in results] == texts


async def test_the_server_may_ping_the_client_during_a_call(session: McpSession) -> None:
    assert _text(await session.call_tool("ping_client", {})) == "the client answered"


async def test_progress_notifications_reach_the_callback(session: McpSession, sdk: Served) -> None:
    updates: list[Progress] = []
    await session.call_tool("slow", {"seconds": 0.05}, on_progress=updates.append)
    assert updates == [Progress(1.0, 2.0, "halfway"), Progress(2.0, 2.0, "done")]


async def test_list_changed_calls_on_tools_changed(sdk: Served) -> None:
    changed = asyncio.Event()
    opened = _session(sdk.url, on_tools_changed=changed.set)
    await opened.open()
    try:
        before = len(await opened.list_tools())
        await opened.call_tool("change_tools", {})
        async with asyncio.timeout(10):
            await changed.wait()
        assert len(await opened.list_tools()) == before + 1
    finally:
        await opened.aclose()


# ---------------------------------------------------------------------- session expiry and resumption


async def test_an_expired_session_is_replaced_transparently(sdk: Served) -> None:
    changed: list[bool] = []
    opened = _session(sdk.url, on_tools_changed=lambda: changed.append(True))
    await opened.open()
    try:
        old = opened.session_id
        assert old is not None
        # The server forgets the session (as on its own expiry): the next request gets a 404.
        async with httpx.AsyncClient() as other:
            gone = await other.delete(
                sdk.url, headers={"mcp-session-id": old, "mcp-protocol-version": "2025-11-25"}
            )
        assert gone.status_code == 200
        assert _text(await opened.call_tool("echo", {"text": "still here"})) == "still here"
        assert opened.session_id not in (None, old)
        assert sdk.log.methods.count("initialize") == 2
        assert changed == [True]
    finally:
        await opened.aclose()


async def test_requests_that_all_meet_the_expired_session_start_one_new_session(sdk: Served) -> None:
    opened = _session(sdk.url)
    await opened.open()
    try:
        old = opened.session_id
        assert old is not None
        async with httpx.AsyncClient() as other:
            await other.delete(sdk.url, headers={"mcp-session-id": old, "mcp-protocol-version": "2025-11-25"})
        texts = [f"after {index}" for index in range(6)]
        results = await asyncio.gather(*(opened.call_tool("echo", {"text": text}) for text in texts))
        assert [_text(result) for result in results] == texts
        assert sdk.log.methods.count("initialize") == 2
    finally:
        await opened.aclose()


async def test_a_stream_cut_before_the_answer_resumes_with_last_event_id_after_retry() -> None:
    app, log = sdk_server(retry_ms=400)
    with ServerThread(app) as server:
        opened = _session(server.url)
        await opened.open()
        try:
            updates: list[Progress] = []
            started = time.monotonic()
            result = await opened.call_tool("cut", {}, on_progress=updates.append)
            elapsed = time.monotonic() - started
        finally:
            await opened.aclose()
    assert _text(result) == "survived the cut"
    assert [u.message for u in updates] == ["before the cut", "after the cut"]
    resumed = [h for h in log.headers if h["method"] == "GET" and "last-event-id" in h]
    assert resumed, "the client did not resume with GET and Last-Event-ID"
    assert resumed[0]["accept"] == "text/event-stream"
    # The server's retry interval (400 ms) was waited out before reconnecting.
    assert elapsed >= 0.35


async def test_a_stream_that_ends_without_an_event_id_cannot_be_resumed(edge: Callable[..., Served]) -> None:
    served = edge(cut="no-id")
    opened = _session(served.url)
    await opened.open()
    try:
        with pytest.raises(McpTransportError, match="without an event id"):
            await opened.call_tool("echo", {"text": "?"})
    finally:
        await opened.aclose()
    assert not any(h["method"] == "GET" and "last-event-id" in h for h in served.log.headers)


async def test_a_stream_the_server_cannot_resume_fails_the_call(edge: Callable[..., Served]) -> None:
    served = edge(cut="id", get_status=405)
    opened = _session(served.url)
    await opened.open()
    try:
        with pytest.raises(McpTransportError, match="resumption"):
            await opened.call_tool("echo", {"text": "?"})
    finally:
        await opened.aclose()
    resumed = [h for h in served.log.headers if h["method"] == "GET" and "last-event-id" in h]
    assert [h["last-event-id"] for h in resumed] == ["1"]


# ---------------------------------------------------------------------- elicitation


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            ElicitationAnswer("accept", {"name": "Grace", "count": 3}),
            {"action": "accept", "content": {"count": 3, "name": "Grace"}},
        ),
        (ElicitationAnswer("decline"), {"action": "decline", "content": None}),
        (ElicitationAnswer("cancel"), {"action": "cancel", "content": None}),
    ],
)
async def test_a_server_request_for_input_is_answered_through_the_handler(
    sdk: Served, answer: ElicitationAnswer, expected: dict[str, object]
) -> None:
    asked: list[ElicitationRequest] = []

    async def handler(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return answer

    opened = _session(sdk.url, elicitation=handler)
    await opened.open()
    try:
        result = await opened.call_tool("ask", {})
    finally:
        await opened.aclose()
    assert json.loads(_text(result)) == expected
    assert asked[0].server_name == "tests"
    assert asked[0].tool_name == "ask"
    assert asked[0].message == "Tell me"
    assert asked[0].requested_schema["required"] == ["name"]


async def test_headless_elicitation_accepts_the_defaults(session: McpSession) -> None:
    result = json.loads(_text(await session.call_tool("ask", {})))
    assert result == {"action": "accept", "content": {"color": "green", "count": 2, "name": "Ada"}}


async def test_headless_elicitation_declines_a_required_field_without_default(session: McpSession) -> None:
    result = json.loads(_text(await session.call_tool("ask_required", {})))
    assert result == {"action": "decline", "content": None}


async def test_a_failing_handler_answers_cancel(sdk: Served) -> None:
    async def broken(request: ElicitationRequest) -> ElicitationAnswer:
        raise RuntimeError("the window is gone")

    opened = _session(sdk.url, elicitation=broken)
    await opened.open()
    try:
        result = json.loads(_text(await opened.call_tool("ask", {})))
    finally:
        await opened.aclose()
    assert result["action"] == "cancel"


async def test_a_per_call_handler_overrides_the_sessions(session: McpSession) -> None:
    async def decline(request: ElicitationRequest) -> ElicitationAnswer:
        return ElicitationAnswer("decline")

    result = json.loads(_text(await session.call_tool("ask", {}, elicitation=decline)))
    assert result["action"] == "decline"


async def test_a_form_still_open_when_the_call_ends_is_withdrawn(session: McpSession, sdk: Served) -> None:
    opened = asyncio.Event()
    withdrawn = asyncio.Event()

    async def slow_user(request: ElicitationRequest) -> ElicitationAnswer:
        opened.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            withdrawn.set()
            raise
        return ElicitationAnswer("cancel")

    call = asyncio.create_task(session.call_tool("ask", {}, elicitation=slow_user))
    async with asyncio.timeout(10):
        await opened.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    async with asyncio.timeout(10):
        await withdrawn.wait()
    assert await eventually(lambda: len(sdk.log.cancelled) == 1)


# ---------------------------------------------------------------------- limits


async def test_a_response_over_10_mb_is_aborted_and_the_session_goes_on(
    session: McpSession, sdk: Served
) -> None:
    with pytest.raises(McpResponseTooLarge, match="10 MB"):
        await session.call_tool("big", {"size": 11 * 2**20})
    assert _text(await session.call_tool("echo", {"text": "after"})) == "after"
    assert await eventually(lambda: len(sdk.log.cancelled) == 1)


async def test_the_cap_applies_to_a_json_answer_too() -> None:
    app, _ = sdk_server(json_response=True)
    with ServerThread(app) as server:
        opened = _session(server.url, max_response_bytes=64 * 1024)
        await opened.open()
        try:
            assert _text(await opened.call_tool("big", {"size": 1000})) == "x" * 1000
            with pytest.raises(McpResponseTooLarge):
                await opened.call_tool("big", {"size": 100_000})
        finally:
            await opened.aclose()


async def test_a_hanging_server_times_out_and_is_told_the_call_is_cancelled(
    edge: Callable[..., Served],
) -> None:
    served = edge(hang=True)
    opened = _session(served.url, call_timeout_s=0.5)
    await opened.open()
    try:
        started = time.monotonic()
        with pytest.raises(McpTimeout, match="tools/call"):
            await opened.call_tool("echo", {"text": "?"})
        assert time.monotonic() - started < 5
    finally:
        await opened.aclose()
    assert len(served.log.cancelled) == 1


async def test_cancelling_the_awaiting_task_sends_notifications_cancelled(
    session: McpSession, sdk: Served
) -> None:
    call = asyncio.create_task(session.call_tool("slow", {"seconds": 30}))
    assert await eventually(lambda: "tools/call" in sdk.log.methods)
    await asyncio.sleep(0.1)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await eventually(lambda: len(sdk.log.cancelled) == 1)
    assert isinstance(sdk.log.cancelled[0], int)


# ---------------------------------------------------------------------- URLs and TLS


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/mcp",
        "http://10.0.0.1/mcp",
        "http://127.0.0.1.example.com/mcp",
        "http://user:secret@127.0.0.1/mcp",
        "ftp://127.0.0.1/mcp",
        "http://127.0.0.1\\@example.com/",
    ],
)
def test_plain_http_off_loopback_is_refused_even_with_the_opt_in(url: str) -> None:
    with pytest.raises(McpInsecureUrl):
        McpSession("tests", url, allow_insecure_loopback=True)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/mcp", "http://localhost/", "http://[::1]:9/mcp"])
def test_plain_http_to_loopback_needs_the_opt_in(url: str) -> None:
    with pytest.raises(McpInsecureUrl, match="allowInsecureLoopback"):
        McpSession("tests", url)
    McpSession("tests", url, allow_insecure_loopback=True)


def test_https_is_accepted() -> None:
    McpSession("tests", "https://mcp.example.com/v1/mcp")
    McpSession("tests", "https://mcp.example.com")


async def test_a_refused_connection_is_a_transport_error() -> None:
    with ServerThread(sdk_server()[0]) as server:
        url = server.url
    opened = _session(url)
    with pytest.raises(McpTransportError, match="Could not reach"):
        await opened.open()


# ---------------------------------------------------------------------- the edges of the transport


async def test_root_path_json_answers_200_to_a_notification_and_405_to_get(
    edge: Callable[..., Served],
) -> None:
    served = edge(notification_status=200, notification_body=b'{"ok": true}', get_status=405)
    root = served.url.rstrip("/")  # the endpoint is the root: with or without the slash
    opened = _session(root)
    await opened.open()
    try:
        assert [tool["name"] for tool in await opened.list_tools()] == ["echo"]
        assert _text(await opened.call_tool("echo", {"text": "json"})) == "json"
    finally:
        await opened.aclose()
    assert any(h["method"] == "GET" for h in served.log.headers)
    assert served.log.deletes == ["edge-session"]


async def test_sse_answers_from_the_hand_written_server(edge: Callable[..., Served]) -> None:
    served = edge(sse_answers=True, get_status=400)
    opened = _session(served.url)
    await opened.open()
    try:
        assert _text(await opened.call_tool("echo", {"text": "sse"})) == "sse"
    finally:
        await opened.aclose()


async def test_a_server_without_sessions_gets_no_session_header_and_no_delete(
    edge: Callable[..., Served],
) -> None:
    served = edge(session_id=None)
    opened = _session(served.url)
    await opened.open()
    await opened.ping()
    await opened.aclose()
    assert all("mcp-session-id" not in h for h in served.log.headers)
    assert served.log.deletes == []


async def test_a_notification_refused_with_an_error_status_fails_open(edge: Callable[..., Served]) -> None:
    served = edge(notification_status=400)
    opened = _session(served.url)
    with pytest.raises(McpTransportError, match="HTTP 400"):
        await opened.open()


async def test_401_that_auth_cannot_fix_is_an_authorization_error(edge: Callable[..., Served]) -> None:
    served = edge(refuse=401)
    opened = _session(served.url)
    with pytest.raises(McpAuthorizationError, match=r"401.*the token expired"):
        await opened.open()


async def test_a_redirect_is_not_followed(edge: Callable[..., Served]) -> None:
    served = edge(refuse=307)
    opened = _session(served.url)
    with pytest.raises(McpTransportError, match="redirect"):
        await opened.open()
