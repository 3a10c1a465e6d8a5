"""What the gateway remembers: which turn comes next, and every request it received.

The next turn comes from the script, from the demo model, or from a *responder*: a function of the
request that returns the turn to play. A responder lets a test answer by what the request contains
(e.g. the tool results the client already has), so a turn lost with a killed client is served again.

Shared by the server's event loop and the tests' thread or loop, so access is under a lock and
changes are announced to watchers (see ``ScriptedGateway.wait_for``) instead of being polled.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .demo import demo_turn
from .dialects import Dialect
from .prompt_cache import PromptCacheModel
from .script import ErrorTurn, RawTurn, ResponseTurn, Script, ScriptError, parse_turn

__all__ = ["SECRET_HEADERS", "GatewayState", "Outcome", "RecordedRequest", "Responder"]

Outcome = Literal[
    "pending",
    "completed",
    "error",
    "cut",
    "disconnected",
    "unauthorized",
    "invalid",
    "script_exhausted",
]

SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "proxy-authorization", "cookie"})
REDACTED = "[redacted]"

PlayedTurn = ResponseTurn | ErrorTurn | RawTurn

Responder = Callable[[Dialect, dict[str, Any]], PlayedTurn | dict[str, Any] | None]
"""Given the dialect and the request body, the turn to play (a turn model or its JSON-shaped data), or
``None`` for "nothing more to say" (answered like a script that ran out)."""


@dataclass(slots=True)
class RecordedRequest:
    """One request as received; secret headers are kept only as ``[redacted]``."""

    index: int
    method: str
    path: str
    dialect: Dialect | None
    headers: dict[str, str]
    body: Any
    received_at: float
    """When the request's head arrived (wall clock, ``time.time()``), before its body was read."""
    turn_index: int | None = None
    outcome: Outcome = "pending"
    chunks_sent: int = 0
    cache_read_tokens: int = 0
    """Prompt-cache tokens the answer reported as read (:mod:`.prompt_cache`)."""
    cache_write_tokens: int = 0
    client_port: int | None = None
    """The client's source port: two requests on one kept-alive connection share it."""
    completed_at: float | None = None
    """When the answer was finished — its last byte handed to the connection — or the request otherwise
    ended (any outcome but ``pending``). With the next request's ``received_at`` it gives the client's
    time from the end of one response to its next request, measured on this side of the wire."""

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "method": self.method,
            "path": self.path,
            "dialect": self.dialect,
            "headers": dict(self.headers),
            "body": self.body,
            "receivedAt": self.received_at,
            "turnIndex": self.turn_index,
            "outcome": self.outcome,
            "chunksSent": self.chunks_sent,
            "cacheReadTokens": self.cache_read_tokens,
            "cacheWriteTokens": self.cache_write_tokens,
            "clientPort": self.client_port,
            "completedAt": self.completed_at,
        }


def redact(headers: list[tuple[bytes, bytes]]) -> dict[str, str]:
    result: dict[str, str] = {}
    for raw_name, raw_value in headers:
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        result[name] = REDACTED if name in SECRET_HEADERS else value
    return result


