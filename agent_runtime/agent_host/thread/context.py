"""Choosing what of the thread fits the model's input window (seed 000 §5.4, Phase 1: drop-oldest).

``maxInputTokens`` is shared by the system prompt and the tool definitions (always sent whole) and
the conversation history, which gets the rest. When the history does not fit:

1. **Units.** An assistant message that made tool calls and the tool results answering them form one
   unit: they are kept or dropped together, so a request never carries a call without its results or
   results without their call. Every other message is a unit of its own.
2. **Recency window.** The newest ``recency_window`` messages are kept, widened to whole units. If
   even they do not fit, the window gives up its oldest units one by one, down to the newest unit
   alone; only when that unit does not fit is the request impossible (:class:`ContextWindowExceeded`,
   ``LLM_BUDGET_EXCEEDED``). Shrinking beats failing: the same thread would fail every later call
   too, and the task would be dead.
3. **Pins.** Then the prompt that started the current task (the newest user message) and the first
   user message of the session are kept if they fit: they say what the work is for, which the
   middle of a long tool-calling task never repeats.
4. **Middle.** The rest is filled newest first; the first unit that does not fit ends the filling,
   so what is dropped is always the oldest part of the middle.
5. **Markers.** Each run of dropped messages is replaced, at its place, by a ``system``-role message
   ``[Earlier conversation truncated — N messages removed]`` whose tokens count against the window.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agent_runtime.agent_host.thread.errors import ContextWindowExceeded
from contracts.enums import Role
from contracts.messages import ConversationMessage

__all__ = ["DEFAULT_RECENCY_WINDOW", "ContextSelection", "Units", "truncation_marker_text"]

DEFAULT_RECENCY_WINDOW = 12
"""Messages always kept: about three steps of assistant text, tool call and result."""


def truncation_marker_text(removed: int) -> str:
    noun = "message" if removed == 1 else "messages"
    return f"[Earlier conversation truncated — {removed} {noun} removed]"


@dataclass(frozen=True, slots=True)
class ContextSelection:
    """The messages to send, in order, with the truncation markers in place."""

    messages: tuple[ConversationMessage, ...]
    dropped_count: int
    """Thread messages left out (markers are not counted)."""
    history_tokens: int
    """Tokens of ``messages``, markers included."""
    input_tokens: int
    """``history_tokens`` plus the system prompt and tool definitions: the request's input estimate."""
    recency_kept: int
    """Messages of the recency window actually kept (less than asked when the window had to shrink)."""

    @property
    def truncated(self) -> bool:
        return self.dropped_count > 0


@dataclass(slots=True)
class Units:
    """The thread's units (see the module docstring), kept up to date as messages are appended so
    that choosing a window does not walk the whole thread."""

    starts: list[int] = field(default_factory=list)
    """Index of each unit's first message."""
    tokens: list[int] = field(default_factory=list)
    before: list[int] = field(default_factory=list)
    """Tokens of all the units before each unit."""
    user: list[int] = field(default_factory=list)
    """Units that start with a user message."""
    total: int = 0

    def add(self, message: ConversationMessage, tokens: int, *, extends: bool) -> None:
        if extends and self.starts:
            self.tokens[-1] += tokens
        else:
            if message.role is Role.USER:
                self.user.append(len(self.starts))
            self.starts.append(self.count_messages)
            self.tokens.append(tokens)
            self.before.append(self.total)
        self.total += tokens
        self.count_messages += 1

    count_messages: int = 0


def select(
    messages: Sequence[ConversationMessage],
    units: Units,
    *,
    max_input_tokens: int,
    system_tokens: int,
    tools_tokens: int,
    recency_window: int,
    make_marker: Callable[[int, ConversationMessage], tuple[ConversationMessage, int]],
) -> ContextSelection:
    """See the module docstring. ``make_marker(removed, last_removed)`` builds a marker and counts its
    tokens."""
    for name, value in (
        ("max_input_tokens", max_input_tokens),
        ("system_tokens", system_tokens),
        ("tools_tokens", tools_tokens),
        ("recency_window", recency_window),
    ):
        if value < 0:
            raise ValueError(f"{name} must not be negative")
    available = max_input_tokens - system_tokens - tools_tokens
    if available < 0:
        raise ContextWindowExceeded(
            f"The system prompt ({system_tokens:,} tokens) and tool definitions ({tools_tokens:,} tokens)"
            f" alone exceed maxInputTokens {max_input_tokens:,}.",
            maxInputTokens=max_input_tokens,
            systemTokens=system_tokens,
            toolsTokens=tools_tokens,
            newestMessageTokens=units.tokens[-1] if units.tokens else 0,
        )
    total = units.total
    if total <= available:
        return ContextSelection(
            messages=tuple(messages),
            dropped_count=0,
            history_tokens=total,
            input_tokens=system_tokens + tools_tokens + total,
            recency_kept=min(recency_window, len(messages)),
        )

    count = len(units.starts)
    starts, tokens, before = units.starts, units.tokens, units.before
    # An upper bound of one marker's tokens; the real markers are counted once the choice is made.
    marker_cap = max(make_marker(1, messages[-1])[1], make_marker(max(2, len(messages)), messages[-1])[1])

    def cost(block: int, pinned: Sequence[int]) -> int:
        """Kept = the pinned units before ``block`` and every unit from ``block`` on; each run of
        dropped units before ``block`` costs a marker."""
        spent = total - before[block]
        runs = 0
        previous = -1
        for p in sorted(pinned):
            if p >= block:
                continue
            spent += tokens[p]
            runs += p > previous + 1
            previous = p
        return spent + (runs + (block > previous + 1)) * marker_cap

    # The recency window, widened to whole units; never less than the newest unit.
    first_recent = len(messages) - recency_window
    block = bisect_right(starts, max(first_recent, 0)) - 1 if recency_window else count - 1
    block = min(max(block, 0), count - 1)
    while block < count - 1 and cost(block, ()) > available:
        block += 1
    if cost(block, ()) > available:
        raise ContextWindowExceeded(
            "The newest message does not fit the model's input window: system prompt "
            f"{system_tokens:,} + tool definitions {tools_tokens:,} + newest message "
            f"{tokens[-1]:,} tokens exceed maxInputTokens {max_input_tokens:,}.",
            maxInputTokens=max_input_tokens,
            systemTokens=system_tokens,
            toolsTokens=tools_tokens,
            newestMessageTokens=tokens[-1],
        )
    recency_kept = len(messages) - starts[block]
    pinned: list[int] = []
    for pin in dict.fromkeys(units.user[-1:] + units.user[:1]):
        if pin < block and cost(block, [*pinned, pin]) <= available:
            pinned.append(pin)
    while block > 0 and (block - 1 in pinned or cost(block - 1, pinned) <= available):
        block -= 1

    kept = sorted({*pinned, *range(block, count)})
    selected: list[ConversationMessage] = []
    history_tokens = 0
    next_message = 0
    for unit in kept:
        start = starts[unit]
        end = starts[unit + 1] if unit + 1 < count else len(messages)
        if start > next_message:
            marker, marker_tokens = make_marker(start - next_message, messages[start - 1])
            selected.append(marker)
            history_tokens += marker_tokens
        selected.extend(messages[start:end])
        history_tokens += tokens[unit]
        next_message = end
    dropped = len(messages) - sum(
        (starts[u + 1] if u + 1 < count else len(messages)) - starts[u] for u in kept
    )
    return ContextSelection(
        messages=tuple(selected),
        dropped_count=dropped,
        history_tokens=history_tokens,
        input_tokens=system_tokens + tools_tokens + history_tokens,
        recency_kept=recency_kept,
    )
