"""The scripted gateway's model of the providers' prompt caches, so tests can see cache reads.

A request is read as a sequence of blocks in the order the provider processes them, and a prefix is
identified by the model and the SHA-256 of its blocks (cache markers left out):

* **Anthropic** (tools → system → messages, one block per tool, system block and content block): only
  prefixes that end at a ``cache_control`` breakpoint are written. A breakpoint reads the longest
  cached prefix ending at it or at one of the 20 block boundaries before it (Anthropic's documented
  look-back); what lies between that hit and the last breakpoint is written. More than four
  breakpoints are refused with HTTP 400, as Anthropic does.
* **OpenAI** (tools, then each message): every request's prefixes are cached; the longest one seen
  before is read (``prompt_tokens_details.cached_tokens``).

Tokens are estimated as characters / 4, like the gateway's other counts; there is no minimum
cacheable length and no expiry, so short test prompts cache too.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["MAX_BREAKPOINTS", "CacheUsage", "PromptCacheModel", "breakpoint_problem"]

Dialect = Literal["anthropic", "openai"]

MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20
MAX_ENTRIES = 100_000
"""Prefixes remembered; the oldest are forgotten first (a long-running demo gateway stays bounded)."""


@dataclass(frozen=True, slots=True)
class CacheUsage:
    read_tokens: int = 0
    write_tokens: int = 0


@dataclass(frozen=True, slots=True)
class _Boundary:
    key: str
    chars: int
    marked: bool


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _unmarked(block: Any) -> tuple[Any, bool]:
    if isinstance(block, dict) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}, True
    return block, False


def _anthropic_blocks(body: dict[str, Any]) -> list[tuple[Any, bool]]:
    blocks: list[tuple[Any, bool]] = []
    tools = body.get("tools")
    for tool in tools if isinstance(tools, list) else []:
        blocks.append(_unmarked(tool))
    system = body.get("system")
    if isinstance(system, str) and system:
        blocks.append(({"type": "text", "text": system}, False))
    elif isinstance(system, list):
        blocks.extend(_unmarked(block) for block in system)
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        role = message.get("role")
        if isinstance(content, str):
            blocks.append(({"role": role, "type": "text", "text": content}, False))
        elif isinstance(content, list):
            for block in content:
                plain, marked = _unmarked(block)
                blocks.append(({"role": role, "block": plain}, marked))
    return blocks


def _openai_blocks(body: dict[str, Any]) -> list[tuple[Any, bool]]:
    blocks: list[tuple[Any, bool]] = []
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        blocks.append((tools, False))
    messages = body.get("messages")
    blocks.extend((message, False) for message in (messages if isinstance(messages, list) else []))
    return blocks


def breakpoint_problem(dialect: Dialect, body: dict[str, Any]) -> str | None:
    """Anthropic's refusal of too many breakpoints, in its words; ``None`` if the request is fine."""
    if dialect != "anthropic":
        return None
    count = sum(1 for _, marked in _anthropic_blocks(body) if marked)
    if count > MAX_BREAKPOINTS:
        return f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {count}."
    return None


@dataclass(slots=True)
class PromptCacheModel:
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _entries: OrderedDict[str, None] = field(default_factory=OrderedDict)

    def account(self, dialect: Dialect, body: dict[str, Any]) -> CacheUsage:
        """What this request reads from and writes to the cache; the cache is updated."""
        model = body.get("model")
        blocks = _anthropic_blocks(body) if dialect == "anthropic" else _openai_blocks(body)
        digest = hashlib.sha256(f"{dialect}\0{model}\0".encode())
        boundaries: list[_Boundary] = []
        chars = 0
        for block, marked in blocks:
            data = _canonical(block)
            digest.update(len(data).to_bytes(8, "big") + data)
            chars += len(data)
            boundaries.append(_Boundary(digest.hexdigest(), chars, marked))
        with self._lock:
            usage = self._anthropic(boundaries) if dialect == "anthropic" else self._openai(boundaries)
            while len(self._entries) > MAX_ENTRIES:
                self._entries.popitem(last=False)
        return usage

    def _anthropic(self, boundaries: list[_Boundary]) -> CacheUsage:
        marks = [index for index, boundary in enumerate(boundaries) if boundary.marked]
        if not marks:
            return CacheUsage()
        read = 0
        for mark in marks:
            for index in range(mark, max(-1, mark - LOOKBACK_BLOCKS - 1), -1):
                if boundaries[index].key in self._entries:
                    read = max(read, boundaries[index].chars)
                    break
        last = boundaries[marks[-1]]
        written = 0 if last.key in self._entries else max(0, last.chars - read)
        for mark in marks:
            self._entries[boundaries[mark].key] = None
        return CacheUsage(_tokens(read), _tokens(written))

    def _openai(self, boundaries: list[_Boundary]) -> CacheUsage:
        read = max((b.chars for b in boundaries if b.key in self._entries), default=0)
        for boundary in boundaries:
            self._entries[boundary.key] = None
        return CacheUsage(_tokens(read), 0)


def _tokens(chars: int) -> int:
    return chars // 4
