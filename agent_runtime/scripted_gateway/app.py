"""The gateway's HTTP surface, as a plain ASGI application served by uvicorn.

Plain ASGI rather than a framework because a scripted *cut* must end a response without its last
chunk (the client has to see a broken stream, not a clean end) and a held stream must notice the
client going away; both need the raw ``send``/``receive`` channel, and the few routes need nothing
more.

Routes: ``POST /v1/messages`` (Anthropic), ``POST /v1/chat/completions`` (OpenAI);
``GET /_scripted/requests``, ``GET /_scripted/state``, ``POST /_scripted/release``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from .dialects import (
    Dialect,
    default_message,
    error_body,
    plan,
    response_steps,
    stream_error_event,
)
from .images import image_problem
from .prompt_cache import breakpoint_problem
from .script import ErrorTurn, RawTurn, ResponseTurn
from .state import GatewayState, RecordedRequest, redact

__all__ = ["MAX_REQUEST_BYTES", "GatewayApp", "StreamCut", "install_cut_filter"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

MAX_REQUEST_BYTES = 32 * 1024 * 1024
_FLUSH_BYTES = 32 * 1024
_PACING_SLEEP_S = 0.001
"""With ``chunksPerSecond``: how far ahead of its schedule the stream must be before it sleeps."""

ROUTES: dict[str, Dialect] = {"/v1/messages": "anthropic", "/v1/chat/completions": "openai"}


class StreamCut(Exception):
    """Raised to make uvicorn drop the connection mid-response: a scripted cut, or shutdown."""


class _CutFilter(logging.Filter):
    """Keeps uvicorn from logging a scripted cut as an application error."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], StreamCut))


_CUT_FILTER = _CutFilter()


def install_cut_filter() -> None:
    logger = logging.getLogger("uvicorn.error")
    if _CUT_FILTER not in logger.filters:
        logger.addFilter(_CUT_FILTER)


class GatewayApp:
    def __init__(self, state: GatewayState, *, token: str | None = None) -> None:
        self.state = state
        self._token = token
        self.releases = asyncio.Semaphore(0)
        self.stopping = asyncio.Event()

    def release(self, count: int = 1) -> None:
        """Let ``count`` held streams go on (call on the server's loop)."""
        for _ in range(count):
            self.releases.release()

    def stop(self) -> None:
        """Make streams still playing end at once (call on the server's loop)."""
        self.stopping.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path, method = scope["path"], scope["method"]
        dialect = ROUTES.get(path.rstrip("/") or "/")
        if dialect is not None:
            if method != "POST":
                await _json(send, 405, error_body(dialect, 405, "Use POST"), [(b"allow", b"POST")])
                return
            await self._model_call(scope, receive, send, dialect)
            return
        if path.startswith("/_scripted/"):
            await self._control(scope, receive, send, path, method)
            return
        await _json(send, 404, {"error": {"message": f"No such endpoint: {path[:200]}"}})

    async def _control(self, scope: Scope, receive: Receive, send: Send, path: str, method: str) -> None:
        if not self._authorised(scope, "openai"):
            await _json(send, 401, error_body("openai", 401, default_message(401)))
            return
        if path == "/_scripted/requests" and method == "GET":
            await _json(send, 200, {"requests": [request.to_json() for request in self.state.requests]})
        elif path == "/_scripted/state" and method == "GET":
            await _json(send, 200, {**self.state.snapshot(), "leftovers": self.state.leftovers()})
        elif path == "/_scripted/release" and method == "POST":
            await _read_body(receive, 1024)
            self.release()
            await _json(send, 200, {"released": 1})
        else:
            await _json(send, 404, {"error": {"message": f"No such endpoint: {method} {path[:200]}"}})

    def _authorised(self, scope: Scope, dialect: Dialect) -> bool:
        if self._token is None:
            return True
        expected_bearer = f"Bearer {self._token}".encode()
        expected_key = self._token.encode()
        ok = False
        for name, value in scope["headers"]:
            lowered = name.lower()
            if (lowered == b"authorization" and hmac.compare_digest(value, expected_bearer)) or (
                dialect == "anthropic"
                and lowered == b"x-api-key"
                and hmac.compare_digest(value, expected_key)
            ):
                ok = True
        return ok

    async def _model_call(self, scope: Scope, receive: Receive, send: Send, dialect: Dialect) -> None:
        arrived = time.time()

        def recorded(body: Any) -> RecordedRequest:
            return self.state.record(
                "POST",
                scope["path"],
                dialect,
                redact(scope["headers"]),
                body,
                received_at=arrived,
                client_port=_client_port(scope),
            )

        try:
            raw = await _read_body(receive, MAX_REQUEST_BYTES)
        except _TooLarge:
            self.state.update(recorded(None), outcome="invalid")
            await _json(send, 413, error_body(dialect, 413, "The request body is larger than 32 MiB"))
            return
        if raw is None:
            return
        try:
            body: Any = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            body = None
        record = recorded(body)
        if not self._authorised(scope, dialect):
            self.state.update(record, outcome="unauthorized")
            await _json(send, 401, error_body(dialect, 401, default_message(401)))
            return
        problem = _request_problem(body)
        if problem is not None:
            self.state.update(record, outcome="invalid")
            await _json(send, 422, error_body(dialect, 422, problem))
            return
        assert isinstance(body, dict)
        too_many = breakpoint_problem(dialect, body) or image_problem(dialect, body)
        if too_many is not None:
            self.state.update(record, outcome="invalid")
            await _json(send, 400, error_body(dialect, 400, too_many))
            return
        picked = self.state.next_turn(dialect, body)
        if picked is None:
            self.state.update(record, outcome="script_exhausted")
            message = (
                "The scripted gateway's script ran out of turns: the client sent more requests than scripted"
            )
            await _json(send, 500, error_body(dialect, 500, message))
            return
        turn_index, turn = picked
        self.state.update(record, turn_index=turn_index)
        player = _Player(self, send, receive, record, dialect)
        await player.play(turn, turn_index, body, len(raw))


