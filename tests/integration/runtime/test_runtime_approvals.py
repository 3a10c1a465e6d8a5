"""Approvals through the real runtime: requested as events, decided with ApproveAction, timed out,
scoped to the session, and persisted to the Approval Service (seed 000 §10).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.approvals import ApprovalRequest
from tests.integration.runtime.harness import (
    Backend,
    Launch,
    Runtime,
    eventually,
    open_session,
    tool_call,
    tool_results,
)


def approval_for(rt: Runtime, needle: str) -> dict[str, Any]:
    """The approval request whose details mention ``needle`` (a command or a path)."""
    found: list[dict[str, Any]] = [
        event["payload"]
        for event in rt.find("approval_requested")
        if needle in str(event["payload"].get("details", {}))
    ]
    assert len(found) == 1, f"{needle}: {found}"
    return found[0]


async def test_one_approval_approved_one_denied_one_timed_out_each_reaches_the_model_and_the_backend(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    commands = {name: f"echo {name} > {workspace / name}.txt" for name in ("one", "two", "three")}
    script = [
        {
            "toolCalls": [
                tool_call("RunCommand", "call_one", command=commands["one"]),
                tool_call("RunCommand", "call_two", command=commands["two"]),
                tool_call("RunCommand", "call_three", command=commands["three"]),
            ]
        },
        {"text": "One ran; two and three did not."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace, approval_timeout_s=1)
        await rt.start_task("Run three commands")
        await rt.event("approval_requested", count=3)
        one, two, three = (approval_for(rt, commands[name]) for name in ("one", "two", "three"))
        assert (await rt.approve(one["approvalId"]))["accepted"] is True
        assert (await rt.approve(two["approvalId"], "denied", reason="not that one"))["accepted"] is True
        timed_out = await rt.event("approval_timeout", timeout=10)
        end = await rt.task_end("task_1")
        results = tool_results(gateway.requests[1].body)
        session_id = rt.session_id or ""

        async def three_records() -> list[dict[str, Any]] | None:
            records = await backend.approvals(session_id)
            return records if len(records) >= 3 else None

        records = await eventually(three_records, timeout=10, what="three persisted approval decisions")

    assert end["eventType"] == "task_completed", end
    assert (workspace / "one.txt").read_text() == "one\n"
    assert not (workspace / "two.txt").exists()
    assert not (workspace / "three.txt").exists()

    # The request the desktop shows (§10.1), from the bundle's approval rule.
    request = one
    ApprovalRequest.model_validate_json(json.dumps(request))
    assert request["title"] == "Run a command"
    # The default policy has no allowedCommands, so every command is "not in allowedCommands" (§8.5).
    assert request["riskLevel"] == "high"
    assert request["details"]["toolName"]
    assert request["details"]["command"] == commands["one"]
    # The step's three calls are asked about at once: each request names its own call.
    assert [r["details"]["toolCallId"] for r in (one, two, three)] == ["call_one", "call_two", "call_three"]
    assert request["actionSummary"]
    assert request["timeoutSeconds"] == 1
    assert request["taskId"] == "task_1"

    assert timed_out["payload"]["approvalId"] == three["approvalId"]
    resolved = {e["payload"]["approvalId"]: e["payload"]["decision"] for e in rt.find("approval_resolved")}
    assert resolved[one["approvalId"]] == "approved"
    assert resolved[two["approvalId"]] == "denied"

    assert [block["tool_use_id"] for block in results] == ["call_one", "call_two", "call_three"]
    assert [bool(block.get("is_error")) for block in results] == [False, True, True]
    statuses = {e["payload"]["toolCallId"]: e["payload"]["status"] for e in rt.find("tool_completed")}
    assert statuses == {"call_one": "succeeded", "call_two": "denied", "call_three": "denied"}

    by_id = {record["approvalId"]: record for record in records}
    assert by_id[one["approvalId"]]["decision"] == "approved"
    assert by_id[two["approvalId"]]["decision"] == "denied"
    assert by_id[two["approvalId"]].get("reason") == "not that one"
    assert by_id[three["approvalId"]]["decision"] == "denied"
    assert by_id[three["approvalId"]]["timedOut"] is True


async def test_a_session_scoped_approval_covers_the_same_normalised_target_only(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    (workspace / "sub").mkdir()
    a = workspace / "a.txt"
    b = workspace / "b.txt"
    script = [
        {"toolCalls": [tool_call("WriteFile", "w1", path=str(a), content="first")]},
        {
            "toolCalls": [
                # The same file, spelled differently: still the target the user approved.
                tool_call("WriteFile", "w2", path=str(workspace / "sub" / ".." / "a.txt"), content="second"),
                tool_call("WriteFile", "w3", path=str(b), content="other"),
            ]
        },
        {"text": "Done."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        await rt.start_task("Write a twice and b", approvalMode="always")
        first = await rt.event("approval_requested")
        assert first["payload"]["details"].get("path") == str(a)
        # The diff the write would make, shown before anything is written (seed 000 §10.2).
        assert (
            first["payload"]["details"]["diff"]
            == "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+first\n\\ No newline at end of file\n"
        )
        assert not a.exists()
        await rt.approve(first["payload"]["approvalId"], scope="session")
        second = await rt.event("approval_requested", count=2)
        assert second["payload"]["details"].get("path") == str(b)
        await rt.approve(second["payload"]["approvalId"], "denied")
        end = await rt.task_end("task_1")
    assert end["eventType"] == "task_completed", end
    assert len(rt.find("approval_requested")) == 2
    assert a.read_text() == "second"
    assert not b.exists()
    resolved = rt.find("approval_resolved")
    assert resolved[0]["payload"]["scope"] == "session"


async def test_on_risky_actions_asks_only_for_the_high_risk_call(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    victim = workspace / "victim.txt"
    victim.write_text("keep me")
    script = [
        {
            "toolCalls": [
                tool_call("WriteFile", "w", path=str(workspace / "c.txt"), content="c"),
                tool_call("DeleteFile", "d", path=str(victim)),
            ]
        },
        {"text": "Wrote c; the deletion was refused."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        await rt.start_task("Write c and delete the victim", approvalMode="on_risky_actions")
        asked = await rt.event("approval_requested")
        await rt.approve(asked["payload"]["approvalId"], "denied")
        end = await rt.task_end("task_1")
        results = tool_results(gateway.requests[1].body)
    assert end["eventType"] == "task_completed"
    assert len(rt.find("approval_requested")) == 1
    assert asked["payload"]["riskLevel"] == "high"
    assert asked["payload"]["details"].get("path") == str(victim)
    assert asked["payload"]["details"]["diff"].splitlines()[:2] == ["--- a/victim.txt", "+++ /dev/null"]
    assert "-keep me" in asked["payload"]["details"]["diff"]
    assert victim.read_text() == "keep me"
    assert (workspace / "c.txt").read_text() == "c"
    assert [bool(block.get("is_error")) for block in results] == [False, True]


async def test_deciding_an_unknown_or_already_decided_approval_is_not_accepted(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    script = [
        {"toolCalls": [tool_call("RunCommand", "r", command=f"echo hi > {workspace / 'hi.txt'}")]},
        {"text": "Done."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        assert (await rt.approve("appr_made_up"))["accepted"] is False
        await rt.start_task("Say hi")
        asked = await rt.event("approval_requested")
        approval_id = asked["payload"]["approvalId"]
        assert (await rt.approve(approval_id, "denied"))["accepted"] is True
        # A second decision (a double click, or a forged approval) changes nothing.
        assert (await rt.approve(approval_id, "approved"))["accepted"] is False
        end = await rt.task_end("task_1")
    assert end["eventType"] == "task_completed"
    assert not (workspace / "hi.txt").exists()
