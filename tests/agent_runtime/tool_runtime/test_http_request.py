"""HttpRequest (seed 003 §4.5) against a real HTTP server on loopback."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote

import pytest

from agent_runtime.tool_runtime import LocalToolRouter
from contracts.enums import ArtifactType
from contracts.errors import ErrorCode
from contracts.tools import ToolScope
from tests.agent_runtime.tool_runtime.support import (
    FakeResolver,
    LocalHTTPServer,
    call,
    failed_with,
    ok,
    self_signed_context,
)


@pytest.fixture
def resolver() -> FakeResolver:
    return FakeResolver(
        {
            "public.test": [["127.0.0.1"]],
            "private.test": [["10.20.30.40"]],
            "rebind.test": [["127.0.0.1"], ["192.168.0.10"]],
        }
    )


@pytest.fixture
async def http(workspace: Path, spool_dir: Path, resolver: FakeResolver) -> AsyncIterator[LocalToolRouter]:
    # Loopback admitted explicitly, so the local test server stands in for a public one.
    tools = LocalToolRouter(
        workspace_root=workspace, spool_dir=spool_dir, allow_loopback_http=True, resolver=resolver
    )
    yield tools
    await tools.aclose()


async def test_a_get_returns_status_headers_and_body(
    http: LocalToolRouter, http_server: LocalHTTPServer
) -> None:
    text = ok(await http.execute(call("HttpRequest", url=http_server.url("/hello"))))
    assert text == ("HTTP 200 OK\nContent-Type: text/plain\nContent-Length: 26\n\nhello from the test server")


async def test_method_headers_and_body_are_sent(http: LocalToolRouter, http_server: LocalHTTPServer) -> None:
    text = ok(
        await http.execute(
            call(
                "HttpRequest",
                url=http_server.url("/echo"),
                method="post",
                headers={"X-Trace": "abc"},
                body="é=1",
            )
        )
    )
    echoed = json.loads(text.split("\n\n", 1)[1])
    assert echoed["method"] == "POST"
    assert echoed["headers"]["X-Trace"] == "abc"
    assert echoed["body"] == "é=1"


async def test_a_head_request_has_no_body(http: LocalToolRouter, http_server: LocalHTTPServer) -> None:
    text = ok(await http.execute(call("HttpRequest", url=http_server.url("/hello"), method="HEAD")))
    assert text == "HTTP 200 OK\nContent-Type: text/plain\nContent-Length: 0\n"


async def test_an_error_status_is_a_result_not_a_failure(
    http: LocalToolRouter, http_server: LocalHTTPServer
) -> None:
    text = ok(await http.execute(call("HttpRequest", url=http_server.url("/status?code=503"))))
    assert text.startswith("HTTP 503 Service Unavailable\n")


async def test_a_name_is_resolved_once_and_the_vetted_address_is_used(
    http: LocalToolRouter, http_server: LocalHTTPServer, resolver: FakeResolver
) -> None:
    ok(await http.execute(call("HttpRequest", url=http_server.url("/hello", host="public.test"))))
    assert resolver.asked == ["public.test"]
    assert http_server.requests[0]["headers"]["Host"] == f"public.test:{http_server.port}"


async def test_redirects_are_followed_up_to_five_hops(
    http: LocalToolRouter, http_server: LocalHTTPServer
) -> None:
    text = ok(await http.execute(call("HttpRequest", url=http_server.url("/chain/5"))))
    assert text.endswith("\n\narrived")
    assert len(http_server.requests) == 6


async def test_a_sixth_redirect_fails(http: LocalToolRouter, http_server: LocalHTTPServer) -> None:
    result = await http.execute(call("HttpRequest", url=http_server.url("/chain/6")))
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_FAILED)
    assert result.error is not None
    assert result.error.message.startswith("Too many redirects: more than 5")
    assert len(http_server.requests) == 6


@pytest.mark.parametrize(
    "location",
    [
        "http://10.0.0.1/admin",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:127.0.0.1]/",
        "http://0x0a000001/",
        "http://private.test/",
    ],
)
async def test_a_redirect_to_a_private_address_is_refused(
    http: LocalToolRouter, http_server: LocalHTTPServer, location: str
) -> None:
    result = await http.execute(call("HttpRequest", url=http_server.url(f"/to?location={location}")))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert "refused" in result.error.message.lower()
    assert len(http_server.requests) == 1


@pytest.mark.parametrize("location", ["file:///etc/passwd", "ftp://example.test/", "gopher://x.test/"])
async def test_a_redirect_to_another_scheme_is_refused(
    http: LocalToolRouter, http_server: LocalHTTPServer, location: str
) -> None:
    result = await http.execute(call("HttpRequest", url=http_server.url(f"/to?location={location}")))
    assert result.error is not None
    assert result.error.code in (ErrorCode.INVALID_REQUEST, ErrorCode.TOOL_EXECUTION_FAILED)
    assert len(http_server.requests) == 1


# The authority "127.0.0.1\\@public.test" is read as host public.test by httpx but as host 127.0.0.1 by
# WHATWG parsers (browsers); the policy's URL parser refuses it, so the tool must too — even when, as
# here, both readings would reach the local test server.
AMBIGUOUS_AUTHORITIES = ["127.0.0.1\\@public.test", "user:secret@public.test", "127.0.0.1@public.test"]


@pytest.mark.parametrize("authority", AMBIGUOUS_AUTHORITIES)
async def test_a_url_whose_authority_holds_a_backslash_or_userinfo_is_refused(
    http: LocalToolRouter, http_server: LocalHTTPServer, authority: str
) -> None:
    result = await http.execute(call("HttpRequest", url=f"http://{authority}:{http_server.port}/hello"))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert result.error.message.startswith("arguments.url refused: ")
    assert "backslash" in result.error.message or "credentials" in result.error.message
    assert http_server.requests == []


@pytest.mark.parametrize("authority", AMBIGUOUS_AUTHORITIES)
async def test_a_redirect_whose_authority_holds_a_backslash_or_userinfo_is_refused(
    http: LocalToolRouter, http_server: LocalHTTPServer, authority: str
) -> None:
    location = quote(f"http://{authority}:{http_server.port}/hello", safe="")
    result = await http.execute(call("HttpRequest", url=http_server.url(f"/to?location={location}")))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert result.error.message.startswith("redirect 1 to ")
    assert "backslash" in result.error.message or "credentials" in result.error.message
    assert len(http_server.requests) == 1


async def test_a_redirected_result_names_the_final_url(
    http: LocalToolRouter, http_server: LocalHTTPServer
) -> None:
    text = ok(await http.execute(call("HttpRequest", url=http_server.url("/chain/2"))))
    assert text.startswith(f"HTTP 200 OK\nFinal URL: {http_server.url('/chain/0')} (after 2 redirects)\n")


@pytest.mark.parametrize(
    ("code", "method", "body"),
    [
        (301, "GET", ""),  # a POST answered 301 or 302 is repeated as a GET, as browsers do
        (302, "GET", ""),
        (303, "GET", ""),  # 303 See Other: always GET
        (307, "POST", "payload"),  # 307 and 308 keep the method and the body
        (308, "POST", "payload"),
    ],
)
async def test_redirects_keep_the_methods_each_status_asks_for(
    http: LocalToolRouter, http_server: LocalHTTPServer, code: int, method: str, body: str
) -> None:
    url = http_server.url(f"/to?code={code}&location=/echo")
    text = ok(await http.execute(call("HttpRequest", url=url, method="POST", body="payload")))
    echoed = json.loads(text.split("\n\n", 1)[1])
    assert (echoed["method"], echoed["body"]) == (method, body)


async def test_dns_rebinding_between_hops_is_caught(
    http: LocalToolRouter, http_server: LocalHTTPServer, resolver: FakeResolver
) -> None:
    # First answer loopback (admitted here), the second — for the redirect's new connection — private.
    url = http_server.url("/chain/1", host="rebind.test")
    result = await http.execute(call("HttpRequest", url=url))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert "192.168.0.10" in result.error.message
    assert resolver.asked == ["rebind.test", "rebind.test"]
    assert len(http_server.requests) == 1


async def test_a_slow_response_times_out(http: LocalToolRouter, http_server: LocalHTTPServer) -> None:
    result = await http.execute(call("HttpRequest", url=http_server.url("/slow"), timeout=1))
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_TIMEOUT)
    assert result.error is not None
    assert result.error.message == "HTTP request timed out after 1 second"


async def test_a_dripping_body_is_cut_by_the_overall_timeout(
    http: LocalToolRouter, http_server: LocalHTTPServer
) -> None:
    # Each byte arrives well within any read timeout; only a deadline for the whole exchange ends it.
    result = await http.execute(call("HttpRequest", url=http_server.url("/drip"), timeout=1))
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_TIMEOUT)


async def test_an_endless_body_is_aborted_past_10_mb(
    http: LocalToolRouter, http_server: LocalHTTPServer
) -> None:
    result = await http.execute(call("HttpRequest", url=http_server.url("/endless")))
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_FAILED)
    assert result.error is not None
    assert "larger than 10485760 bytes" in result.error.message


async def test_a_compression_bomb_is_aborted_past_10_mb_decoded(
    http: LocalToolRouter, http_server: LocalHTTPServer
) -> None:
    result = await http.execute(call("HttpRequest", url=http_server.url("/bomb")))
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_FAILED)


async def test_a_body_over_10kb_is_a_tool_output_artifact_and_truncated(
    http: LocalToolRouter, http_server: LocalHTTPServer
) -> None:
    result = await http.execute(
        call("HttpRequest", scope=ToolScope(max_output_bytes=2000), url=http_server.url("/size?bytes=50000"))
    )
    text = ok(result)
    assert "Content-Length: 50000\n" in text
    assert "[... truncated 48000 bytes ...]" in text
    (artifact,) = result.artifacts
    assert artifact.artifact_type is ArtifactType.TOOL_OUTPUT
    assert artifact.data_path is not None
    assert Path(artifact.data_path).stat().st_size == 50000


async def test_a_binary_body_is_described(http: LocalToolRouter, http_server: LocalHTTPServer) -> None:
    text = ok(await http.execute(call("HttpRequest", url=http_server.url("/binary"))))
    assert text.endswith("\n\n[binary body, 272 bytes]")


async def test_the_declared_charset_decodes_the_body(
    http: LocalToolRouter, http_server: LocalHTTPServer
) -> None:
    assert ok(await http.execute(call("HttpRequest", url=http_server.url("/latin1")))).endswith("café crème")


async def test_a_refused_connection_is_tool_execution_failed(http: LocalToolRouter) -> None:
    with LocalHTTPServer() as server:
        url = server.url("/hello")
    result = await http.execute(call("HttpRequest", url=url))
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_FAILED)
    assert result.error is not None
    assert result.error.message.startswith("Could not connect to 127.0.0.1:")


async def test_an_unknown_host_is_tool_execution_failed(http: LocalToolRouter) -> None:
    result = await http.execute(call("HttpRequest", url="http://unknown.test/"))
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_FAILED)
    assert result.error is not None
    assert result.error.message == "Could not resolve host unknown.test"


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("file:///etc/passwd", "must use http or https"),
        ("ftp://example.test/x", "must use http or https"),
        ("javascript:alert(1)", "must use http or https"),
        ("example.test/path", "must use http or https"),
        ("http://", "has no host"),
        ("http://exa mple.test/", "is not a valid URL"),
        ("http://example.test:99999/", "is not a valid URL"),
        ("http://[::1/", "is not a valid URL"),
    ],
)
async def test_bad_urls_are_invalid_request(http: LocalToolRouter, url: str, problem: str) -> None:
    result = await http.execute(call("HttpRequest", url=url))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert result.error.message.startswith("arguments.url")
    assert problem in result.error.message


async def test_cookies_do_not_leak_between_calls(http: LocalToolRouter, http_server: LocalHTTPServer) -> None:
    ok(await http.execute(call("HttpRequest", url=http_server.url("/echo"))))
    ok(await http.execute(call("HttpRequest", url=http_server.url("/echo"))))
    assert all("Cookie" not in request["headers"] for request in http_server.requests)


async def test_proxy_settings_in_the_environment_are_ignored(
    workspace: Path, http_server: LocalHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://10.9.9.9:3128")
    monkeypatch.setenv("ALL_PROXY", "http://10.9.9.9:3128")
    tools = LocalToolRouter(workspace_root=workspace, allow_loopback_http=True)
    try:
        ok(await tools.execute(call("HttpRequest", url=http_server.url("/hello"))))
    finally:
        await tools.aclose()


async def test_tls_certificates_are_verified(http: LocalToolRouter, tmp_path: Path) -> None:
    with LocalHTTPServer(tls=self_signed_context(tmp_path)) as server:
        result = await http.execute(call("HttpRequest", url=f"https://127.0.0.1:{server.port}/hello"))
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_FAILED)
    assert result.error is not None
    assert result.error.message.startswith("Could not connect to 127.0.0.1:")