@dataclass(slots=True)
class GatewayState:
    """The script's cursor (or the demo model) and the request log."""

    script: Script | None
    demo_chunk_delay_ms: int = 0
    max_recorded: int | None = None
    """Keep only the latest requests (a long-running demo gateway must not grow without bound)."""
    responder: Responder | None = None
    """Answers each request instead of a script (``script`` must then be ``None``)."""
    prompt_cache: PromptCacheModel = field(default_factory=PromptCacheModel)
    """The providers' prompt caches, modelled: which prefixes earlier requests left cached."""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _next: int = 0
    _played: int = 0
    _overruns: int = 0
    _responder_errors: list[str] = field(default_factory=list)
    _received: int = 0
    _requests: list[RecordedRequest] = field(default_factory=list)
    _watchers: list[Callable[[], None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.responder is not None and self.script is not None:
            raise ValueError("give a script or a responder, not both")

    @property
    def demo(self) -> bool:
        return self.script is None and self.responder is None

    def record(
        self,
        method: str,
        path: str,
        dialect: Dialect | None,
        headers: dict[str, str],
        body: Any,
        *,
        received_at: float | None = None,
        client_port: int | None = None,
    ) -> RecordedRequest:
        """Record a request; ``received_at`` is when its head arrived (default: now)."""
        arrived = time.time() if received_at is None else received_at
        with self._lock:
            request = RecordedRequest(self._received, method, path, dialect, headers, body, arrived)
            request.client_port = client_port
            self._received += 1
            self._requests.append(request)
            if self.max_recorded is not None and len(self._requests) > self.max_recorded:
                del self._requests[: len(self._requests) - self.max_recorded]
        self._changed()
        return request

    def update(self, request: RecordedRequest, **changes: Any) -> None:
        finished = changes.get("outcome", "pending") != "pending"
        with self._lock:
            for name, value in changes.items():
                setattr(request, name, value)
            if finished and request.completed_at is None:
                request.completed_at = time.time()
        self._changed()

    def next_turn(self, dialect: Dialect, body: dict[str, Any]) -> tuple[int, PlayedTurn] | None:
        """The turn for this request, or ``None`` when the script has run out.

        A responder that raises or answers something that is not a turn is reported by
        :meth:`leftovers` (so ``assert_done`` fails) and the request is answered as if the script ran out.
        """
        if self.responder is not None:
            return self._respond(self.responder, dialect, body)
        if self.script is None:
            with self._lock:
                index = self._played
                self._played += 1
            return index, demo_turn(dialect, body, self.demo_chunk_delay_ms)
        with self._lock:
            turns = self.script.turns
            if self._next < len(turns):
                index = self._next
                self._next += 1
            elif self.script.repeat_last_turn:
                index = len(turns) - 1
            else:
                self._overruns += 1
                return None
            self._played += 1
            return index, turns[index]

    def _respond(
        self, responder: Responder, dialect: Dialect, body: dict[str, Any]
    ) -> tuple[int, PlayedTurn] | None:
        # Called without the lock: a responder may take its time or look at the recorded requests.
        try:
            answer = responder(dialect, body)
            turn = None if answer is None else parse_turn(answer, "responder's turn")
        except ScriptError as exc:
            problem = str(exc)
        except Exception as exc:  # a test's own code: report it through assert_done, not a crash
            problem = f"the responder raised {type(exc).__name__}: {exc}"
        else:
            with self._lock:
                if turn is None:
                    self._overruns += 1
                    return None
                index = self._played
                self._played += 1
            return index, turn
        with self._lock:
            self._responder_errors.append(problem)
            self._overruns += 1
        return None

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            total = len(self.script.turns) if self.script is not None else None
            return {
                "demo": self.script is None and self.responder is None,
                "responder": self.responder is not None,
                "turnsTotal": total,
                "turnsPlayed": self._played,
                "turnsLeft": None if total is None else total - self._next,
                "requestsReceived": self._received,
                "requestsBeyondScript": self._overruns,
                "repeatLastTurn": bool(self.script and self.script.repeat_last_turn),
            }

    def leftovers(self) -> list[str]:
        """Why the script is not done: unplayed turns and requests beyond the script."""
        problems: list[str] = []
        with self._lock:
            if self.script is not None:
                for index in range(self._next, len(self.script.turns)):
                    problems.append(f"turn {index} ({_summary(self.script.turns[index])}) was never played")
            problems.extend(self._responder_errors)
            if self._overruns:
                problems.append(f"{self._overruns} request(s) came after the script ran out")
        return problems

    def watch(self, callback: Callable[[], None]) -> Callable[[], None]:
        with self._lock:
            self._watchers.append(callback)

        def unwatch() -> None:
            with self._lock:
                if callback in self._watchers:
                    self._watchers.remove(callback)

        return unwatch

    def _changed(self) -> None:
        with self._lock:
            watchers = list(self._watchers)
        for watcher in watchers:
            watcher()


def _summary(turn: PlayedTurn) -> str:
    if isinstance(turn, ErrorTurn):
        return f"error {turn.status}"
    if isinstance(turn, RawTurn):
        return f"raw {turn.status}"
    parts = []
    if turn.full_text():
        text = turn.full_text()
        parts.append(f"text {text[:30]!r}{'…' if len(text) > 30 else ''}")
    if turn.tool_calls:
        parts.append("tool calls " + ", ".join(call.name for call in turn.tool_calls))
    return "response: " + ("; ".join(parts) or "empty")
