"""The Backend Tool Service's tools through the real runtime (seed 000 §7.6, §7.4; issue "Backend Tool
Service"): discovered at session start, offered as the bundle allows, called through the policy and
its approvals, answered like a local tool with the same events.

A real ``cowork-backend serve`` whose tenant policy grants ``BackendTool.Invoke`` (and asks before every
WebFetch), a real web page on loopback, the scripted gateway driving the calls."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_runtime.scripted_gateway import ScriptedGateway
from tests.backend.tools.pages import Page, PageServer, serving_pages
from tests.integration.runtime.governed import CAPABILITIES, governed_backend, offered, policy
from tests.integration.runtime.harness import Backend, Launch, result_text, tool_call, tool_results

ARTICLE = b"""<!doctype html><html><head><title>Release notes</title></head><body>
<nav>Home | Blog</nav><article><h1>Release 4.2</h1><p>The <strong>flux capacitor</strong> now charges
in 88 seconds.</p><ul><li>Faster start</li><li>Fewer crashes</li></ul></article></body></html>"""


@pytest.fixture(scope="module")
def tools_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    document = policy(remote_tools=["WorkspaceSearch", "WebFetch"], uploads=True)
    yield from governed_backend(tmp_path_factory.mktemp("tools-backend"), document)


@pytest.fixture(scope="module")
def search_only_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    document = policy(remote_tools=["WorkspaceSearch"], uploads=True)
    yield from governed_backend(tmp_path_factory.mktemp("search-only-backend"), document)


@pytest.fixture
def pages() -> Iterator[PageServer]:
    with serving_pages({"/notes": Page(ARTICLE)}) as server:
        yield server


async def test_workspace_search_recalls_a_message_of_an_earlier_session(
    launch: Launch, tools_backend: Backend, workspace: Path
) -> None:
    async with ScriptedGateway([{"text": "Noted: the release codename is Quetzalcoatl."}]) as gateway:
        earlier = await launch(gateway.url, backend=tools_backend, label="the earlier session")
        await earlier.create_session(tools_backend, workspace, supportedCapabilities=CAPABILITIES)
        end = await earlier.run_task("Remember that the release codename is Quetzalcoatl.", timeout=60)
        assert end["eventType"] == "task_completed", end
        await earlier.shutdown()

    script = [
        {"toolCalls": [tool_call("WorkspaceSearch", "call_search", query="Quetzalcoatl")]},
        {"text": "The codename was Quetzalcoatl."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await launch(gateway.url, backend=tools_backend, label="the later session")
        await rt.create_session(tools_backend, workspace, supportedCapabilities=CAPABILITIES)
        end = await rt.run_task("What was the release codename?", timeout=60)
        gateway.assert_done()
        first, second = (request.body for request in gateway.requests)

    assert end["eventType"] == "task_completed", end
    assert {"WorkspaceSearch", "WebFetch", "ReadFile", "UploadArtifact"} <= offered(first)
    (result,) = tool_results(second)
    text = result_text(result)
    assert not result.get("is_error"), text
    assert "Quetzalcoatl" in text
    assert earlier.session_id is not None
    assert earlier.session_id in text  # the hit names the session it came from
    # The same events and durations as a local tool's.
    (requested,) = rt.find("tool_requested")
    assert requested["payload"]["toolName"] == "WorkspaceSearch"
    assert requested["payload"]["capability"] == "BackendTool.Invoke"
    (completed,) = rt.find("tool_completed")
    assert completed["payload"]["status"] == "succeeded"
    assert completed["payload"]["latencyMs"] >= 0
    assert completed["stepId"] == requested["stepId"]
    assert rt.find("approval_requested") == []  # WorkspaceSearch is not under an approval rule


async def test_web_fetch_asks_first_and_returns_the_page_as_markdown_or_nothing_when_denied(
    launch: Launch, tools_backend: Backend, workspace: Path, pages: PageServer
) -> None:
    url = pages.url + "/notes"
    script = [
        {"toolCalls": [tool_call("WebFetch", "call_fetch", url=url)]},
        {"toolCalls": [tool_call("WebFetch", "call_again", url=url + "?again")]},
        {"text": "The flux capacitor charges in 88 seconds."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await launch(gateway.url, backend=tools_backend)
        await rt.create_session(tools_backend, workspace, supportedCapabilities=CAPABILITIES)
        # "never" asks nothing of its own: the approval comes from the bundle's rule naming WebFetch.
        await rt.start_task("What changed in release 4.2?", approvalMode="never")
        asked = await rt.event("approval_requested", timeout=30)
        assert pages.requests == []  # nothing fetched before the user answered
        await rt.approve(asked["payload"]["approvalId"])
        again = await rt.event("approval_requested", count=2, timeout=30)
        await rt.approve(again["payload"]["approvalId"], "denied", reason="enough fetching")
        end = await rt.task_end("task_1", timeout=60)
        gateway.assert_done()
        _, after_fetch, after_denial = (request.body for request in gateway.requests)

    assert end["eventType"] == "task_completed", end
    request = asked["payload"]
    assert request["title"] == "Fetch a web page"
    assert request["actionSummary"] == f"Use remote tool: WebFetch on {url}"
    assert request["details"]["arguments"] == {"url": url}
    (fetched,) = tool_results(after_fetch)
    markdown = result_text(fetched)
    assert not fetched.get("is_error"), markdown
    assert "# Release 4.2" in markdown
    assert "**flux capacitor**" in markdown
    assert "<p>" not in markdown
    (denied,) = tool_results(after_denial)
    assert "enough fetching" in result_text(denied)
    assert pages.requests == ["/notes"]  # the denied fetch never reached the page
    statuses = [event["payload"]["status"] for event in rt.find("tool_completed")]
    assert statuses == ["succeeded", "denied"]


async def test_a_remote_tool_off_the_allowlist_is_never_offered_and_a_call_of_it_is_denied(
    launch: Launch, search_only_backend: Backend, workspace: Path, pages: PageServer
) -> None:
    script = [
        {"toolCalls": [tool_call("WebFetch", "call_fetch", url=pages.url + "/notes")]},
        {"text": "I cannot fetch pages here."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await launch(gateway.url, backend=search_only_backend)
        await rt.create_session(search_only_backend, workspace, supportedCapabilities=CAPABILITIES)
        end = await rt.run_task("Read the release notes", approvalMode="never", timeout=60)
        gateway.assert_done()
        first, second = (request.body for request in gateway.requests)

    assert end["eventType"] == "task_completed", end
    assert "WorkspaceSearch" in offered(first)
    assert "WebFetch" not in offered(first)
    (refused,) = tool_results(second)
    assert refused.get("is_error")
    assert "Remote tool not allowed: WebFetch" in result_text(refused)
    (completed,) = rt.find("tool_completed")
    assert completed["payload"]["status"] == "denied"
    assert completed["payload"]["error"]["code"] == "CAPABILITY_DENIED"
    assert rt.find("approval_requested") == []
    assert pages.requests == []


async def test_a_client_that_does_not_route_remote_tools_is_offered_none(
    launch: Launch, tools_backend: Backend, workspace: Path
) -> None:
    """The Session Service grants only what the client declares: no BackendTool.Invoke, no remote tools."""
    async with ScriptedGateway([{"text": "Done."}]) as gateway:
        rt = await launch(gateway.url, backend=tools_backend)
        await rt.create_session(tools_backend, workspace)  # the harness's capabilities: no BackendTool.Invoke
        end = await rt.run_task("Anything", timeout=60)
        (request,) = gateway.requests

    assert end["eventType"] == "task_completed", end
    assert not {"WorkspaceSearch", "WebFetch"} & offered(request.body)
