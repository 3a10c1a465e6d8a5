"""The session checklist through the real runtime (seed 002 "Session Checklist Primitive"): the
``task_list_*`` session tools offered to a task, answered by the agent host, their events carrying the
whole checklist, and the verification nudge's reminder in the next request — once."""

from __future__ import annotations

import json
from pathlib import Path

from agent_runtime.scripted_gateway import ScriptedGateway
from tests.integration.runtime.harness import (
    Backend,
    Launch,
    open_session,
    result_text,
    tool_call,
    tool_results,
)

REMINDER = "Checklist reminder"


async def test_the_checklist_tools_events_and_nudge_through_the_runtime(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    script = [
        {
            "toolCalls": [
                tool_call(
                    "task_list_create",
                    "call_create",
                    items=[
                        {"id": "edit", "title": "Edit the config", "status": "in_progress"},
                        {"title": "Tidy up", "kind": "other"},
                    ],
                )
            ]
        },
        {
            "toolCalls": [
                tool_call(
                    "task_list_update",
                    "call_update",
                    items=[
                        {"id": "edit", "title": "Edit the config", "status": "completed"},
                        {"title": "Tidy up", "kind": "other", "status": "completed"},
                    ],
                )
            ]
        },
        {"toolCalls": [tool_call("task_list_create", "call_again", items=[{"title": "x"}])]},
        {"text": "Done."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        end = await rt.run_task("Change the config", maxSteps=10)
        gateway.assert_done()
        bodies = [request.body for request in gateway.requests]

    assert end["eventType"] == "task_completed", end
    offered = {tool["name"] for tool in bodies[0]["tools"]}
    assert {"task_list_create", "task_list_update", "task_list_list"} <= offered

    created = tool_results(bodies[1])[0]
    assert not created.get("is_error")
    items = json.loads(result_text(created))["items"]
    assert next(item["id"] for item in items) == "edit"
    assert items[1]["id"]
    assert [item["kind"] for item in items] == ["implementation", "other"]

    updated = result_text(tool_results(bodies[2])[0])
    assert json.loads(updated.split("\n\n")[0])["verificationNudgeNeeded"] is True
    assert "verification item" in updated
    # The next request carries the short reminder; the one after does not.
    assert REMINDER in json.dumps(bodies[2]["messages"])
    assert REMINDER not in json.dumps(bodies[3]["messages"])

    again = tool_results(bodies[3])[0]
    assert again.get("is_error") is True
    assert "already exists" in result_text(again)

    kinds = [e["eventType"] for e in rt.events if e["eventType"].startswith("task_list_")]
    assert kinds == ["task_list_created", "task_list_updated", "task_list_verification_nudged"]
    latest = rt.find("task_list_verification_nudged")[0]["payload"]["checklist"]
    assert [item["status"] for item in latest["items"]] == ["completed", "completed"]
    assert latest["verificationNudgeNeeded"] is True
    requested = [e for e in rt.find("tool_requested") if e["payload"]["toolName"] == "task_list_create"]
    assert requested
    assert "capability" not in requested[0]["payload"]


async def test_a_task_list_call_the_task_was_not_offered_is_an_unknown_tool(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    script = [
        {"toolCalls": [tool_call("task_list_delete", "call_x", items=[])]},
        {"text": "ok"},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        await rt.run_task("Hi", maxSteps=5)
        bodies = [request.body for request in gateway.requests]
    result = tool_results(bodies[1])[0]
    assert result.get("is_error") is True
    assert "Unknown tool" in result_text(result)
    assert not [e for e in rt.events if e["eventType"].startswith("task_list_")]
