"""Cooperative cancellation in the real runtime (seed 000 §4.5): mid-stream the LLM call is aborted
and nothing reaches the thread; mid-tool the tool finishes; the session stays up for the next task.
"""

from __future__ import annotations

from pathlib import Path

from agent_runtime.scripted_gateway import ScriptedGateway
from tests.integration.runtime.harness import (
    Backend,
    Launch,
    held_command,
    open_session,
    start_held_command,
    tool_call,
)


async def test_cancel_mid_stream_aborts_the_call_keeps_nothing_and_a_new_task_runs(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    script = [
        {"text": "PARTIAL words that must never be kept", "chunkSize": 8, "holdAfterChunks": 2},
        {"text": "A fresh answer."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        await rt.start_task("Tell me a long story", task_id="task_1")
        await rt.event("text_chunk", count=2)
        answer = await rt.cancel("task_1")
        end = await rt.task_end("task_1")
        await gateway.wait_for(lambda: gateway.requests[0].outcome != "pending")
        first_outcome = gateway.requests[0].outcome
        state = await rt.state()

        again = await rt.run_task("Something else", task_id="task_2")
        second_request = gateway.requests[1].body
        history = await backend.session_history(rt.workspace_id or "", rt.session_id or "")

    assert answer == {"taskId": "task_1", "cancellationRequested": True}
    assert end["eventType"] == "task_cancelled"
    assert end["payload"]["reason"] == "cancelled"
    assert first_outcome == "disconnected"
    assert state["sessionStatus"] == "SESSION_RUNNING"
    assert state["task"]["taskId"] == "task_1"
    assert state["task"]["status"] == "TASK_CANCELLED"
    assert again["eventType"] == "task_completed"
    assert "PARTIAL" not in str(second_request["messages"])
    assert history is not None
    assert all("PARTIAL" not in message.content for message in history.messages)
    assert [m.content for m in history.messages if m.role.value == "assistant"] == ["A fresh answer."]


async def test_cancel_mid_tool_lets_the_tool_finish_then_ends_the_task_without_another_llm_call(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    started, go, side = workspace / "started", workspace / "go", workspace / "side.txt"
    command = held_command(started, go, then=f"echo finished > {side}")
    script = [
        {"toolCalls": [tool_call("RunCommand", "call_slow", command=command)]},
        {"text": "never asked"},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        await start_held_command(rt, "Run the slow thing", started)
        answer = await rt.cancel("task_1")
        assert rt.find("task_cancelled") == []  # not before the tool is done
        go.touch()
        end = await rt.task_end("task_1")
        played = len(gateway.requests)
        state = await rt.state()

    assert answer["cancellationRequested"] is True
    assert end["eventType"] == "task_cancelled"
    assert side.read_text() == "finished\n"
    (completed,) = rt.find("tool_completed")
    assert completed["payload"]["status"] == "succeeded"
    assert rt.events.index(completed) < rt.events.index(end)
    assert played == 1
    assert state["task"]["status"] == "TASK_CANCELLED"
    assert state["sessionStatus"] == "SESSION_RUNNING"


async def test_cancel_while_waiting_for_approval_denies_it_and_runs_nothing(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    marker = workspace / "ran.txt"
    script = [
        {"toolCalls": [tool_call("RunCommand", "call_x", command=f"echo ran > {marker}")]},
        {"text": "never asked"},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        await rt.start_task("Run it")
        asked = await rt.event("approval_requested")
        await rt.cancel("task_1")
        end = await rt.task_end("task_1")
        late = await rt.approve(asked["payload"]["approvalId"])
        played = len(gateway.requests)
    assert end["eventType"] == "task_cancelled"
    assert not marker.exists()
    assert late["accepted"] is False
    assert played == 1
