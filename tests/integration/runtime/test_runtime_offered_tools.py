"""The tools offered to the model follow the task's options: a task run with ``allowNetwork: false``
is not offered ``HttpRequest`` (every call of it would be denied), one with network access is (seed 000
§5.2 "tools of the granted capabilities", §8.2 the task's ``allowNetwork``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_runtime.scripted_gateway import ScriptedGateway
from tests.integration.runtime.harness import Backend, Launch, open_session

LOCAL_TOOLS = {"ReadFile", "WriteFile", "DeleteFile", "RunCommand"}


def offered(body: dict[str, Any]) -> set[str]:
    """The tool names of one recorded request (Anthropic dialect: ``tools[].name``)."""
    return {tool["name"] for tool in body.get("tools", [])}


@pytest.mark.parametrize(
    ("allow_network", "http_offered"),
    [(False, False), (True, True)],
    ids=["network-off", "network-on"],
)
async def test_http_request_is_offered_only_to_tasks_that_may_use_the_network(
    launch: Launch, backend: Backend, workspace: Path, allow_network: bool, http_offered: bool
) -> None:
    async with ScriptedGateway([{"text": "Nothing to fetch."}]) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        end = await rt.run_task("Look it up", allowNetwork=allow_network)
        gateway.assert_done()
        (request,) = gateway.requests

    assert end["eventType"] == "task_completed", end
    tools = offered(request.body)
    assert ("HttpRequest" in tools) is http_offered, tools
    # Only the network tool depends on the option: the local ones are offered either way.
    assert tools >= LOCAL_TOOLS, tools


async def test_the_next_task_with_network_is_offered_http_request_again(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    """The offer is per task: a session whose first task ran offline offers the tool to the next one."""
    async with ScriptedGateway([{"text": "Offline."}, {"text": "Online."}]) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        assert (await rt.run_task("First", allowNetwork=False))["eventType"] == "task_completed"
        assert (await rt.run_task("Second", task_id="task_2"))["eventType"] == "task_completed"
        gateway.assert_done()
        first, second = (offered(request.body) for request in gateway.requests)

    assert "HttpRequest" not in first
    assert "HttpRequest" in second
