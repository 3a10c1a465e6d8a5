"""Infrastructure failures pause the session instead of failing the task (seed 000 §3.3, §4.6, §8.6):
the LLM gateway down after its retries, and the policy bundle expiring mid-task. ``ResumeSession`` in
the same process continues the task.
"""

from __future__ import annotations

import socket
from pathlib import Path

from agent_runtime.scripted_gateway import ScriptedGateway
from tests.integration.runtime.harness import (
    SHORT_BUNDLE_TTL_S,
    Backend,
    Launch,
    open_session,
    result_text,
    tool_call,
    tool_results,
)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def test_gateway_down_pauses_the_session_and_resume_continues_the_task_when_it_is_back(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    port = free_port()
    command = f"echo step one > {workspace / 'one.txt'}"
    first = ScriptedGateway([{"toolCalls": [tool_call("RunCommand", "call_1", command=command)]}], port=port)
    await first.start()
    try:
        rt = await open_session(launch, first.url, backend, workspace)
        await rt.start_task("Two steps")
        # The approval holds the loop between the two LLM calls: the gateway goes away meanwhile.
        asked = await rt.event("approval_requested")
        await first.aclose()
        await rt.approve(asked["payload"]["approvalId"])
        paused = await rt.event("session_paused", timeout=30)
        state = await rt.state()
        completed_step = rt.find("step_completed")[0]["stepId"]
        mark = rt.mark()
    finally:
        await first.aclose()

    assert paused["payload"]["reason"] == "llm_unreachable"
    assert state["sessionStatus"] == "SESSION_PAUSED"
    assert (workspace / "one.txt").read_text() == "step one\n"
    assert rt.find("task_failed") == []

    async with ScriptedGateway([{"text": "Back, and done."}], port=port) as again:
        resumed = await rt.resume(rt.session_id or "")
        end = await rt.task_end("task_1", timeout=30)
        again.assert_done()
        (result,) = tool_results(again.requests[0].body)

    assert resumed["sessionStatus"] == "SESSION_RUNNING"
    assert resumed["resumedFromStepId"] == completed_step
    assert end["eventType"] == "task_completed", end
    assert "session_resumed" in rt.types(after=mark)
    # The step done before the pause is not repeated: its result is what the model sees next.
    assert result["tool_use_id"] == "call_1"
    assert not result.get("is_error")
    assert (await rt.state())["sessionStatus"] == "SESSION_RUNNING"


async def test_policy_expiry_mid_task_pauses_and_resume_refreshes_the_bundle_and_continues(
    launch: Launch, short_policy_backend: Backend, workspace: Path
) -> None:
    target = workspace / "late.txt"
    script = [
        # The answer arrives after the bundle expired: the tool call it asks for must not run.
        {
            "delayMs": int((SHORT_BUNDLE_TTL_S + 0.7) * 1000),
            "toolCalls": [tool_call("WriteFile", "call_late", path=str(target), content="late")],
        },
        {"text": "Resumed and finished."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await launch(gateway.url, backend=short_policy_backend)
        created = await rt.create_session(short_policy_backend, workspace)
        await rt.start_task("Write late")
        expired = await rt.event("policy_expired", timeout=SHORT_BUNDLE_TTL_S + 15)
        paused = await rt.event("session_paused")
        state = await rt.state()
        assert not target.exists()
        resumed = await rt.resume(rt.session_id or "")
        end = await rt.task_end("task_1", timeout=20)
        results = tool_results(gateway.requests[1].body)

    assert expired["sessionId"] == created["sessionId"]
    assert paused["payload"]["reason"] == "policy_expired"
    assert state["sessionStatus"] == "SESSION_PAUSED"
    assert resumed["sessionStatus"] == "SESSION_RUNNING"
    assert end["eventType"] == "task_completed", end
    # The operation the expiry interrupted was denied and the model was told (§8.6 step 1).
    assert [block["tool_use_id"] for block in results] == ["call_late"]
    assert results[0].get("is_error") is True
    assert result_text(results[0]).strip()
