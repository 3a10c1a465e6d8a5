"""A session with one MCP server over streamable HTTP (MCP 2025-11-25, basic/transports; seed 003 §9).

Written on httpx rather than on the official SDK's client (``mcp.client.streamable_http``), which does
not fit here:

* the SDK 2.x client runs on ``httpx2``, a separate HTTP stack: the runtime's httpx, its ``httpx.Auth``
  (the OAuth flow of ``mcp.oauth``, static bearer tokens) and its TLS settings cannot be handed to it;
* on a 404 for an expired session it fails the request ("Session terminated") where the transport
  spec says to start a new session — here that is done transparently, and the request retried once;
* it caps one SSE event (1 MiB by default), not a response body, and never a JSON body, where seed
  003 §9.3 caps every response at 10 MB;
* it gives a broken-off response stream up after two failed reconnections; here the resumption waits
  the server's ``retry`` each time and only the call's timeout bounds it;
* importing it costs ~380 ms (measured), for a runtime whose start-up is budgeted.

The SDK's server is what the tests run this client against.

The wire, per request: a POST of one JSON-RPC message with ``Accept: application/json,
text/event-stream``, ``Mcp-Session-Id`` once the server gave one and ``MCP-Protocol-Version`` once one
was negotiated. A request is answered with JSON or with an SSE stream that may carry the server's own
requests (``elicitation/create``, ``ping``) and notifications (progress) before the answer. A
notification or our response is answered 202 (a 200 with a body is tolerated). After initialization an
optional GET stream carries what the server sends outside any request (``tools/list_changed``); 405 or
400 there means it has none. Close sends DELETE.

Resumability: a response stream that ends before its answer is reopened with GET and
``Last-Event-ID`` after the server's ``retry`` interval (1 s when it gave none) —
never a backoff of our own — and the call finishes on the new stream. A stream that ended before any
event id cannot be resumed: the call fails.

TLS is required (seed 003 §9.3): plain ``http://`` only to a loopback host, and only when the server's
configuration allows it explicitly.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import ssl
from collections.abc import Callable, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

import httpx

from contracts.addresses import is_loopback_host
from contracts.sse import SseDecoder, SseEventTooLarge
from contracts.urls import UrlRejected, parse_url_host

from .elicitation import ElicitationHandler
from .errors import (
    McpAuthorizationError,
    McpError,
    McpInsecureUrl,
    McpProtocolError,
    McpResponseTooLarge,
    McpTransportError,
)
from .protocol import Call, McpProtocolSession, Message, Progress, ServerInfo, answers, parse_messages

__all__ = [
    "DEFAULT_CALL_TIMEOUT_S",
    "MAX_RESPONSE_BYTES",
    "McpSession",
    "Progress",
    "ServerInfo",
    "check_endpoint",
]

logger = logging.getLogger(__name__)

DEFAULT_CALL_TIMEOUT_S: Final = 120.0
"""Seed 000 §7.4: the per-tool timeout, which MCP tools get like built-in ones (seed 003 §9.3)."""
MAX_RESPONSE_BYTES: Final = 10 * 2**20
"""Seed 003 §9.3: a response body larger than this is aborted."""

_DEFAULT_RETRY_MS: Final = 1000
"""The reconnection time when the server gives no ``retry`` (the SSE standard leaves it to the client)."""
_MAX_SILENT_RESUMPTIONS: Final = 5
"""Resumed streams in a row that bring no new event: the server is not getting anywhere."""
_CONNECT_TIMEOUT_S: Final = 30.0
_CLOSE_TIMEOUT_S: Final = 5.0
_ERROR_BODY_BYTES: Final = 64 * 1024
_LISTEN_FAILURES: Final = 3
_MAX_LISTEN_DELAY_MS: Final = 30_000
_ACCEPT_ANY: Final = "application/json, text/event-stream"
_ACCEPT_SSE: Final = "text/event-stream"


def check_endpoint(url: str, allow_insecure_loopback: bool) -> bool:
    """Raise :class:`McpInsecureUrl` unless ``url`` may be used; return whether its host is loopback."""
    try:
        host = parse_url_host(url)
    except UrlRejected as exc:
        raise McpInsecureUrl(f"The MCP server URL {url!r} cannot be used: {exc}") from None
    loopback = is_loopback_host(host.name)
    if urlsplit(url).scheme.lower() == "https":
        return loopback
    if not loopback:
        raise McpInsecureUrl(
            f"The MCP server URL {url} is plain http:// to another machine; MCP servers are reached over "
            "https:// only (TLS is required)"
        )
    if not allow_insecure_loopback:
        raise McpInsecureUrl(
            f"The MCP server URL {url} is plain http://; that is accepted only for a loopback address, "
            "and only when the server's configuration allows it (allowInsecureLoopback)"
        )
    return True


def _tls_context(url: str) -> ssl.SSLContext:
    # Loading the CA bundle takes ~13 ms (measured: most of a session's start on loopback), so every
    # session shares one context, as the agent host's clients do (agent_host/tls.py, which this package
    # may not import). Plain http:// (loopback only) gets one without any CA: it is never used.
    return (
        _verifying_context() if url.lower().startswith("https:") else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    )


@functools.cache
def _verifying_context() -> ssl.SSLContext:
    return httpx.create_ssl_context()


class McpSession(McpProtocolSession):
    """One streamable-HTTP session. ``open()`` first; ``aclose()`` always (it is idempotent).

    Raises :class:`McpInsecureUrl` on construction when the URL may not be used.
    """

    def __init__(
        self,
        server_name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
        allow_insecure_loopback: bool = False,
        elicitation: ElicitationHandler | None = None,
        on_tools_changed: Callable[[], None] | None = None,
        call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        super().__init__(
            server_name,
            elicitation=elicitation,
            on_tools_changed=on_tools_changed,
            call_timeout_s=call_timeout_s,
            max_response_bytes=max_response_bytes,
        )
        self._loopback = check_endpoint(url, allow_insecure_loopback)
        self.url = url
        self._extra_headers = dict(headers or {})
        self._auth = auth
        self._client: httpx.AsyncClient | None = None
        self._session_id: str | None = None
        self._generation = 0
        self._renewing = asyncio.Lock()
        self._listener: asyncio.Task[None] | None = None

    @property
    def session_id(self) -> str | None:
        """The ``Mcp-Session-Id`` the server assigned (``None`` when it keeps no sessions)."""
        return self._session_id

    # ------------------------------------------------------------------ transport hooks

    async def _connect(self) -> None:
        self._client = httpx.AsyncClient(
            auth=self._auth,
            headers=self._extra_headers,
            timeout=httpx.Timeout(_CONNECT_TIMEOUT_S, read=None),
            follow_redirects=False,
            verify=_tls_context(self.url),
            # No proxy from the environment for a server on this machine.
            trust_env=not self._loopback,
        )

    async def _exchange(self, message: Message, call: Call) -> Message:
        generation = self._generation
        response = await self._post(message)
        if response.status_code == 404 and _had_session(response) and call.method != "initialize":
            # The server ended the session; the spec says start a new one. The request was not
            # processed, so sending it again on the new session is safe.
            await response.aclose()
            await self._renew(generation)
            response = await self._post(message)
        try:
            if call.method == "initialize":
                self._take_session_id(response)
            await self._check_status(response, call.method)
            kind = _content_type(response)
            if kind == "application/json":
                answer: Message | None = None
                for received in parse_messages(await self._read_body(response), self.server_name):
                    # An error without an id answers the request it could not read (JSON-RPC 2.0 §5).
                    if answers(received, call.request_id) or (
                        "error" in received and received.get("id") is None
                    ):
                        answer = received
                    else:
                        self._incoming(received, call)
                if answer is None:
                    raise McpTransportError(f"The MCP server {self.server_name} did not answer {call.method}")
                return answer
            if kind == "text/event-stream":
                return await self._follow_stream(response, call)
            raise McpTransportError(
                f"The MCP server {self.server_name} answered {call.method} with HTTP {response.status_code} "
                f"and {kind or 'no content type'} instead of JSON or an event stream"
            )
        finally:
            await response.aclose()

    async def _send(self, message: Message) -> None:
        response = await self._post(message)
        what = str(message.get("method", "a response"))
        try:
            if response.status_code in (200, 202, 204):
                # 202 is what the spec says; a 200 with a body is tolerated and the body dropped.
                await self._read_prefix(response, _ERROR_BODY_BYTES)
                return
            await self._check_status(response, what)
        finally:
            await response.aclose()

    async def _session_started(self) -> None:
        generation = self._generation
        self._listener = asyncio.create_task(self._listen(generation), name=f"mcp-listen-{self.server_name}")

    async def _disconnect(self) -> None:
        await self._stop_listener()
        client, self._client = self._client, None
        if client is None:
            return
        try:
            if self._session_id is not None:
                # The spec's "SHOULD send DELETE"; a 405 says the server does not let clients end sessions.
                try:
                    async with asyncio.timeout(_CLOSE_TIMEOUT_S):
                        request = client.build_request(
                            "DELETE", self.url, headers=self._mcp_headers(_ACCEPT_ANY)
                        )
                        response = await client.send(request, stream=True)
                        await response.aclose()
                except (httpx.HTTPError, TimeoutError) as exc:
                    logger.info("Could not end the session with MCP server %s: %r", self.server_name, exc)
                self._session_id = None
        finally:
            await client.aclose()

    # ------------------------------------------------------------------ requests on the wire

    def _mcp_headers(
        self, accept: str, *, last_event_id: str | None = None, body: bool = False
    ) -> dict[str, str]:
        headers = {"Accept": accept}
        if body:
            headers["Content-Type"] = "application/json"
        if self._session_id is not None:
            headers["Mcp-Session-Id"] = self._session_id
        if self._version is not None:
            headers["MCP-Protocol-Version"] = self._version
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        return headers

    async def _post(self, message: Message) -> httpx.Response:
        body = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()
        return await self._open("POST", self._mcp_headers(_ACCEPT_ANY, body=True), body)

    async def _open(self, method: str, headers: dict[str, str], body: bytes | None = None) -> httpx.Response:
        client = self._client
        if client is None:
            raise McpError(f"The session with the MCP server {self.server_name} is not open")
        request = client.build_request(method, self.url, headers=headers, content=body)
        try:
            return await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise McpTransportError(
                f"Could not reach the MCP server {self.server_name}: {_describe(exc)}"
            ) from exc

    def _take_session_id(self, response: httpx.Response) -> None:
        session_id = response.headers.get("mcp-session-id")
        if session_id is not None and not (
            0 < len(session_id) <= 1024 and all("!" <= c <= "~" for c in session_id)
        ):
            raise McpTransportError(f"The MCP server {self.server_name} assigned a malformed session id")
        self._session_id = session_id

    async def _check_status(self, response: httpx.Response, what: str) -> None:
        status = response.status_code
        if 200 <= status < 300:
            return
        if status in (401, 403):
            raise McpAuthorizationError(status, _auth_detail(response))
        if status == 404 and _had_session(response):
            raise McpTransportError(f"The MCP server {self.server_name} ended the session during {what}")
        if 300 <= status < 400:
            location = response.headers.get("location", "?")
            raise McpTransportError(
                f"The MCP server {self.server_name} redirected {what} to {location}; redirects are not "
                "followed (configure that URL if it is the intended server)"
            )
        error = _jsonrpc_error(await self._read_prefix(response, _ERROR_BODY_BYTES))
        if error is not None:
            raise error
        raise McpTransportError(f"The MCP server {self.server_name} answered {what} with HTTP {status}")

    async def _read_body(self, response: httpx.Response) -> bytes:
        limit = self._max_response_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise McpResponseTooLarge(limit)
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    raise McpResponseTooLarge(limit)
                chunks.append(chunk)
        except httpx.HTTPError as exc:
            raise McpTransportError(
                f"The MCP server {self.server_name}'s answer broke off: {_describe(exc)}"
            ) from exc
        return b"".join(chunks)

    async def _read_prefix(self, response: httpx.Response, limit: int) -> bytes:
        """Up to ``limit`` bytes of a body we only glance at (an error, a tolerated 200)."""
        chunks: list[bytes] = []
        size = 0
        with contextlib.suppress(httpx.HTTPError):
            async for chunk in response.aiter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size >= limit:
                    break
        return b"".join(chunks)[:limit]

    # ------------------------------------------------------------------ streams

    async def _follow_stream(self, response: httpx.Response, call: Call) -> Message:
        """The answer on ``response``'s event stream, resuming it with GET as often as it breaks off."""
        decoder = SseDecoder(max_event_chars=self._max_response_bytes)
        silent = 0
        while True:
            before = decoder.last_event_id
            try:
                answer = await self._pump(response, decoder, call)
            finally:
                await response.aclose()
            if answer is not None:
                return answer
            if decoder.last_event_id is None:
                raise McpTransportError(
                    f"The MCP server {self.server_name} ended the stream of {call.method} before answering, "
                    "without an event id to resume from"
                )
            silent = silent + 1 if decoder.last_event_id == before else 0
            if silent >= _MAX_SILENT_RESUMPTIONS:
                raise McpTransportError(
                    f"The MCP server {self.server_name} keeps ending the stream of {call.method} "
                    "without making progress"
                )
            # 2025-11-25: the client MUST wait the retry interval the server gave before reconnecting.
            retry_ms = decoder.retry_ms if decoder.retry_ms is not None else _DEFAULT_RETRY_MS
            await asyncio.sleep(retry_ms / 1000)
            response = await self._resume(decoder.last_event_id, call)
            decoder = SseDecoder(
                last_event_id=decoder.last_event_id,
                retry_ms=decoder.retry_ms,
                max_event_chars=self._max_response_bytes,
            )

    async def _resume(self, last_event_id: str, call: Call) -> httpx.Response:
        response = await self._open("GET", self._mcp_headers(_ACCEPT_SSE, last_event_id=last_event_id))
        try:
            await self._check_status(response, f"the resumption of {call.method}")
            if _content_type(response) != "text/event-stream":
                raise McpTransportError(
                    f"The MCP server {self.server_name} cannot resume the stream of {call.method}"
                )
        except BaseException:
            await response.aclose()
            raise
        return response

    async def _pump(self, response: httpx.Response, decoder: SseDecoder, call: Call) -> Message | None:
        """Read events until the answer to ``call`` (returned) or the end of the stream (``None``)."""
        received = 0
        try:
            async for chunk in response.aiter_bytes():
                received += len(chunk)
                if received > self._max_response_bytes:
                    raise McpResponseTooLarge(self._max_response_bytes)
                for event in decoder.feed(chunk):
                    # An event without data (the server's "priming" event) only moves the cursor.
                    if event.event != "message" or not event.data:
                        continue
                    for message in parse_messages(event.data.encode(), self.server_name):
                        if answers(message, call.request_id):
                            return message
                        self._incoming(message, call)
        except SseEventTooLarge:
            raise McpResponseTooLarge(self._max_response_bytes) from None
        except httpx.HTTPError as exc:
            # Disconnection may happen at any time and is not a cancellation (2025-11-25): resumable.
            logger.info("The stream of MCP server %s broke off: %s", self.server_name, _describe(exc))
        return None

    async def _listen(self, generation: int) -> None:
        """The optional GET stream: what the server sends outside any request, for this session.

        Reopened when it ends, after the server's ``retry`` interval; a server that keeps closing it
        without a word or an interval is asked less and less often (every 30 s at most).
        """
        last_event_id: str | None = None
        retry_ms: int | None = None
        quiet = failures = 0
        try:
            while not self._closed and generation == self._generation and failures < _LISTEN_FAILURES:
                try:
                    response = await self._open(
                        "GET", self._mcp_headers(_ACCEPT_SSE, last_event_id=last_event_id)
                    )
                except McpError as exc:
                    logger.info("MCP server %s: the GET stream could not open: %s", self.server_name, exc)
                    failures += 1
                else:
                    try:
                        if response.status_code != 200 or _content_type(response) != "text/event-stream":
                            # 405 (or 400): the server offers no such stream. 404: the session ended,
                            # and the next request starts a new one, with a stream of its own.
                            logger.debug(
                                "MCP server %s has no GET stream (HTTP %s)",
                                self.server_name,
                                response.status_code,
                            )
                            return
                        decoder = SseDecoder(
                            last_event_id=last_event_id,
                            retry_ms=retry_ms,
                            max_event_chars=self._max_response_bytes,
                        )
                        heard = await self._listen_once(response, decoder)
                        failures = failures + 1 if heard is None else 0
                        quiet = quiet + 1 if not heard else 0
                        last_event_id, retry_ms = decoder.last_event_id, decoder.retry_ms
                    finally:
                        await response.aclose()
                delay_ms = retry_ms if retry_ms is not None else _DEFAULT_RETRY_MS * 2 ** min(quiet, 5)
                await asyncio.sleep(min(delay_ms, _MAX_LISTEN_DELAY_MS) / 1000)
        except (McpTransportError, SseEventTooLarge) as exc:
            logger.warning("MCP server %s: stopped listening on its GET stream: %s", self.server_name, exc)
        except Exception:
            logger.exception("The GET stream of MCP server %s failed", self.server_name)

    async def _listen_once(self, response: httpx.Response, decoder: SseDecoder) -> int | None:
        """Dispatch what ``response`` carries until it ends: how many messages; ``None`` if it broke off."""
        heard = 0
        try:
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(chunk):
                    if event.event == "message" and event.data:
                        for message in parse_messages(event.data.encode(), self.server_name):
                            heard += 1
                            self._incoming(message, None)
        except httpx.HTTPError:
            return None
        return heard

    async def _stop_listener(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener

    async def _renew(self, generation: int) -> None:
        """A new session after the server ended ours (once, however many requests noticed it)."""
        async with self._renewing:
            if generation != self._generation:
                return
            logger.info("MCP server %s ended the session; starting a new one", self.server_name)
            self._generation += 1
            self._session_id = None
            await self._stop_listener()
            await self._handshake()
        # A new session may list other tools than the old one did.
        if self._on_tools_changed is not None:
            try:
                self._on_tools_changed()
            except Exception:
                logger.exception("The MCP session's on_tools_changed callback failed")


def _had_session(response: httpx.Response) -> bool:
    return "mcp-session-id" in response.request.headers


def _content_type(response: httpx.Response) -> str:
    value: str = response.headers.get("content-type", "")
    return value.partition(";")[0].strip().lower()


def _jsonrpc_error(body: bytes) -> McpProtocolError | None:
    """The JSON-RPC error a non-2xx body may carry (the spec allows one without an id)."""
    try:
        parsed: Any = json.loads(body)
    except (ValueError, RecursionError):
        return None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("code"), int):
        return None
    return McpProtocolError(error["code"], str(error.get("message", "")), error.get("data"))


def _auth_detail(response: httpx.Response) -> str:
    challenge: str = response.headers.get("www-authenticate", "")
    fields: dict[str, str] = {}
    for part in challenge.split(","):
        name, _, value = part.strip().partition("=")
        fields[name.rpartition(" ")[2].lower()] = value.strip('"')
    return fields.get("error_description") or fields.get("error") or ""


def _describe(exc: httpx.HTTPError) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
