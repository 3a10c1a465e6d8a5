"""The request body built turn by turn is byte for byte the whole thread's serialisation, whatever the
thread grows by; and it does reuse the previous request's turns."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence

import pytest

from agent_runtime.agent_host.llm import Dialect, GatewayConfig, LlmClient, LlmRejected
from contracts.enums import ToolStatus
from contracts.messages import ConversationMessage

from .support import DIALECTS, POLICY, READ_FILE, RUN_COMMAND, assistant, call, result, system, user

SYSTEM = "You are a careful agent."


def new_client(dialect: Dialect) -> LlmClient:
    return LlmClient(GatewayConfig("http://127.0.0.1:9", None, dialect, model="model-first"))


def whole(llm: LlmClient, messages: Sequence[ConversationMessage], max_tokens: int | None = None) -> bytes:
    body = llm.build_body(
        policy=POLICY,
        system_prompt=SYSTEM,
        messages=messages,
        tools=[READ_FILE, RUN_COMMAND],
        max_tokens=max_tokens,
    )
    return json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def encoded(llm: LlmClient, messages: Sequence[ConversationMessage], max_tokens: int | None = None) -> bytes:
    return llm.encode_body(
        policy=POLICY,
        system_prompt=SYSTEM,
        messages=messages,
        tools=[READ_FILE, RUN_COMMAND],
        max_tokens=max_tokens,
    )


# What a step can add to a thread, including what build_turns has to mend (notes in the middle, two
# assistant messages in a row, empty messages, a call without its result, a result without its call).
Growth = Callable[[list[ConversationMessage], random.Random, int], list[ConversationMessage]]


def _tool_step(thread: list[ConversationMessage], rng: random.Random, n: int) -> list[ConversationMessage]:
    calls = [
        call(f"c{n}_{i}", rng.choice(["ReadFile", "RunCommand"]), path=f"/p/{n}/{i}")
        for i in range(rng.randint(1, 3))
    ]
    status = rng.choice([ToolStatus.SUCCEEDED, ToolStatus.FAILED, ToolStatus.DENIED])
    return [
        assistant(rng.choice(["", "Looking.", '  ünïcode ✓ "quoted"  ']), *calls),
        *(
            result(c.tool_call_id, f"output {n} {'x' * rng.randint(0, 50)}", status, c.tool_name)
            for c in calls
        ),
    ]


GROWTHS: list[Growth] = [
    _tool_step,
    _tool_step,
    lambda _t, _r, n: [assistant(f"Partial answer {n} ")],  # max_tokens: continued by the next turn
    lambda _t, _r, n: [system(f"Note {n}: no progress")],
    lambda _t, _r, n: [user(f"Next task {n}")],
    lambda _t, _r, _n: [assistant("   ")],  # an empty answer: dropped
    lambda _t, _r, _n: [user("  \n")],
    lambda _t, _r, n: [assistant("", call(f"lost{n}"))],  # a call whose result never came (crash)
    lambda _t, _r, n: [result(f"orphan{n}", "late result")],
]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("seed", range(12))
def test_a_growing_thread_is_encoded_exactly_as_the_whole_body(dialect: Dialect, seed: int) -> None:
    rng = random.Random(seed)
    llm, reference = new_client(dialect), new_client(dialect)
    thread: list[ConversationMessage] = [user("Tidy my notes")]
    for n in range(40):
        thread += rng.choice(GROWTHS)(thread, rng, n)
        outbound = list(thread)
        if rng.random() < 0.2:
            outbound.append(system("Remember the checklist"))  # one request only, as the reminder is
        if rng.random() < 0.1:
            outbound = outbound[rng.randint(1, len(outbound) - 1) :]  # compacted: an older start
        max_tokens = rng.choice([None, 1234, 8000])
        assert encoded(llm, outbound, max_tokens) == whole(reference, outbound, max_tokens), f"step {n}"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_each_step_reuses_every_earlier_turn(dialect: Dialect) -> None:
    llm = new_client(dialect)
    thread: list[ConversationMessage] = [user("Go")]
    rng = random.Random(1)
    for n in range(30):
        thread += _tool_step(thread, rng, n)
        encoded(llm, thread)
    turns_before = 1 + 2 * 29  # the prompt, then an assistant and a user turn per earlier step
    assert llm._encoder.reused_turns == turns_before


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_thread_without_any_turn_is_refused_either_way(dialect: Dialect) -> None:
    llm = new_client(dialect)
    with pytest.raises(LlmRejected):
        encoded(llm, [user("   "), assistant("")])
    with pytest.raises(LlmRejected):
        whole(llm, [user("   "), assistant("")])


def test_a_message_changed_in_place_of_its_copy_is_sent_as_it_is_now() -> None:
    llm, reference = new_client("anthropic"), new_client("anthropic")
    thread = [user("Go"), *_tool_step([], random.Random(2), 0), user("and then?")]
    encoded(llm, thread)
    # The redactor hands back a new copy when a message's text changes: a new object, so a new turn.
    changed = [*thread[:2], thread[2].model_copy(update={"content": "[redacted]"}), thread[3]]
    assert encoded(llm, changed) == whole(reference, changed)