class _TooLarge(Exception):
    pass


def _client_port(scope: Scope) -> int | None:
    client = scope.get("client")
    return client[1] if client else None


def _request_problem(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "The request body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model must be a non-empty string"
    if not isinstance(body.get("messages"), list):
        return "messages must be an array"
    if body.get("stream") is not True:
        return "The scripted gateway only streams: send stream: true"
    return None


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The request body, or ``None`` if the client went away first."""
    parts = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        parts += message.get("body", b"")
        if len(parts) > limit:
            raise _TooLarge
        if not message.get("more_body", False):
            return bytes(parts)


async def _json(
    send: Send, status: int, payload: Any, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    data = json.dumps(payload, ensure_ascii=False).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


class _Player:
    """Plays one turn on one request: delays, holds, cuts and the events themselves."""

    def __init__(
        self, app: GatewayApp, send: Send, receive: Receive, record: RecordedRequest, dialect: Dialect
    ):
        self._app = app
        self._send = send
        self._receive = receive
        self._record = record
        self._dialect = dialect
        self._disconnected = asyncio.Event()
        self._buffer = bytearray()
        self._chunks = 0

    async def play(
        self, turn: ResponseTurn | ErrorTurn | RawTurn, turn_index: int, body: dict[str, Any], size: int
    ) -> None:
        watcher = asyncio.create_task(self._watch_disconnect())
        try:
            if turn.delay_ms and await self._pause(turn.delay_ms / 1000.0):
                return
            if isinstance(turn, ErrorTurn):
                await self._error(turn)
            elif isinstance(turn, RawTurn):
                await self._raw(turn)
            else:
                await self._response(turn, turn_index, body, size)
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    async def _watch_disconnect(self) -> None:
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                self._disconnected.set()
                return

    async def _pause(self, seconds: float | None) -> bool:
        """Wait ``seconds`` (or, with ``None``, for a release). True when the stream must stop."""
        waiter: asyncio.Future[Any] = asyncio.ensure_future(
            asyncio.sleep(seconds) if seconds is not None else self._app.releases.acquire()
        )
        gone = asyncio.ensure_future(self._disconnected.wait())
        stopping = asyncio.ensure_future(self._app.stopping.wait())
        try:
            await asyncio.wait({waiter, gone, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for future in (waiter, gone, stopping):
                future.cancel()
        if self._disconnected.is_set():
            self._finish("disconnected")
            return True
        if self._app.stopping.is_set():
            await self._cut()
        return False

    def _finish(self, outcome: str) -> None:
        self._app.state.update(self._record, outcome=outcome, chunks_sent=self._chunks)

    async def _flush(self) -> None:
        if self._buffer:
            data = bytes(self._buffer)
            self._buffer.clear()
            await self._send({"type": "http.response.body", "body": data, "more_body": True})

    async def _cut(self) -> None:
        await self._flush()
        self._finish("cut")
        raise StreamCut

    async def _start(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        await self._send({"type": "http.response.start", "status": status, "headers": headers})

    async def _end(self) -> None:
        data = bytes(self._buffer)
        self._buffer.clear()
        await self._send({"type": "http.response.body", "body": data, "more_body": False})

    async def _error(self, turn: ErrorTurn) -> None:
        payload = turn.body
        if payload is None:
            payload = error_body(self._dialect, turn.status, turn.message or default_message(turn.status))
        headers: list[tuple[bytes, bytes]] = []
        if turn.retry_after is not None:
            value = turn.retry_after
            text = f"{value:g}" if isinstance(value, float) else value
            headers.append((b"retry-after", text.encode("latin-1", "replace")))
        await _json(self._send, turn.status, payload, headers)
        self._finish("error")

    async def _raw(self, turn: RawTurn) -> None:
        headers = [(b"content-type", turn.content_type.encode("latin-1", "replace"))]
        headers += [
            (name.encode("latin-1", "replace"), value.encode("latin-1", "replace"))
            for name, value in turn.headers.items()
        ]
        await self._start(turn.status, headers)
        for piece in turn.pieces():
            await self._send({"type": "http.response.body", "body": piece, "more_body": True})
            self._chunks += 1
        if turn.cut:
            await self._cut()
        await self._end()
        self._finish("completed")

    async def _response(self, turn: ResponseTurn, turn_index: int, body: dict[str, Any], size: int) -> None:
        cache = self._app.state.prompt_cache.account(self._dialect, body)
        self._app.state.update(
            self._record, cache_read_tokens=cache.read_tokens, cache_write_tokens=cache.write_tokens
        )
        steps, end = response_steps(self._dialect, plan(self._dialect, turn, turn_index, body, size, cache))
        total = sum(1 for step in steps if step.chunk)
        await self._start(
            200,
            [
                (b"content-type", b"text/event-stream; charset=utf-8"),
                (b"cache-control", b"no-cache"),
                (b"x-scripted-turn", str(turn_index).encode()),
            ],
        )
        loop = asyncio.get_running_loop()
        paced_from = loop.time()
        for step in steps:
            if step.chunk:
                if await self._checkpoint(turn, total):
                    return
                if turn.chunk_delay_ms and self._chunks:
                    await self._flush()
                    if await self._pause(turn.chunk_delay_ms / 1000.0):
                        return
                if turn.chunks_per_second is not None:
                    # Chunk n is due n/rate after the first: sleeping per chunk could not go past
                    # ~1,000 a second (timers have millisecond resolution), a schedule can.
                    ahead = paced_from + self._chunks / turn.chunks_per_second - loop.time()
                    if ahead >= _PACING_SLEEP_S:
                        await self._flush()
                        if await self._pause(ahead):
                            return
                self._chunks += 1
            self._buffer += step.data
            if len(self._buffer) >= _FLUSH_BYTES:
                await self._flush()
            if self._disconnected.is_set():
                self._finish("disconnected")
                return
        if await self._checkpoint(turn, total, final=True):
            return
        for step in end:
            self._buffer += step.data
        await self._end()
        self._finish("completed")

    async def _checkpoint(self, turn: ResponseTurn, total: int, final: bool = False) -> bool:
        """Before chunk number ``self._chunks`` (or after the last): cut, fail or hold as scripted."""

        def due(after: int | None) -> bool:
            return after is not None and (after == self._chunks or (final and after >= total))

        if due(turn.hold_after_chunks):
            await self._flush()
            self._app.state.update(self._record, chunks_sent=self._chunks)
            if await self._pause(None):
                return True
        if due(turn.cut_after_chunks):
            await self._cut()
        if turn.stream_error is not None and due(turn.stream_error.after_chunks):
            error = turn.stream_error
            self._buffer += stream_error_event(
                self._dialect, error.status, error.message or default_message(error.status)
            )
            await self._end()
            self._finish("error")
            return True
        return False
