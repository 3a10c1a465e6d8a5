"""The request body's bytes, built turn by turn instead of from the whole thread on every call.

Each step's request repeats the previous one's conversation and adds the step's few messages, yet
turning the thread into turns, the turns into wire messages and those into JSON took time in
proportion to the thread: about 1.4 ms a request at 200 messages (0.2 ms at 20), most of it
``json.dumps``. :class:`BodyEncoder` keeps the previous request's turns with their JSON and the
message objects they were made of; the next request reuses every turn whose messages are the same
objects (the thread only appends, the redactor hands back the same copy for an unchanged message) and
builds only the rest. The result is byte for byte what ``json.dumps(build_body(...))`` gives — the same
dialect functions render each turn — so the gateway's prompt cache sees exactly the prefix it saw.

A turn is reused only when its rendering cannot have changed: it lies wholly within the messages
both requests share, no new message would join it, neither request has it as the conversation's last
turn (unless it is a user turn: an assistant prefill is written differently) and it was not made up
(the opening note, a missing result). Anthropic's
breakpoint on the latest user turn is applied to a copy as the body is written, so cached turns stay
unmarked.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from contracts.enums import Role
from contracts.messages import ConversationMessage
from contracts.tools import ToolDefinition

from .conversation import Turn, TurnSpan, UserTurn, merges_with, turn_spans

__all__ = ["BodyEncoder", "DialectWriter", "dump_json"]

_MAX_ENVELOPES = 4
"""Envelopes kept: a session alternates between a couple of output limits (seed 002 request kinds)."""


def dump_json(value: Any) -> bytes:
    """JSON as the client sends it: compact, UTF-8, no NaN."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


class DialectWriter(Protocol):
    """What a dialect module (:mod:`.anthropic`, :mod:`.openai`) provides to write a body."""

    def envelope(
        self,
        *,
        model: str,
        max_tokens: int,
        system: str,
        tools: Sequence[ToolDefinition],
        host: str = ...,
        cache_key: str | None = ...,
    ) -> dict[str, Any]: ...

    def turn_messages(self, turn: Turn, *, final: bool) -> list[dict[str, Any]]: ...

    def mark_settled(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]: ...


@dataclass(slots=True)
class _Encoded:
    span: TurnSpan
    json: bytes
    """The turn's wire messages, comma-separated, unmarked; empty when it has none."""
    final: bool
    """Rendered as the conversation's last turn (an assistant prefill is written differently)."""


@dataclass(frozen=True, slots=True)
class _EnvelopeKey:
    model: str
    max_tokens: int
    system: str
    tools: tuple[ToolDefinition, ...]
    host: str
    cache_key: str | None

    def matches(self, other: _EnvelopeKey) -> bool:
        # Tool definitions by identity: they are built once per session (seed 002 render cache).
        return (
            self.model == other.model
            and self.max_tokens == other.max_tokens
            and self.system == other.system
            and self.host == other.host
            and self.cache_key == other.cache_key
            and len(self.tools) == len(other.tools)
            and all(a is b for a, b in zip(self.tools, other.tools, strict=True))
        )


