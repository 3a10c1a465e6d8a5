"""Compaction, the pure part (seed 000 §5.4 Phase 2): what the requests send once the oldest turns
are summarised, which turns to summarise, and the summary request's text.

The thread keeps every message; a :class:`~contracts.compaction.SummaryBlock` stands in for the
messages up to the one it covers through. The *view* a request is chosen from is then the summary (a
``system``-role message) followed by the messages after it; the drop-oldest rules of
:mod:`.context` apply to that view as to the whole thread, so a summary that still leaves too much is
followed by the usual truncation marker rather than an impossible request.

What is summarised is always a prefix of the view in whole units (an assistant message with tool
calls together with the results answering them): the messages the drop-oldest rules would leave out,
up to the last one of them — the summary replaces them at their place, and no call is ever separated
from its result.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from contracts.compaction import CompactionState, SummaryBlock
from contracts.enums import Role
from contracts.messages import ConversationMessage

__all__ = [
    "SUMMARY_INSTRUCTION",
    "SUMMARY_MAX_OUTPUT_TOKENS",
    "context_view",
    "fit_units",
    "oldest_turns",
    "render_transcript",
    "summary_heading",
    "summary_message",
]

SUMMARY_INSTRUCTION = (
    "You compact a conversation between a user and a coding agent so the agent can continue the work"
    " within its context window. Summarise the conversation excerpt you are given. Keep: what the user"
    " asked for and every constraint they set; decisions made and why; files read, created or changed"
    " (with paths) and commands run, with the results that matter; errors met and how they were"
    " resolved; what remains to be done. Leave out pleasantries and anything superseded. Write plain"
    " prose or short bullet points, at most about 400 words. Answer with the summary only; do not"
    " call tools and do not continue the work."
)
"""The fixed system prompt of the summary request (the only prompt it has; no tools are offered)."""

SUMMARY_MAX_OUTPUT_TOKENS = 2_000
"""The summary's output limit: a summary much longer than this would not save the window much."""


def summary_heading(messages: int) -> str:
    noun = "message" if messages == 1 else "messages"
    return f"[Summary of the earlier conversation — {messages} {noun} summarised]"


def summary_message(
    block: SummaryBlock, session_id: str, token_count: int | None = None
) -> ConversationMessage:
    """The summary as the ``system``-role message requests send in place of the turns it covers."""
    return ConversationMessage(
        message_id=block.summary_id,
        session_id=session_id,
        task_id=block.task_id,
        role=Role.SYSTEM,
        content=f"{summary_heading(block.summarized_messages)}\n{block.text}",
        token_count=token_count,
        timestamp=block.created_at,
    )


def context_view(
    messages: Sequence[ConversationMessage], state: CompactionState, lead: ConversationMessage | None
) -> list[ConversationMessage] | None:
    """The summary ``lead`` followed by the messages after the one the latest summary covers through;
    None when no summary applies (none yet, or — in a damaged restore — its message is gone)."""
    block = state.latest
    if block is None or lead is None:
        return None
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].message_id == block.covers_through_message_id:
            return [lead, *messages[index + 1 :]]
    return None


def oldest_turns(
    view: Sequence[ConversationMessage], kept: Sequence[ConversationMessage], *, has_lead: bool
) -> list[ConversationMessage]:
    """The view's messages (after the summary lead) up to the last one the selection ``kept`` left out:
    what a new summary replaces."""
    kept_ids = {message.message_id for message in kept}
    start = 1 if has_lead else 0
    last = -1
    for index in range(start, len(view)):
        if view[index].message_id not in kept_ids:
            last = index
    return list(view[start : last + 1])


def fit_units(messages: Sequence[ConversationMessage], budget: int) -> list[ConversationMessage]:
    """The longest prefix of ``messages`` in whole units whose tokens stay within ``budget``."""
    taken = 0
    end = 0
    index = 0
    while index < len(messages):
        unit_end = index + 1
        while unit_end < len(messages) and messages[unit_end].role is Role.TOOL:
            unit_end += 1
        cost = sum(message.token_count or 0 for message in messages[index:unit_end])
        if taken + cost > budget:
            break
        taken += cost
        end = index = unit_end
    return list(messages[:end])


def render_transcript(previous: SummaryBlock | None, messages: Sequence[ConversationMessage]) -> str:
    """The summary request's user message: the previous summary, then each turn as text — tool calls
    with their arguments, each followed by its result — so any dialect carries it without tools."""
    parts = ["Summarise this earlier part of the conversation."]
    if previous is not None:
        parts.append(f"Summary of what came before it:\n{previous.text}")
    lines = []
    for message in messages:
        if message.role is Role.USER:
            lines.append(f"[user]\n{message.content}")
        elif message.role is Role.ASSISTANT:
            text = message.content
            for call in message.tool_calls or ():
                arguments = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
                text += f"\n[tool call {call.tool_name} {call.tool_call_id}] {arguments}"
            lines.append(f"[assistant]\n{text.strip()}")
        elif message.role is Role.TOOL:
            status = message.tool_status.value if message.tool_status else "done"
            lines.append(
                f"[tool result {message.tool_name} {message.tool_call_id} ({status})]\n{message.content}"
            )
        else:
            lines.append(f"[system note]\n{message.content}")
    parts.append("Conversation:\n" + "\n\n".join(lines))
    return "\n\n".join(parts)
