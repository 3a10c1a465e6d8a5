"""Adaptive output budgeting through the real runtime and the scripted gateway (seed 002 "Adaptive
Output Budgeting"): a truncated turn is sent again once with the escalated budget; still truncated
with visible text it is continued; still truncated with nothing written the task stops with a
targeted message; each call's decision is one structured log line. ``legacy`` (the default) keeps
seed 000's behaviour: the policy's limit on every call, a truncated answer continued."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_runtime.scripted_gateway import ScriptedGateway
from tests.integration.runtime.harness import Backend, Launch, open_session
from tests.integration.runtime.test_runtime_prompt_cache import log_lines

ADAPTIVE = {"COWORK_LOG_LEVEL": "INFO", "COWORK_LLM_OUTPUT_POLICY": "adaptive"}
POLICY_MAX_OUTPUT = 16_384
"""The local backend's default ``llmPolicy.maxOutputTokens``: the cap under the escalated 64,000."""


def decisions(lines: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (
            line["requestKind"],
            line["chosenBudget"],
            line["capSource"],
            line["escalationAttempted"],
            line["truncation"],
            line["continuation"],
        )
        for line in lines
    ]


async def test_escalation_once_then_a_continuation_for_visible_partial_output(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    script = [
        {"text": "The first half", "stopReason": "max_tokens"},
        {"text": "The first half, then more", "stopReason": "max_tokens"},
        {"text": " and the end."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace, extra=ADAPTIVE)
        end = await rt.run_task("Write it all")
        gateway.assert_done()
        bodies = [request.body for request in gateway.requests]

    assert end["eventType"] == "task_completed", end
    assert [body["max_tokens"] for body in bodies] == [8_000, POLICY_MAX_OUTPUT, POLICY_MAX_OUTPUT]
    assert bodies[1]["messages"] == bodies[0]["messages"]  # the same request, escalated
    assert bodies[2]["messages"][-1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "The first half, then more"}],
    }
    lines = log_lines(rt, "llm_output_budget")
    assert decisions(lines) == [
        ("agentic_main", 8_000, "family_default", False, "visible_partial_output", None),
        ("agentic_main", POLICY_MAX_OUTPUT, "policy", True, "visible_partial_output", "allowed"),
        ("continuation", POLICY_MAX_OUTPUT, "policy", False, None, None),
    ]
    assert {line["providerFamily"] for line in lines} == {"anthropic"}
    assert {line["transportTokenField"] for line in lines} == {"max_tokens"}
    assert {line["outputPolicy"] for line in lines} == {"adaptive"}
    # The dropped first answer is announced as a retried attempt: a second llm_request_started in the
    # step and no llm_request_completed of its own.
    assert len(rt.find("llm_request_completed")) == 2
    started = [e["payload"] for e in rt.find("llm_request_started")]
    assert [(p["requestKind"], p["maxOutputTokens"]) for p in started] == [
        ("agentic_main", 8_000),
        ("agentic_main", POLICY_MAX_OUTPUT),
        ("continuation", POLICY_MAX_OUTPUT),
    ]


async def test_exhausted_reasoning_stops_with_a_targeted_message_instead_of_continuing(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    script = [{"text": "", "stopReason": "max_tokens"}, {"text": "", "stopReason": "max_tokens"}]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace, extra=ADAPTIVE)
        end = await rt.run_task("Think hard")
        gateway.assert_done()
        sent = len(gateway.requests)

    assert sent == 2  # one escalation, no continuation
    assert end["eventType"] == "task_failed"
    assert end["payload"]["reason"] == "output_budget_exhausted"
    error = end["payload"]["error"]
    assert f"{POLICY_MAX_OUTPUT:,} tokens on reasoning" in error["message"]
    assert error["details"] == {"truncation": "reasoning_exhausted", "maxOutputTokens": POLICY_MAX_OUTPUT}
    assert decisions(log_lines(rt, "llm_output_budget")) == [
        ("agentic_main", 8_000, "family_default", False, "reasoning_exhausted", None),
        ("agentic_main", POLICY_MAX_OUTPUT, "policy", True, "reasoning_exhausted", "skipped"),
    ]
    # The escalated call replaced the first: the desktop hears of one answer, the last.
    truncations = [e["payload"].get("truncation") for e in rt.find("llm_request_completed")]
    assert truncations == ["reasoning_exhausted"]
    assert len(rt.find("llm_request_started")) == 2


async def test_after_tool_results_the_budget_is_the_follow_up_one(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    script = [
        {"toolCalls": [{"name": "ReadFile", "id": "r1", "arguments": {"path": str(workspace / "a.txt")}}]},
        {"text": "It says alpha."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace, extra=ADAPTIVE)
        end = await rt.run_task("Read a.txt")
        limits = [request.body["max_tokens"] for request in gateway.requests]
    assert end["eventType"] == "task_completed"
    assert limits == [8_000, min(16_000, POLICY_MAX_OUTPUT)]


async def test_legacy_is_the_default_and_keeps_the_policy_limit_and_plain_continuation(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    script = [
        {"text": "", "stopReason": "max_tokens"},
        {"text": "Half", "stopReason": "max_tokens"},
        {"text": "."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace, extra={"COWORK_LOG_LEVEL": "INFO"})
        end = await rt.run_task("Write it")
        gateway.assert_done()
        limits = [request.body["max_tokens"] for request in gateway.requests]
    assert end["eventType"] == "task_completed"
    assert limits == [POLICY_MAX_OUTPUT] * 3
    lines = log_lines(rt, "llm_output_budget")
    assert [(line["outputPolicy"], line["capSource"], line["continuation"]) for line in lines] == [
        ("legacy", "policy", "allowed"),
        ("legacy", "policy", "allowed"),
        ("legacy", "policy", None),
    ]
