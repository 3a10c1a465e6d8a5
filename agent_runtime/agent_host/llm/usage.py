"""The session's token usage by kind (seed 002's ``usage`` bucket).

Input read without the cache, output, prompt-cache reads and prompt-cache writes are added up
separately, as providers bill them differently (a cache read costs a tenth of an input token at
Anthropic, a cache write a quarter more). Cost is not tracked: nothing in Cowork knows the prices the
organisation's gateway charges, and a guessed figure would mislead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .response import LlmUsage

__all__ = ["UsageTotals"]


@dataclass(slots=True)
class UsageTotals:
    """Tokens of every LLM call of the session, by kind, and how many calls they came from."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    requests: int = 0

    def add(self, usage: LlmUsage) -> None:
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cache_read_tokens += usage.cache_read_tokens
        self.cache_write_tokens += usage.cache_write_tokens
        self.requests += 1

    def to_wire(self) -> dict[str, Any]:
        return {
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "cacheReadTokens": self.cache_read_tokens,
            "cacheWriteTokens": self.cache_write_tokens,
            "requests": self.requests,
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, Any] | None) -> UsageTotals:
        """Missing or malformed counts read as 0: usage is a record, never a reason to refuse a resume."""
        if not isinstance(data, Mapping):
            return cls()

        def count(name: str) -> int:
            value = data.get(name)
            return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

        return cls(
            input_tokens=count("inputTokens"),
            output_tokens=count("outputTokens"),
            cache_read_tokens=count("cacheReadTokens"),
            cache_write_tokens=count("cacheWriteTokens"),
            requests=count("requests"),
        )
