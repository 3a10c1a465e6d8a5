"""Adaptive output budgeting (seed 002 "Adaptive Output Budgeting"): how many tokens each agentic LLM
call may write, and what happens when a call hits that limit.

``COWORK_LLM_OUTPUT_POLICY=legacy|adaptive`` (default ``legacy``). **legacy** is the behaviour of seed
000: every call asks for the policy's ``llmPolicy.maxOutputTokens``, and a truncated answer is simply
continued. **adaptive** resolves a budget per request kind —

* ``agentic_main``: the first call of a task or after the user's or a note's message,
* ``tool_followup``: the call after tool results,
* ``continuation``: the call that continues an answer cut off by the limit —

in this order:

1. the task's own limit — Cowork's task options have none, so this step is empty here;
2. ``COWORK_LLM_MAX_OUTPUT_TOKENS`` (every kind), else ``COWORK_LLM_AGENTIC_INITIAL_MAX_TOKENS``;
3. the provider family's default: 8,000 for ``agentic_main``, 16,000 for ``tool_followup``, and the
   escalated budget for ``continuation`` (it follows a call that already overflowed that);
4. clamping by the known hard caps: the provider family's output cap, the organisation's
   ``llmPolicy.maxOutputTokens`` (the policy is a limit, never a target, in this mode), and the room
   the model's context window leaves after the input.

A ``agentic_main`` or ``tool_followup`` call that stops at the limit without a tool call is sent again
once, unchanged, with the escalated budget (``COWORK_LLM_AGENTIC_ESCALATED_MAX_TOKENS``, else 48,000;
64,000 for Anthropic and Bedrock Claude; 16,000 for the generic family), clamped the same way. If it is
still cut off, the truncation is classified: ``visible_partial_output`` (the model wrote answer text)
goes on with a continuation; ``reasoning_exhausted`` (it spent the budget on thinking and wrote
nothing) stops the task with a message that says so, instead of burning more calls.

Each call's decision is logged as one JSON line (``"event": "llm_output_budget"``) with the seed's
fields: provider family, request kind, chosen budget, transport token field, cap source, escalation
attempted, truncation classification, continuation allowed or skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from contracts.enums import Role
from contracts.messages import ConversationMessage

from .errors import LlmConfigError
from .prompt_cache import ProviderFamily

__all__ = [
    "FAMILY_DEFAULTS",
    "BudgetDecision",
    "CapSource",
    "FamilyDefaults",
    "OutputBudgetSettings",
    "OutputPolicyMode",
    "RequestKind",
    "TruncationKind",
    "classify_truncation",
    "log_decision",
    "request_kind",
    "resolve_budget",
]

logger = logging.getLogger(__name__)

OutputPolicyMode = Literal["legacy", "adaptive"]
RequestKind = Literal["agentic_main", "tool_followup", "continuation"]
TruncationKind = Literal["visible_partial_output", "reasoning_exhausted"]
CapSource = Literal["policy", "env", "family_default", "provider_cap", "context_headroom"]

POLICY_VARIABLE = "COWORK_LLM_OUTPUT_POLICY"
MAX_VARIABLE = "COWORK_LLM_MAX_OUTPUT_TOKENS"
INITIAL_VARIABLE = "COWORK_LLM_AGENTIC_INITIAL_MAX_TOKENS"
ESCALATED_VARIABLE = "COWORK_LLM_AGENTIC_ESCALATED_MAX_TOKENS"
MAX_SETTING = 10_000_000
"""Above any model's output; a larger number is a typo."""


@dataclass(frozen=True, slots=True)
class FamilyDefaults:
    agentic_main: int
    tool_followup: int
    escalated: int
    hard_cap: int | None
    """The most any model of the family writes in one response; ``None``: unknown."""
    context_window: int | None
    """Input and output together; ``None``: varies too much by model to assume."""


FAMILY_DEFAULTS: Mapping[ProviderFamily, FamilyDefaults] = {
    "anthropic": FamilyDefaults(8_000, 16_000, 64_000, 64_000, 200_000),
    "bedrock_claude": FamilyDefaults(8_000, 16_000, 64_000, 64_000, 200_000),
    "openai": FamilyDefaults(8_000, 16_000, 48_000, 128_000, None),
    "azure_openai": FamilyDefaults(8_000, 16_000, 48_000, 128_000, None),
    "gemini": FamilyDefaults(8_000, 16_000, 48_000, 65_536, None),
    "openrouter": FamilyDefaults(8_000, 16_000, 48_000, None, None),
    "generic": FamilyDefaults(8_000, 16_000, 16_000, None, None),
}


