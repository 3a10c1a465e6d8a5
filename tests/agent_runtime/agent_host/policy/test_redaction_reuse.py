"""Every LLM call sends the whole thread again; redacting a message once must give the same answer as
redacting it every time (seed 000 §8.7)."""

from __future__ import annotations

from datetime import UTC, datetime

from agent_runtime.agent_host.policy import Redactor
from contracts.enums import Role
from contracts.messages import ConversationMessage

KEY = "AKIAIOSFODNN7EXAMPLE"


def message(n: int, content: str) -> ConversationMessage:
    return ConversationMessage(
        message_id=f"m{n}", session_id="s", role=Role.USER, content=content, timestamp=datetime.now(UTC)
    )


def test_a_message_sent_again_is_redacted_and_counted_exactly_as_the_first_time() -> None:
    redactor = Redactor()
    thread = [message(1, f"key {KEY}"), message(2, "nothing secret")]
    first, first_counts = redactor.redact_messages(thread)
    thread.append(message(3, f"again {KEY}"))
    second, second_counts = redactor.redact_messages(thread)
    assert second[:2] == first
    assert KEY not in second[0].content
    assert KEY not in second[2].content
    assert first_counts.count == 1
    assert second_counts.count == 2


def test_a_different_message_object_is_never_mistaken_for_one_seen_before() -> None:
    redactor = Redactor()
    clean = message(1, "nothing secret")
    redactor.redact_messages([clean])
    changed = clean.model_copy(update={"content": f"now {KEY}"})  # same messageId, new object
    (sent,), counts = redactor.redact_messages([changed])
    assert KEY not in sent.content
    assert counts.count == 1