class BodyEncoder:
    """Encodes one client's request bodies, each from the previous one's turns (module docstring).

    Not thread-safe; one per :class:`~.client.LlmClient`, used from its event loop.
    """

    def __init__(self, writer: DialectWriter) -> None:
        self._writer = writer
        self._messages: list[ConversationMessage] = []
        self._turns: list[_Encoded] = []
        self._envelopes: list[tuple[_EnvelopeKey, bytes, bytes]] = []
        # Stands for the conversation inside the envelope's JSON; random, so no text can contain it.
        self._marker = f"\x00cowork-conversation-{uuid.uuid4().hex}\x00"
        self._marker_json = dump_json(self._marker)
        self.reused_turns = 0
        """Turns taken from the previous request by the latest :meth:`encode` (for tests and profiles)."""

    def encode(
        self,
        *,
        model: str,
        max_tokens: int,
        system: str,
        messages: Sequence[ConversationMessage],
        tools: Sequence[ToolDefinition],
        host: str,
        cache_key: str | None,
    ) -> bytes | None:
        """The body's bytes; None when the conversation has no turn to send."""
        encoded = self._conversation(messages)
        if not encoded:
            return None
        head, tail = self._envelope(_EnvelopeKey(model, max_tokens, system, tuple(tools), host, cache_key))
        chunks = [entry.json for entry in encoded]
        settled = _last_user_turn(encoded)
        if settled is not None:
            entry = encoded[settled]
            final = settled == len(encoded) - 1
            rendered = self._writer.turn_messages(entry.span.turn, final=final)
            marked = self._writer.mark_settled(rendered)
            if marked is not rendered:
                chunks[settled] = _join(marked)
        conversation = b",".join(chunk for chunk in chunks if chunk)
        if not conversation and head.endswith(b","):
            head = head[:-1]
        return head + conversation + tail

    def reset(self) -> None:
        """Forget the previous request (the next one is built whole)."""
        self._messages = []
        self._turns = []

    # ------------------------------------------------------------------ the conversation

    def _conversation(self, messages: Sequence[ConversationMessage]) -> list[_Encoded]:
        keep = self._reusable(messages)
        start = self._turns[keep - 1].span.end if keep else 0
        after = self._turns[keep - 1].span.turn if keep else None
        spans = turn_spans(messages, start, after=after)
        if keep and not spans:
            keep, spans = 0, turn_spans(messages)  # the reused turn would be the last: build it all
        total = keep + len(spans)
        fresh = []
        for index, span in enumerate(spans):
            final = keep + index == total - 1
            fresh.append(_Encoded(span, _join(self._writer.turn_messages(span.turn, final=final)), final))
        encoded = [*self._turns[:keep], *fresh]
        self._messages = list(messages)
        self._turns = encoded
        self.reused_turns = keep
        return encoded

    def _reusable(self, messages: Sequence[ConversationMessage]) -> int:
        """How many of the previous request's turns this request can take as they are."""
        previous = self._messages
        shared = 0
        for old, new in zip(previous, messages, strict=False):
            if old is not new:
                break
            shared += 1
        keep = 0
        for entry in self._turns:
            span = entry.span
            if span.end > shared or span.start == span.end:
                break
            if entry.final and not isinstance(span.turn, UserTurn):
                break  # written as the last turn, which only a user turn is the same as any other
            keep += 1
        while keep:
            span = self._turns[keep - 1].span
            following = _next_joining(messages, span.end)
            if following is not None and not merges_with(span.turn, messages[following]):
                break
            keep -= 1  # joined by the next message, or the conversation's last turn
        return keep

    # ------------------------------------------------------------------ the envelope

    def _envelope(self, key: _EnvelopeKey) -> tuple[bytes, bytes]:
        """The body's JSON before and after the conversation, for ``key``."""
        for index, (known, head, tail) in enumerate(self._envelopes):
            if known.matches(key):
                if index:
                    self._envelopes.insert(0, self._envelopes.pop(index))
                return head, tail
        body = self._writer.envelope(
            model=key.model,
            max_tokens=key.max_tokens,
            system=key.system,
            tools=key.tools,
            host=key.host,
            cache_key=key.cache_key,
        )
        body["messages"].append(self._marker)
        head, tail = dump_json(body).split(self._marker_json, 1)
        self._envelopes.insert(0, (key, head, tail))
        del self._envelopes[_MAX_ENVELOPES:]
        return head, tail


def _join(messages: list[dict[str, Any]]) -> bytes:
    return b",".join(dump_json(message) for message in messages)


def _last_user_turn(encoded: list[_Encoded]) -> int | None:
    for index in range(len(encoded) - 1, -1, -1):
        if isinstance(encoded[index].span.turn, UserTurn):
            return index
    return None


def _next_joining(messages: Sequence[ConversationMessage], start: int) -> int | None:
    """The first message from ``start`` on that is not dropped as empty (it joins or opens a turn)."""
    for index in range(start, len(messages)):
        message = messages[index]
        if message.role is Role.TOOL or message.content.strip() or message.tool_calls:
            return index
    return None