@dataclass(frozen=True, slots=True)
class OutputBudgetSettings:
    """The rollout controls, read from the environment (:meth:`from_env`)."""

    mode: OutputPolicyMode = "legacy"
    max_output_tokens: int | None = None
    initial_max_tokens: int | None = None
    escalated_max_tokens: int | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> OutputBudgetSettings:
        raw_mode = environ.get(POLICY_VARIABLE, "").strip().lower() or "legacy"
        if raw_mode not in get_args(OutputPolicyMode):
            raise LlmConfigError(
                f"{POLICY_VARIABLE} must be legacy or adaptive", details={"variable": POLICY_VARIABLE}
            )
        mode: OutputPolicyMode = "adaptive" if raw_mode == "adaptive" else "legacy"
        return cls(
            mode=mode,
            max_output_tokens=_tokens(environ, MAX_VARIABLE),
            initial_max_tokens=_tokens(environ, INITIAL_VARIABLE),
            escalated_max_tokens=_tokens(environ, ESCALATED_VARIABLE),
        )


def _tokens(environ: Mapping[str, str], name: str) -> int | None:
    raw = environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_SETTING:
        raise LlmConfigError(
            f"{name} must be a whole number of tokens from 1 to {MAX_SETTING:,}", details={"variable": name}
        )
    return value


@dataclass(frozen=True, slots=True)
class BudgetDecision:
    """The output limit of one call and where it came from."""

    mode: OutputPolicyMode
    provider_family: ProviderFamily
    request_kind: RequestKind
    max_tokens: int
    cap_source: CapSource
    escalated: bool = False
    """This is the one same-request escalation."""


def request_kind(messages: Sequence[ConversationMessage]) -> RequestKind:
    """What the call answers, read from the end of the thread (so a resumed session agrees): tool
    results → ``tool_followup``; the model's own cut-off answer → ``continuation``; else
    ``agentic_main``."""
    last = messages[-1] if messages else None
    if last is None or last.role in (Role.USER, Role.SYSTEM):
        return "agentic_main"
    if last.role is Role.TOOL or last.tool_calls:
        return "tool_followup"
    return "continuation"


def resolve_budget(
    settings: OutputBudgetSettings,
    *,
    family: ProviderFamily,
    kind: RequestKind,
    policy_max_output_tokens: int,
    estimated_input_tokens: int,
    escalate: bool = False,
) -> BudgetDecision:
    """The budget of one call; see the module docstring for the order."""
    if settings.mode == "legacy":
        return BudgetDecision("legacy", family, kind, policy_max_output_tokens, "policy", escalated=False)
    defaults = FAMILY_DEFAULTS[family]
    chosen: int
    source: CapSource
    if escalate:
        if settings.escalated_max_tokens is not None:
            chosen, source = settings.escalated_max_tokens, "env"
        else:
            chosen, source = defaults.escalated, "family_default"
    elif settings.max_output_tokens is not None:
        chosen, source = settings.max_output_tokens, "env"
    elif settings.initial_max_tokens is not None:
        chosen, source = settings.initial_max_tokens, "env"
    elif kind == "agentic_main":
        chosen, source = defaults.agentic_main, "family_default"
    elif kind == "tool_followup":
        chosen, source = defaults.tool_followup, "family_default"
    else:
        chosen, source = settings.escalated_max_tokens or defaults.escalated, "family_default"
    caps: list[tuple[int, CapSource]] = []
    if defaults.hard_cap is not None:
        caps.append((defaults.hard_cap, "provider_cap"))
    caps.append((policy_max_output_tokens, "policy"))
    if defaults.context_window is not None:
        caps.append((max(1, defaults.context_window - estimated_input_tokens), "context_headroom"))
    for cap, cap_source in caps:
        if cap < chosen:
            chosen, source = cap, cap_source
    return BudgetDecision("adaptive", family, kind, chosen, source, escalated=escalate)


def classify_truncation(text: str) -> TruncationKind:
    """A call cut off by its output limit: did the model write answer text, or spend the whole budget
    thinking (or on a tool call it never finished)?"""
    return "visible_partial_output" if text.strip() else "reasoning_exhausted"


def log_decision(
    decision: BudgetDecision,
    *,
    session_id: str,
    step_id: str,
    transport_token_field: str,
    escalation_attempted: bool,
    truncation: TruncationKind | None,
    continuation: Literal["allowed", "skipped"] | None,
) -> None:
    """The one structured log line of a call's output-budget decision: the runtime logs JSON lines,
    and these fields are the line's own (``extra``), not text inside its message."""
    logger.info(
        "output budget %d tokens (%s, %s)",
        decision.max_tokens,
        decision.request_kind,
        decision.cap_source,
        extra={
            "event": "llm_output_budget",
            "sessionId": session_id,
            "stepId": step_id,
            "outputPolicy": decision.mode,
            "providerFamily": decision.provider_family,
            "requestKind": decision.request_kind,
            "chosenBudget": decision.max_tokens,
            "transportTokenField": transport_token_field,
            "capSource": decision.cap_source,
            "escalationAttempted": escalation_attempted,
            "truncation": truncation,
            "continuation": continuation,
        },
    )
