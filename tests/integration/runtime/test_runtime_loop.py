"""The agent loop of the real runtime, end to end: real backend, scripted gateway, real tools in a
temp project folder (seed 000 §4, §7, §12).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_runtime.scripted_gateway import ScriptedGateway
from tests.integration.runtime.harness import (
    Backend,
    Launch,
    Runtime,
    open_session,
    result_text,
    tool_call,
    tool_results,
)

STEP_ORDER = ["step_started", "llm_request_started", "llm_request_completed", "step_completed"]


def step_events(rt: Runtime, step_id: str) -> list[dict[str, Any]]:
    return [event for event in rt.events if event.get("stepId") == step_id]


async def test_a_multi_step_task_runs_three_tools_per_step_and_feeds_results_back_in_call_order(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("alpha\n")
    out = workspace / "out.txt"
    script = [
        {
            "text": "Let me look around.",
            "chunkSize": 5,
            "toolCalls": [
                tool_call("ReadFile", "call_read", path=str(notes)),
                tool_call("WriteFile", "call_write", path=str(out), content="beta\n"),
                tool_call("ReadFile", "call_missing", path=str(workspace / "missing.txt")),
            ],
        },
        {"toolCalls": [tool_call("ReadFile", "call_check", path=str(out))]},
        {"text": "All done."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        end = await rt.run_task("Tidy my notes", maxSteps=10)
        gateway.assert_done()
        requests = [request.body for request in gateway.requests]
        history = await backend.session_history(rt.workspace_id or "", rt.session_id or "")

    assert end["eventType"] == "task_completed", end
    assert out.read_text() == "beta\n"

    # What went back to the model: one result per call, in the order the calls were made (§4.2).
    first = tool_results(requests[1])
    assert [block["tool_use_id"] for block in first] == ["call_read", "call_write", "call_missing"]
    assert "alpha" in result_text(first[0])
    assert not first[0].get("is_error")
    assert not first[1].get("is_error")
    assert first[2].get("is_error") is True
    second = tool_results(requests[2])
    assert [block["tool_use_id"] for block in second] == ["call_check"]
    assert "beta" in result_text(second[0])

    # The events of the first step, in order, with the ID chain (§12).
    assert rt.id_chain_problems() == []
    steps = rt.find("step_started")
    assert len(steps) == 3
    assert [event["payload"].get("stepCount") for event in rt.find("step_completed")][:2] == [1, 2]
    first_step = step_events(rt, steps[0]["stepId"])
    kinds = [event["eventType"] for event in first_step]
    assert [kind for kind in kinds if kind in STEP_ORDER] == STEP_ORDER
    assert kinds.index("llm_request_completed") < kinds.index("tool_requested")
    assert kinds.index("text_chunk") < kinds.index("llm_request_completed")
    assert max(i for i, k in enumerate(kinds) if k == "tool_completed") < kinds.index("step_completed")
    text = "".join(e["payload"]["text"] for e in first_step if e["eventType"] == "text_chunk")
    assert text == "Let me look around."
    requested = {
        e["payload"]["toolCallId"]: e["payload"] for e in first_step if e["eventType"] == "tool_requested"
    }
    assert requested["call_write"]["toolName"] == "WriteFile"
    assert requested["call_write"]["capability"] == "File.Write"
    assert requested["call_write"]["target"] == str(out)
    completed = {
        e["payload"]["toolCallId"]: e["payload"] for e in first_step if e["eventType"] == "tool_completed"
    }
    assert {k: v["status"] for k, v in completed.items()} == {
        "call_read": "succeeded",
        "call_write": "succeeded",
        "call_missing": "failed",
    }
    assert completed["call_missing"]["error"]["code"] == "FILE_NOT_FOUND"
    assert all(event["taskId"] == "task_1" for event in first_step)
    assert end["payload"]["stepCount"] in (2, 3)

    # The session history in the Workspace Service holds the whole thread (seed 004).
    assert history is not None
    assert history.snapshot_after_task_id == "task_1"
    roles = [message.role.value for message in history.messages if message.role.value != "system"]
    assert roles == ["user", "assistant", "tool", "tool", "tool", "assistant", "tool", "assistant"]
    statuses = [m.tool_status.value for m in history.messages if m.tool_status is not None]
    assert statuses == ["succeeded", "succeeded", "failed", "succeeded"]


async def test_tools_of_one_step_run_in_parallel_and_approvals_wait_independently(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    # Each command marks its arrival and waits (bounded) for the other two: run one after the other,
    # the first would give up and fail. RunCommand needs approval under the default policy, so this
    # also shows three approval requests pending at once (§4.2 Phase 2).
    def meet(name: str) -> str:
        marks = " ".join(str(workspace / f"{other}.mark") for other in ("a", "b", "c"))
        return (
            f"touch {workspace / name}.mark; n=0; "
            f"for m in {marks}; do while [ ! -e $m ]; do n=$((n+1)); "
            f'[ $n -gt 400 ] && exit 7; sleep 0.025; done; done; echo "met {name}"'
        )

    script = [
        {
            "toolCalls": [
                tool_call("RunCommand", "call_a", command=meet("a")),
                tool_call("RunCommand", "call_b", command=meet("b")),
                tool_call("RunCommand", "call_c", command=meet("c")),
            ]
        },
        {"text": "They met."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        await rt.start_task("Run the three together")
        await rt.event("approval_requested", count=3)
        for event in rt.find("approval_requested"):
            assert (await rt.approve(event["payload"]["approvalId"]))["accepted"] is True
        end = await rt.task_end("task_1", timeout=30)
        results = tool_results(gateway.requests[1].body)

    assert end["eventType"] == "task_completed", end
    assert [block["tool_use_id"] for block in results] == ["call_a", "call_b", "call_c"]
    assert [bool(block.get("is_error")) for block in results] == [False, False, False], results
    assert [f"met {name}" in result_text(block) for name, block in zip("abc", results, strict=True)] == [
        True,
        True,
        True,
    ]
    assert len(rt.find("approval_resolved")) == 3


async def test_a_policy_denial_goes_back_to_the_model_which_recovers(
    launch: Launch, backend: Backend, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside" / "x.txt"
    outside.parent.mkdir()
    inside = workspace / "x.txt"
    script = [
        {"toolCalls": [tool_call("WriteFile", "call_out", path=str(outside), content="x")]},
        {
            "text": "Not allowed there; writing inside.",
            "toolCalls": [tool_call("WriteFile", "call_in", path=str(inside), content="x")],
        },
        {"text": "Written inside the project."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        end = await rt.run_task("Write x")
        denied = tool_results(gateway.requests[1].body)
        history = await backend.session_history(rt.workspace_id or "", rt.session_id or "")

    assert end["eventType"] == "task_completed", end
    assert not outside.exists()
    assert inside.read_text() == "x"
    assert denied[0]["tool_use_id"] == "call_out"
    assert denied[0].get("is_error") is True
    assert result_text(denied[0]).strip()
    (completed,) = rt.find("tool_completed", where=lambda e: e["payload"].get("toolCallId") == "call_out")
    assert completed["payload"]["status"] == "denied"
    assert history is not None
    denial = [m for m in history.messages if m.tool_call_id == "call_out"]
    assert [m.tool_status.value for m in denial if m.tool_status] == ["denied"]
    assert denial[0].content == result_text(denied[0])


async def test_max_steps_fails_the_task_after_warning_at_eighty_percent(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    script = [
        {
            "toolCalls": [
                tool_call("WriteFile", f"call_{k}", path=str(workspace / f"f{k}.txt"), content=str(k))
            ]
        }
        for k in range(1, 8)
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        end = await rt.run_task("Write many files", maxSteps=5)
        played = len(gateway.requests)
        state = await rt.state()

    assert end["eventType"] == "task_failed"
    assert end["payload"]["reason"] == "max_steps_exceeded"
    assert end["payload"]["stepCount"] == 5
    assert played == 5
    assert sorted(p.name for p in workspace.iterdir()) == [f"f{k}.txt" for k in range(1, 6)]
    (warning,) = rt.find("step_limit_approaching")
    assert warning["payload"] == {"stepCount": 4, "maxSteps": 5}
    assert state["sessionStatus"] == "SESSION_RUNNING"
    assert state["task"] == {"taskId": "task_1", "status": "TASK_FAILED", "stepCount": 5, "maxSteps": 5}


async def calls_until_stopped_as_repeated(
    launch: Launch, backend: Backend, workspace: Path, call: dict[str, Any]
) -> int:
    """The model asks for ``call`` on every turn: the task must fail as a repeated tool call. Returns
    how many LLM calls were made before it did."""
    script = {"turns": [{"toolCalls": [call]}], "repeatLastTurn": True}
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        end = await rt.run_task("Read it again and again")
        played = len(gateway.requests)
    assert end["eventType"] == "task_failed"
    assert end["payload"]["reason"] == "repeated_tool_call"
    return played


async def test_the_same_failing_call_three_times_in_a_row_stops_the_task(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    call = tool_call("ReadFile", "call_x", path=str(workspace / "missing.txt"))
    assert await calls_until_stopped_as_repeated(launch, backend, workspace, call) == 3


async def test_the_same_succeeding_call_five_times_in_a_row_stops_the_task(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    (workspace / "same.txt").write_text("same")
    call = tool_call("ReadFile", "call_x", path=str(workspace / "same.txt"))
    assert await calls_until_stopped_as_repeated(launch, backend, workspace, call) == 5


async def test_an_unknown_tool_is_reported_to_the_model_as_tool_not_found(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    script = [
        {"toolCalls": [tool_call("FormatDisk", "call_fd", drive="C")]},
        {"text": "That tool does not exist."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        end = await rt.run_task("Format")
        (result,) = tool_results(gateway.requests[1].body)
    assert end["eventType"] == "task_completed"
    assert result.get("is_error") is True
    (completed,) = rt.find("tool_completed")
    assert completed["payload"]["error"]["code"] == "TOOL_NOT_FOUND"


async def test_exceeding_the_session_token_budget_fails_the_task_with_budget_exceeded(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    # The default policy allows 10 000 000 tokens per session; the gateway reports more in one call.
    script = [
        {
            "toolCalls": [tool_call("WriteFile", "c1", path=str(workspace / "a.txt"), content="a")],
            "usage": {"inputTokens": 10_000_000, "outputTokens": 50},
        },
        {"text": "never reached"},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        end = await rt.run_task("Spend it all")
        played = len(gateway.requests)
        state = await rt.state()
    assert end["eventType"] == "task_failed"
    assert end["payload"]["reason"] == "budget_exceeded"
    assert end["payload"]["error"]["code"] == "LLM_BUDGET_EXCEEDED"
    assert played == 1
    assert state["sessionStatus"] == "SESSION_RUNNING"


async def test_a_guardrail_block_fails_the_task_and_the_session_takes_a_new_one(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    script = [{"kind": "error", "status": 400, "message": "blocked by guardrail"}, {"text": "Hello again."}]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        end = await rt.run_task("Say something forbidden", task_id="task_bad")
        assert len(gateway.requests) == 1  # a 400 is not retried (§6.4)
        again = await rt.run_task("Say hello", task_id="task_good")
    assert end["eventType"] == "task_failed"
    assert end["payload"]["reason"] == "guardrail_blocked"
    assert end["payload"]["error"]["code"] == "LLM_GUARDRAIL_BLOCKED"
    assert again["eventType"] == "task_completed"


async def test_a_rate_limit_is_retried_and_the_task_completes(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    script = [{"kind": "error", "status": 429, "retryAfter": 0}, {"text": "Fine now.", "chunkSize": 100}]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        end = await rt.run_task("Hello")
        gateway.assert_done()
    assert end["eventType"] == "task_completed"
    assert [e["payload"]["text"] for e in rt.find("text_chunk")] == ["Fine now."]
    assert "session_paused" not in rt.types()


async def test_a_stream_cut_midway_is_retried_and_the_partial_text_is_withdrawn_not_kept(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    script = [{"text": "Partial answer that", "chunkSize": 4, "cutAfterChunks": 2}, {"text": "Whole answer."}]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        end = await rt.run_task("Answer")
        gateway.assert_done()
        history = await backend.session_history(rt.workspace_id or "", rt.session_id or "")
    assert end["eventType"] == "task_completed"
    assert history is not None
    assistant = [m.content for m in history.messages if m.role.value == "assistant"]
    assert assistant == ["Whole answer."]
