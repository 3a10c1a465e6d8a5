"""What one LLM call gives back, the same for both dialects (seed 000 §6.3), and its callbacks."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from contracts.enums import StopReason
from contracts.tools import ToolCall

__all__ = ["DiscardCallback", "LlmResponse", "LlmUsage", "RetryCallback", "TextCallback"]

TextCallback = Callable[[str], Awaitable[None] | None]
"""``on_text(chunk)``: each text chunk as it arrives; sync or async."""

DiscardCallback = Callable[[], Awaitable[None] | None]
"""``on_discard()``: the text chunks delivered since the last call (or the start) will not be part of
the response — an attempt broke and is about to be retried, or the call failed. The host tells the
desktop to drop the text it showed. Not called on cancellation: whoever cancelled already knows."""

RetryCallback = Callable[[int, float, str], Awaitable[None] | None]
"""``on_retry(retry, delay_s, reason)``: retry number ``retry`` (1-based) starts in ``delay_s``
seconds because of ``reason`` (a sentence for the user, e.g. "the LLM gateway is rate limiting")."""


@dataclass(frozen=True, slots=True)
class LlmUsage:
    """Tokens the gateway counted. ``reported`` is False when it sent none (OpenAI-compatible servers
    may omit usage); the counts are then 0 and the host falls back to its own estimate.

    The kinds are separate, as the prompt-cache bookkeeping needs them: ``input_tokens`` is the input
    read without the cache (Anthropic's ``input_tokens``; OpenAI's ``prompt_tokens`` minus its
    ``cached_tokens``), ``cache_read_tokens`` what the provider read from its prompt cache and
    ``cache_write_tokens`` what it wrote to it (Anthropic only). All three are input the model
    processed: :attr:`prompt_tokens` is their sum.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    reported: bool = False
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        """Every input token of the call, cached or not (what the session's token budget counts)."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


@dataclass(frozen=True, slots=True)
class LlmResponse:
    """A whole, successful response. Nothing partial is ever returned.

    If ``tool_calls`` is not empty the loop runs them whatever ``stop_reason`` says (seed 000 §4.4).
    ``raw_stop_reason`` is the gateway's own word (``stop``, ``stop_sequence``, …) for logs.
    """

    text: str
    tool_calls: list[ToolCall]
    stop_reason: StopReason
    usage: LlmUsage
    model: str
    latency_ms: float
    """From the first request sent to the end of the successful stream, including retries."""
    attempts: int = 1
    raw_stop_reason: str | None = None
    message_id: str | None = field(default=None)
    first_token_ms: float | None = None
    """From sending the attempt that answered to the first bytes of its stream."""
