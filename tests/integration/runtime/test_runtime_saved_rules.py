"""Saved permission rules through the real runtime: sent with StartTask, validated strictly, and
answering — visibly — only the prompts of the approval mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.errors import ErrorCode
from contracts.ipc.client_core import RpcCallError
from tests.integration.runtime.harness import Backend, Launch, Runtime, open_session, tool_call

INVALID_PARAMS = -32602

BAD_RULES: list[tuple[object, str]] = [
    ([{"kind": "command", "pattern": "pytest; rm -rf /"}], "taskOptions.permissionRules[0].pattern"),
    ([{"kind": "command", "pattern": "pytest $(id)"}], "taskOptions.permissionRules[0].pattern"),
    ([{"kind": "command", "pattern": "*"}], "taskOptions.permissionRules[0].pattern"),
    ([{"kind": "command", "pattern": "FOO=1 pytest"}], "taskOptions.permissionRules[0].pattern"),
    ([{"kind": "path", "pattern": "/etc/**"}], "taskOptions.permissionRules[0].pattern"),
    ([{"kind": "path", "pattern": "src/../../x"}], "taskOptions.permissionRules[0].pattern"),
    ([{"kind": "path", "pattern": "src/a**"}], "taskOptions.permissionRules[0].pattern"),
    ([{"kind": "domain", "pattern": "https://example.com"}], "taskOptions.permissionRules[0].pattern"),
    ([{"kind": "domain", "pattern": "*.10.0.0.1"}], "taskOptions.permissionRules[0].pattern"),
    ([{"kind": "shell", "pattern": "ls"}], "taskOptions.permissionRules[0].kind"),
    ([{"kind": "command"}], "taskOptions.permissionRules[0].pattern"),
    ([{"kind": "command", "pattern": "ls *", "extra": 1}], "taskOptions.permissionRules[0].extra"),
    ([{"kind": "command", "pattern": "ls *"}, "ls"], "taskOptions.permissionRules[1]"),
    ("ls *", "taskOptions.permissionRules"),
]


async def test_bad_permission_rules_are_invalid_params_naming_the_field(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    async with ScriptedGateway([]) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        for rules, field in BAD_RULES:
            with pytest.raises(RpcCallError) as refused:
                await rt.start_task("hi", permissionRules=rules)
            assert refused.value.rpc_code == INVALID_PARAMS, rules
            assert refused.value.error_code is ErrorCode.INVALID_REQUEST, rules
            assert refused.value.data is not None
            assert field in refused.value.data.message, (rules, refused.value.data.message)
        assert gateway.requests == []
        assert (await rt.state())["sessionStatus"] == "SESSION_RUNNING"


def resolved(rt: Runtime) -> list[dict[str, Any]]:
    return [event["payload"] for event in rt.find("approval_resolved")]


async def test_a_saved_rule_answers_the_prompt_the_approval_mode_would_raise_and_says_so(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    ruled = f"touch {workspace / 'ruled.txt'}"
    compound = f"touch {workspace / 'compound.txt'}; rm -f {workspace / 'ruled.txt'}"
    destructive = f"rm -f {workspace / 'ruled.txt'}"
    script = [
        {"toolCalls": [tool_call("RunCommand", "c1", command=ruled)]},
        {
            "toolCalls": [
                tool_call("RunCommand", "c2", command=compound),
                tool_call("RunCommand", "c3", command=destructive),
            ]
        },
        {"text": "One ran by the saved rule; the others were asked."},
    ]
    rules = [{"kind": "command", "pattern": "touch *"}, {"kind": "command", "pattern": "rm *"}]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        await rt.start_task("Touch and remove", approvalMode="on_risky_actions", permissionRules=rules)
        await rt.event("approval_requested", count=2)
        asked = [event["payload"] for event in rt.find("approval_requested")]
        for request in asked:
            await rt.approve(request["approvalId"], "denied", reason="not now")
        end = await rt.task_end("task_1")

    assert end["eventType"] == "task_completed", end
    # The first command ran without a prompt, answered by the rule; the event says which rule.
    assert (workspace / "ruled.txt").exists()
    by_rule = [payload for payload in resolved(rt) if payload.get("savedRule")]
    assert [(p["decision"], p["savedRule"]) for p in by_rule] == [("approved", "Run: touch *")]
    assert by_rule[0]["latencyMs"] == 0
    # A compound line with an unmatched program, and a program the bundle always asks about, were asked
    # although "rm *" is saved: rules never skip the policy's own approvals.
    assert sorted(request["details"]["command"] for request in asked) == sorted([compound, destructive])
    assert not (workspace / "compound.txt").exists()
    # Both involve rm, which the policy asks about itself: no rule could answer them, none is offered.
    assert [request.get("suggestedRules") for request in asked] == [None, None]


async def test_without_rules_the_same_command_is_asked(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    script = [
        {"toolCalls": [tool_call("RunCommand", "c1", command=f"touch {workspace / 'x.txt'}")]},
        {"text": "Asked."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        await rt.start_task("Touch", approvalMode="on_risky_actions")
        request = (await rt.event("approval_requested"))["payload"]
        assert request["suggestedRules"] == [{"kind": "command", "pattern": "touch *"}]
        await rt.approve(request["approvalId"])
        await rt.task_end("task_1")
    assert [p.get("savedRule") for p in resolved(rt)] == [None]
