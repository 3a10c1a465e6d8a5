"""The LLM client's Server-Sent Events decoder: the shared one (:mod:`contracts.sse`), whose bound on
one event reports as the client's own protocol error, so that a gateway (or whatever sits between us
and it) sending an oversized event fails the call like any other broken stream."""

from __future__ import annotations

from contracts import sse
from contracts.sse import MAX_EVENT_CHARS, SseEvent

from .errors import LlmProtocolError

__all__ = ["MAX_EVENT_CHARS", "SseDecoder", "SseEvent"]


class SseDecoder(sse.SseDecoder):
    def too_large(self, message: str) -> Exception:
        return LlmProtocolError(
            f"The LLM gateway sent a stream event larger than {_size(self.max_event_chars)}",
            details={"limitChars": self.max_event_chars},
        )


def _size(chars: int) -> str:
    if chars >= 1024 * 1024 and chars % (1024 * 1024) == 0:
        return f"{chars // (1024 * 1024)} MiB"
    return f"{chars:,} characters"
