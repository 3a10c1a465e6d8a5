"""Elicitation forwarded to the user: ``elicitation_requested``, ``AnswerElicitation``, the timeout, and
the end of the call, task or session (``ElicitationBroker``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_runtime.agent_host.mcp.elicitation import ElicitationBroker, ElicitationContentInvalid
from contracts._base import WireModel
from contracts.events import EventType
from contracts.mcp import ElicitationAction
from contracts.mcp_boundary import ElicitationAsk
from contracts.methods import AnswerElicitationParams

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


class Events:
    def __init__(self) -> None:
        self.seen: list[tuple[EventType, dict[str, Any], str | None, str | None]] = []

    def __call__(
        self,
        event_type: EventType,
        payload: Any = None,
        *,
        task_id: str | None = None,
        step_id: str | None = None,
    ) -> None:
        wire = payload.to_wire() if isinstance(payload, WireModel) else dict(payload or {})
        self.seen.append((event_type, wire, task_id, step_id))

    def of(self, event_type: EventType) -> list[dict[str, Any]]:
        return [payload for kind, payload, _, _ in self.seen if kind is event_type]


def ask(**extra: Any) -> ElicitationAsk:
    def problems(content: dict[str, Any]) -> list[str]:
        return [] if isinstance(content.get("name"), str) else ["name is required"]

    return ElicitationAsk(
        server_name="docs",
        message="Your name?",
        requested_schema=SCHEMA,
        problems=problems,
        tool_name="ask_name",
        tool_call_id="call_1",
        task_id="task_1",
        step_id="step_1",
        **extra,
    )


def answer(
    elicitation_id: str, action: str, content: dict[str, Any] | None = None
) -> AnswerElicitationParams:
    wire: dict[str, Any] = {"sessionId": "s", "elicitationId": elicitation_id, "action": action}
    if content is not None:
        wire["content"] = content
    return AnswerElicitationParams.model_validate_json(__import__("json").dumps(wire))


async def asked(events: Events, count: int = 1) -> str:
    """The id of the ``count``-th question, once it was sent."""
    for _ in range(100):
        questions = events.of(EventType.ELICITATION_REQUESTED)
        if len(questions) >= count:
            return str(questions[count - 1]["elicitationId"])
        await asyncio.sleep(0)
    raise AssertionError(f"no elicitation_requested #{count}")


async def test_the_question_is_sent_and_the_users_answer_comes_back_to_the_call() -> None:
    events = Events()
    broker = ElicitationBroker(session_id="s", emit=events, timeout_s=30)
    waiting = asyncio.ensure_future(broker.ask(ask()))
    elicitation_id = await asked(events)
    [(_, payload, task_id, step_id)] = events.seen
    assert payload["serverName"] == "docs"
    assert payload["toolName"] == "ask_name"
    assert payload["requestedSchema"] == SCHEMA
    assert payload["timeoutSeconds"] == 30
    assert (task_id, step_id) == ("task_1", "step_1")
    # Content that does not fit the schema is refused; the question keeps waiting.
    with pytest.raises(ElicitationContentInvalid, match="name is required"):
        broker.answer(answer(elicitation_id, "accept", {"name": 3}))
    assert not waiting.done()
    assert broker.answer(answer(elicitation_id, "accept", {"name": "Ada"})).accepted is True
    reply = await waiting
    assert reply.action is ElicitationAction.ACCEPT
    assert reply.content == {"name": "Ada"}
    assert broker.answer(answer(elicitation_id, "decline")).accepted is False  # answered already
    [resolved] = events.of(EventType.ELICITATION_RESOLVED)
    assert resolved == {"elicitationId": elicitation_id, "action": "accept", "timedOut": False}


async def test_a_declined_answer_carries_no_content() -> None:
    events = Events()
    broker = ElicitationBroker(session_id="s", emit=events)
    waiting = asyncio.ensure_future(broker.ask(ask()))
    elicitation_id = await asked(events)
    broker.answer(answer(elicitation_id, "decline", {"name": "leaked?"}))
    reply = await waiting
    assert reply.action is ElicitationAction.DECLINE
    assert reply.content is None


async def test_no_answer_in_time_cancels_the_question() -> None:
    events = Events()
    broker = ElicitationBroker(session_id="s", emit=events, timeout_s=0.05)
    reply = await broker.ask(ask())
    assert reply.action is ElicitationAction.CANCEL
    [resolved] = events.of(EventType.ELICITATION_RESOLVED)
    assert resolved["timedOut"] is True
    assert broker.pending == []


async def test_a_cancelled_call_or_task_or_the_sessions_end_withdraws_the_question() -> None:
    events = Events()
    broker = ElicitationBroker(session_id="s", emit=events, timeout_s=30)
    call = asyncio.ensure_future(broker.ask(ask()))
    await asked(events)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert events.of(EventType.ELICITATION_RESOLVED)[-1]["action"] == "cancel"

    task = asyncio.ensure_future(broker.ask(ask()))
    await asked(events, 2)
    broker.cancel_all()
    assert (await task).action is ElicitationAction.CANCEL

    broker.close()
    assert (await broker.ask(ask())).action is ElicitationAction.CANCEL  # nothing is asked any more
