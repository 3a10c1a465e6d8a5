"""The Backend Tool Service over real HTTP (uvicorn on 127.0.0.1) on the real backend with the local
store: which tools a tenant's policy allows, WorkspaceSearch over what the Workspace Service stored,
WebFetch of a loopback page, and every refusal in the seed's error shape."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from backend.common.auth import TokenIssuer
from backend.common.settings import Settings
from backend.policy.config import PolicyDirectory, builtin_policy
from backend.storage.local import open_local_stores
from backend.storage.memory import open_memory_stores
from contracts.enums import ToolStatus
from contracts.errors import ErrorCode
from contracts.tools import ToolResult
from tests.backend.conftest import AppFactory
from tests.backend.helpers import (
    PROJECT,
    BackendClient,
    history,
    listening_socket,
    serving,
    upload_body,
    url_of,
)
from tests.backend.tools.pages import Page, PageServer, serving_pages

BOTH = ["WebFetch", "WorkspaceSearch"]


def _tenant_policy(config: Path, tenant: str, grant: dict[str, Any] | None) -> None:
    capabilities: list[dict[str, Any]] = [{"name": "File.Read"}, {"name": "Workspace.Upload"}]
    if grant is not None:
        capabilities.append({"name": "BackendTool.Invoke", **grant})
    (config / "tenants" / f"{tenant}.json").write_text(json.dumps({"capabilities": capabilities}))


@pytest.fixture
def config(tmp_path: Path) -> Path:
    directory = tmp_path / "config"
    (directory / "tenants").mkdir(parents=True)
    _tenant_policy(directory, "acme", {"allowedToolNames": ["WorkspaceSearch", "WebFetch"]})
    _tenant_policy(directory, "globex", {"allowedToolNames": ["WorkspaceSearch"]})
    _tenant_policy(directory, "umbrella", {})  # a grant without a list: every tool
    _tenant_policy(directory, "initech", None)  # no grant: no backend tool
    return directory  # hooli: the built-in policy, which grants both


def _app(make_app: AppFactory, tmp_path: Path, config: Path, **settings: Any) -> Any:
    stores = open_local_stores(tmp_path / "data")
    return make_app(
        stores=stores,
        settings=Settings(**settings),
        policies=PolicyDirectory(config, builtin_policy()),
    ), stores


@pytest.fixture
async def api(
    make_app: AppFactory, tmp_path: Path, config: Path, issuer: TokenIssuer
) -> AsyncIterator[BackendClient]:
    app, stores = _app(make_app, tmp_path, config, web_fetch_allow_loopback=True)
    try:
        with serving(app) as url:
            async with httpx.AsyncClient(base_url=url, timeout=30) as http:
                yield BackendClient(http, issuer, app)
    finally:
        stores.close()


@pytest.fixture
def pages() -> Iterator[PageServer]:
    with serving_pages() as server:
        yield server


def invocation(session: dict[str, Any], arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "sessionId": session["sessionId"],
        "taskId": "task_7",
        "stepId": "step_3",
        "toolCallId": "call_1",
        "arguments": arguments,
        **extra,
    }


async def invoke(api: BackendClient, tool: str, body: dict[str, Any], tenant: str = "acme") -> httpx.Response:
    return await api.call("POST", f"/tools/{tool}/invoke", json=body, tenant=tenant)


async def result_of(api: BackendClient, tool: str, body: dict[str, Any], tenant: str = "acme") -> ToolResult:
    response = await invoke(api, tool, body, tenant)
    assert response.status_code == 200, response.text
    return ToolResult.model_validate_json(response.content)


async def _upload_history(api: BackendClient, session: dict[str, Any], texts: list[str], tenant: str) -> None:
    ws, sess = session["workspaceId"], session["sessionId"]
    document = json.loads(history(ws, sess, "2026-03-02T09:00:00Z"))
    document["messages"] = [
        {**document["messages"][0], "messageId": f"msg_{index}", "content": text, "role": role}
        for index, (text, role) in enumerate(zip(texts, ["user", "assistant"] * len(texts), strict=False))
    ]
    body = upload_body(
        ws,
        sess,
        json.dumps(document).encode(),
        artifact_type="session_history",
        name="session_history.json",
        task_id=None,
        step_id=None,
        content_type="application/json",
    )
    response = await api.call("POST", f"/workspaces/{ws}/artifacts", json=body, tenant=tenant)
    assert response.status_code == 201, response.text


async def test_the_tools_listed_are_those_the_tenants_policy_allows(api: BackendClient) -> None:
    async def names(tenant: str) -> list[str]:
        response = await api.call("GET", "/tools", tenant=tenant)
        assert response.status_code == 200, response.text
        return [tool["toolName"] for tool in response.json()["tools"]]

    assert await names("acme") == BOTH
    assert await names("globex") == ["WorkspaceSearch"]
    assert await names("umbrella") == BOTH
    assert await names("initech") == []
    assert await names("hooli") == BOTH
    tools = {tool["toolName"]: tool for tool in (await api.call("GET", "/tools")).json()["tools"]}
    schema = tools["WorkspaceSearch"]["inputSchema"]
    assert schema["required"] == ["query"]
    assert set(schema["properties"]) == {"query", "limit", "sessionId"}
    assert schema["additionalProperties"] is False
    assert "title" not in schema
    assert set(tools["WebFetch"]["inputSchema"]["properties"]) == {"url", "maxChars", "timeoutSeconds"}
    assert (await api.http.get("/tools")).status_code == 401


async def test_workspace_search_recalls_earlier_conversations_and_artifacts(api: BackendClient) -> None:
    earlier = await api.session([PROJECT])
    await _upload_history(
        api,
        earlier,
        ["Why does the nightly backup fail?", "The backup script runs out of disk on /var"],
        "acme",
    )
    report = upload_body(
        earlier["workspaceId"], earlier["sessionId"], b"df -h\n/var 100% full, backup aborted\n"
    )
    assert (
        await api.call("POST", f"/workspaces/{earlier['workspaceId']}/artifacts", json=report)
    ).status_code == 201
    now = await api.session([PROJECT])  # the same project: the same workspace
    assert now["workspaceId"] == earlier["workspaceId"]

    result = await result_of(api, "WorkspaceSearch", invocation(now, {"query": "backup disk"}))
    assert result.status is ToolStatus.SUCCEEDED
    assert (result.tool_name, result.task_id, result.step_id, result.tool_call_id) == (
        "WorkspaceSearch",
        "task_7",
        "step_3",
        "call_1",
    )
    text = result.output_text or ""
    assert text.startswith('3 results for "backup disk" in this workspace, best first:')
    assert "1. assistant message msg_1 · session " + earlier["sessionId"] in text
    assert "**disk**" in text
    assert 'artifact "output.txt"' in text

    listing = await api.call(
        "GET", f"/workspaces/{now['workspaceId']}/search", params={"query": "backup", "limit": "1"}
    )
    assert listing.status_code == 200, listing.text
    (hit,) = listing.json()["results"]
    assert hit["sessionId"] == earlier["sessionId"]
    assert hit["artifactUri"].startswith(f"cowork://workspaces/{now['workspaceId']}/artifacts/")

    only = await result_of(
        api, "WorkspaceSearch", invocation(now, {"query": "backup", "sessionId": now["sessionId"]})
    )
    assert (only.output_text or "").startswith(f'No results for "backup" in session {now["sessionId"]}')
    wordless = await result_of(api, "WorkspaceSearch", invocation(now, {"query": "?!"}))
    assert wordless.status is ToolStatus.FAILED
    assert wordless.error is not None
    assert wordless.error.code is ErrorCode.INVALID_REQUEST


async def test_another_tenants_session_and_workspace_stay_out_of_reach(api: BackendClient) -> None:
    mine = await api.session([PROJECT])
    await _upload_history(api, mine, ["the launch code is swordfish"], "acme")
    theirs = await api.session([PROJECT], tenant="globex")
    await _upload_history(api, theirs, ["globex notes on swordfish recipes"], "globex")

    # Their search, in their own session, finds only theirs.
    result = await result_of(
        api, "WorkspaceSearch", invocation(theirs, {"query": "swordfish launch"}), "globex"
    )
    assert "launch code" not in (result.output_text or "")
    assert "recipes" in (result.output_text or "")
    # My session ID in their hands, or my workspace's search route, is "no such thing".
    foreign = await invoke(api, "WorkspaceSearch", invocation(mine, {"query": "swordfish"}), "globex")
    assert (foreign.status_code, foreign.json()["code"]) == (404, ErrorCode.SESSION_NOT_FOUND)
    route = await api.call(
        "GET", f"/workspaces/{mine['workspaceId']}/search?query=swordfish", tenant="globex"
    )
    assert route.status_code == 404
    # Another user of my own tenant: not their session either.
    same_tenant = await invoke(api, "WorkspaceSearch", invocation(mine, {"query": "swordfish"}), "acme")
    assert same_tenant.status_code == 200
    other_user = await api.call(
        "POST", "/tools/WorkspaceSearch/invoke", json=invocation(mine, {"query": "x"}), user="bob"
    )
    assert (other_user.status_code, other_user.json()["code"]) == (404, ErrorCode.SESSION_NOT_FOUND)


async def test_a_tool_the_policy_does_not_allow_is_refused_with_403(api: BackendClient, config: Path) -> None:
    theirs = await api.session([PROJECT], tenant="globex")
    response = await invoke(api, "WebFetch", invocation(theirs, {"url": "http://127.0.0.1/"}), "globex")
    assert response.status_code == 403
    assert response.json() == {
        "code": "CAPABILITY_DENIED",
        "message": "WebFetch is not allowed by this tenant's policy",
        "retryable": False,
        "details": {"capability": "BackendTool.Invoke", "toolName": "WebFetch"},
    }
    initech = await api.session([PROJECT], tenant="initech")
    refused = await invoke(api, "WorkspaceSearch", invocation(initech, {"query": "x"}), "initech")
    assert (refused.status_code, refused.json()["code"]) == (403, ErrorCode.CAPABILITY_DENIED)

    # The tenant's current policy decides each call: withdrawn, refused from the next call on.
    assert (
        await invoke(api, "WorkspaceSearch", invocation(theirs, {"query": "x"}), "globex")
    ).status_code == 200
    _tenant_policy(config, "globex", {"allowedToolNames": []})
    # The policy directory looks at its files at most once a second.
    deadline = time.monotonic() + 10
    while True:
        withdrawn = await invoke(api, "WorkspaceSearch", invocation(theirs, {"query": "x"}), "globex")
        if withdrawn.status_code != 200 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    assert (withdrawn.status_code, withdrawn.json()["code"]) == (403, ErrorCode.CAPABILITY_DENIED)


async def test_an_unknown_tool_is_404(api: BackendClient) -> None:
    session = await api.session([PROJECT])
    response = await invoke(api, "Teleport", invocation(session, {}))
    assert (response.status_code, response.json()["code"]) == (404, ErrorCode.TOOL_NOT_FOUND)
    assert response.json()["details"] == {"toolName": "Teleport"}


@pytest.mark.parametrize(
    ("arguments", "field", "message"),
    [
        ({}, "arguments.query", "arguments.query is required"),
        ({"query": ""}, "arguments.query", "arguments.query must not be empty"),
        ({"query": "x", "limit": 0}, "arguments.limit", "arguments.limit must be at least 1"),
        ({"query": "x", "limit": "5"}, "arguments.limit", "arguments.limit must be an integer"),
        ({"query": "x", "limit": 51}, "arguments.limit", "arguments.limit must be at most 50"),
        ({"query": "x", "path": "/etc"}, "arguments.path", "arguments.path is not a known field"),
        ({"query": 42}, "arguments.query", "arguments.query must be a string"),
    ],
)
async def test_arguments_that_do_not_fit_the_schema_are_400_in_the_seeds_shape(
    api: BackendClient, arguments: dict[str, Any], field: str, message: str
) -> None:
    session = await api.session([PROJECT])
    response = await invoke(api, "WorkspaceSearch", invocation(session, arguments))
    assert response.status_code == 400
    shape = response.json()
    assert set(shape) == {"code", "message", "retryable", "details"}
    assert (shape["code"], shape["message"], shape["retryable"]) == ("INVALID_REQUEST", message, False)
    assert shape["details"]["field"] == field


async def test_a_malformed_request_body_is_400(api: BackendClient) -> None:
    session = await api.session([PROJECT])
    no_session = {
        key: value for key, value in invocation(session, {"query": "x"}).items() if key != "sessionId"
    }
    response = await invoke(api, "WorkspaceSearch", no_session)
    assert (response.status_code, response.json()["message"]) == (400, "sessionId is required")
    raw = await api.call(
        "POST", "/tools/WorkspaceSearch/invoke", content=b"{", headers={"Content-Type": "application/json"}
    )
    assert (raw.status_code, raw.json()["code"]) == (400, "INVALID_REQUEST")


async def test_web_fetch_reads_a_loopback_page_as_markdown(api: BackendClient, pages: PageServer) -> None:
    url = pages.add("/doc", Page(b"<title>Doc</title><h2>Install</h2><p>Run <code>make</code>.</p>"))
    session = await api.session([PROJECT])
    result = await result_of(api, "WebFetch", invocation(session, {"url": url}))
    assert result.status is ToolStatus.SUCCEEDED
    assert result.output_text == f"# Doc\n\nSource: {url}\n\n## Install\n\nRun `make`."


async def test_without_the_development_setting_loopback_stays_refused(
    make_app: AppFactory, tmp_path: Path, config: Path, issuer: TokenIssuer, pages: PageServer
) -> None:
    app, stores = _app(make_app, tmp_path, config)
    url = pages.add("/doc", Page(b"<p>internal</p>"))
    try:
        with serving(app) as base:
            async with httpx.AsyncClient(base_url=base, timeout=30) as http:
                api = BackendClient(http, issuer, app)
                session = await api.session([PROJECT])
                result = await result_of(api, "WebFetch", invocation(session, {"url": url}))
    finally:
        stores.close()
    assert result.status is ToolStatus.FAILED
    assert result.error is not None
    assert "loopback" in result.error.message
    assert pages.requests == []


async def test_a_slow_fetch_hits_the_services_budget_with_a_clear_failed_result(
    make_app: AppFactory, tmp_path: Path, config: Path, issuer: TokenIssuer, pages: PageServer
) -> None:
    app, stores = _app(
        make_app, tmp_path, config, web_fetch_allow_loopback=True, tool_timeout=timedelta(seconds=1)
    )
    url = pages.add("/slow", Page(b"<p>late</p>", stall_s=30))
    try:
        with serving(app) as base:
            async with httpx.AsyncClient(base_url=base, timeout=30) as http:
                api = BackendClient(http, issuer, app)
                session = await api.session([PROJECT])
                started = time.monotonic()
                result = await result_of(
                    api, "WebFetch", invocation(session, {"url": url, "timeoutSeconds": 60})
                )
                elapsed = time.monotonic() - started
    finally:
        stores.close()
    assert result.status is ToolStatus.FAILED
    assert result.error is not None
    assert result.error.code is ErrorCode.TOOL_EXECUTION_TIMEOUT
    assert result.error.message == "WebFetch did not finish within 1 second"
    assert result.output_text == result.error.message
    assert elapsed < 10


async def test_the_tool_service_alone_reaches_sessions_and_search_over_http(
    make_app: AppFactory, config: Path, issuer: TokenIssuer
) -> None:
    tools_socket, others_socket = listening_socket(), listening_socket()
    policies = PolicyDirectory(config, builtin_policy())
    tools_app = make_app(
        stores=open_memory_stores(), services=["tools"], policies=policies, peers_url=url_of(others_socket)
    )
    others_app = make_app(
        stores=open_memory_stores(), services=["session", "policy", "workspace"], policies=policies
    )
    with serving(tools_app, tools_socket) as tools_url, serving(others_app, others_socket) as others_url:
        async with (
            httpx.AsyncClient(base_url=tools_url, timeout=30) as tools_http,
            httpx.AsyncClient(base_url=others_url, timeout=30) as others_http,
        ):
            tools, others = BackendClient(tools_http, issuer), BackendClient(others_http, issuer)
            session = await others.session([PROJECT])
            await _upload_history(others, session, ["remember the blue widget"], "acme")
            result = await result_of(tools, "WorkspaceSearch", invocation(session, {"query": "widget"}))
            assert "**widget**" in (result.output_text or "")
            foreign = await invoke(tools, "WorkspaceSearch", invocation(session, {"query": "x"}), "globex")
            assert (foreign.status_code, foreign.json()["code"]) == (404, ErrorCode.SESSION_NOT_FOUND)
            # The other services' routes are not served here, and this one's not there.
            assert (await tools.call("GET", "/workspaces")).status_code == 404
            assert (await others.call("GET", "/tools")).status_code == 404
