"""Adaptive output budgeting's resolution table, written from seed 002 "Adaptive Output Budgeting":
request kinds, provider-family defaults (8,000 main / 16,000 after tools; escalation to 48,000, 64,000
for Anthropic-family routes, 16,000 for the generic fallback), the order task → environment → family
defaults → caps and context headroom, the rollout variables and the truncation classes."""

from __future__ import annotations

import pytest

from agent_runtime.agent_host.llm import GatewayConfig, LlmConfigError
from agent_runtime.agent_host.llm.output_budget import (
    OutputBudgetSettings,
    classify_truncation,
    request_kind,
    resolve_budget,
)
from agent_runtime.agent_host.llm.prompt_cache import ProviderFamily
from contracts.enums import Role

from .support import assistant, call, message, result, user

ADAPTIVE = OutputBudgetSettings(mode="adaptive")
ROOMY_POLICY = 1_000_000
"""A policy limit that binds nothing, so the table shows the seed's own numbers."""


def budget(
    family: ProviderFamily,
    kind: str,
    *,
    settings: OutputBudgetSettings = ADAPTIVE,
    policy: int = ROOMY_POLICY,
    estimate: int = 1_000,
    escalate: bool = False,
) -> tuple[int, str]:
    decision = resolve_budget(
        settings,
        family=family,
        kind=kind,  # type: ignore[arg-type]
        policy_max_output_tokens=policy,
        estimated_input_tokens=estimate,
        escalate=escalate,
    )
    return decision.max_tokens, decision.cap_source


@pytest.mark.parametrize(
    ("family", "main", "followup", "escalated"),
    [
        ("anthropic", 8_000, 16_000, 64_000),
        ("bedrock_claude", 8_000, 16_000, 64_000),
        ("openai", 8_000, 16_000, 48_000),
        ("azure_openai", 8_000, 16_000, 48_000),
        ("gemini", 8_000, 16_000, 48_000),
        ("openrouter", 8_000, 16_000, 48_000),
        ("generic", 8_000, 16_000, 16_000),
    ],
)
def test_family_defaults_per_request_kind(
    family: ProviderFamily, main: int, followup: int, escalated: int
) -> None:
    assert budget(family, "agentic_main") == (main, "family_default")
    assert budget(family, "tool_followup") == (followup, "family_default")
    assert budget(family, "agentic_main", escalate=True) == (escalated, "family_default")
    assert budget(family, "tool_followup", escalate=True) == (escalated, "family_default")


def test_legacy_asks_for_the_policy_limit_whatever_the_kind() -> None:
    legacy = OutputBudgetSettings()
    assert legacy.mode == "legacy"
    for kind in ("agentic_main", "tool_followup", "continuation"):
        assert budget("anthropic", kind, settings=legacy, policy=4_096) == (4_096, "policy")


def test_the_environment_comes_before_the_family_defaults() -> None:
    fixed = OutputBudgetSettings(mode="adaptive", max_output_tokens=12_000, initial_max_tokens=2_000)
    assert budget("openai", "agentic_main", settings=fixed) == (12_000, "env")
    assert budget("openai", "tool_followup", settings=fixed) == (12_000, "env")
    initial = OutputBudgetSettings(mode="adaptive", initial_max_tokens=2_000)
    assert budget("openai", "agentic_main", settings=initial) == (2_000, "env")
    escalated = OutputBudgetSettings(mode="adaptive", escalated_max_tokens=30_000)
    assert budget("openai", "agentic_main", settings=escalated, escalate=True) == (30_000, "env")
    assert budget("openai", "agentic_main", settings=escalated) == (8_000, "family_default")


def test_known_caps_clamp_even_explicit_overrides() -> None:
    huge = OutputBudgetSettings(mode="adaptive", max_output_tokens=500_000, escalated_max_tokens=500_000)
    assert budget("anthropic", "agentic_main", settings=huge) == (64_000, "provider_cap")
    assert budget("openai", "agentic_main", settings=huge, escalate=True) == (128_000, "provider_cap")
    # The organisation's policy is a limit, never exceeded.
    assert budget("anthropic", "agentic_main", escalate=True, policy=16_384) == (16_384, "policy")
    assert budget("generic", "agentic_main", settings=huge, policy=32_000) == (32_000, "policy")
    # What the context window leaves after the input.
    assert budget("anthropic", "agentic_main", escalate=True, estimate=190_000) == (
        10_000,
        "context_headroom",
    )


def test_a_continuation_asks_for_the_escalated_budget() -> None:
    assert budget("anthropic", "continuation") == (64_000, "family_default")
    assert budget("generic", "continuation") == (16_000, "family_default")


def test_the_rollout_variables_are_read_and_checked() -> None:
    environ = {
        "LLM_GATEWAY_ENDPOINT": "http://127.0.0.1:1",
        "COWORK_LLM_OUTPUT_POLICY": "Adaptive",
        "COWORK_LLM_MAX_OUTPUT_TOKENS": "12_000",
        "COWORK_LLM_AGENTIC_INITIAL_MAX_TOKENS": "4000",
        "COWORK_LLM_AGENTIC_ESCALATED_MAX_TOKENS": " 32000 ",
    }
    assert GatewayConfig.from_env(environ).output == OutputBudgetSettings("adaptive", 12_000, 4_000, 32_000)
    assert GatewayConfig.from_env({"LLM_GATEWAY_ENDPOINT": "http://127.0.0.1:1"}).output.mode == "legacy"
    for name, value in [
        ("COWORK_LLM_OUTPUT_POLICY", "smart"),
        ("COWORK_LLM_MAX_OUTPUT_TOKENS", "lots"),
        ("COWORK_LLM_AGENTIC_INITIAL_MAX_TOKENS", "0"),
        ("COWORK_LLM_AGENTIC_ESCALATED_MAX_TOKENS", "-5"),
    ]:
        with pytest.raises(LlmConfigError) as caught:
            GatewayConfig.from_env({"LLM_GATEWAY_ENDPOINT": "http://127.0.0.1:1", name: value})
        assert caught.value.shape.details == {"variable": name}
        assert name in caught.value.shape.message


def test_request_kinds_come_from_the_end_of_the_thread() -> None:
    assert request_kind([user("Fix the test")]) == "agentic_main"
    with_tools = [user("Read a"), assistant("", call("c1", path="a")), result("c1", "alpha")]
    assert request_kind(with_tools) == "tool_followup"
    assert request_kind([user("Write a poem"), assistant("Roses are")]) == "continuation"
    assert request_kind([*with_tools, message(Role.SYSTEM, "A note")]) == "agentic_main"
    assert request_kind([]) == "agentic_main"


def test_truncation_is_visible_output_or_exhausted_reasoning() -> None:
    assert classify_truncation("Here is the first half of") == "visible_partial_output"
    assert classify_truncation("") == "reasoning_exhausted"
    assert classify_truncation(" \n ") == "reasoning_exhausted"
