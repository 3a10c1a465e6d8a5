"""The LLM gateway client: one streamed call, retried as seed 000 §6.4 says, one normalised result.

``LlmClient.stream`` sends the request (§6.2), hands text chunks to ``on_text`` as they arrive, keeps
tool calls until the response is complete (§6.3), and returns an :class:`LlmResponse` — or raises an
:class:`LlmError`:

* 429, 5xx/408, timeouts, unreachable gateway, a stream that breaks before its terminal event, an
  error event mid-stream that stands for one of those, a tool call whose arguments do not parse: up to
  ``RetrySettings.max_retries`` retries (3: four attempts), waiting with full jitter or as
  ``Retry-After`` says; then :class:`LlmRetriesExhausted` carrying the last cause (the loop pauses the
  session). A partly streamed attempt is thrown away whole, ``on_discard`` is called, and the whole
  request is sent again — the thread is untouched, so this is safe (§6.4).
* A 400 (or 403) whose body says the content was blocked → :class:`LlmGuardrailBlocked`; any other
  4xx and redirects → :class:`LlmRejected` in the gateway's own words; a stream that is not the
  dialect's → :class:`LlmProtocolError`. Never retried.
* Cancellation: ``asyncio.CancelledError`` propagates after the HTTP stream and its connection are
  closed; nothing partial is returned and no callback runs.

Connections: by default one per call, as seed 000 §6.1 says — each attempt opens its own
``httpx.AsyncClient`` without keep-alive and closes it on every path. With ``keep_alive_s`` (what the
runtime uses, docs/decisions/0001-llm-connection-reuse.md) one pooled connection is kept between calls
for at most that long idle, and a connection the gateway closed meanwhile is replaced by a new one; a
request that fails on a kept connection is retried only as any failed attempt is (§6.4), never more.
Proxies and CA bundles from the environment (``HTTPS_PROXY``, ``NO_PROXY``, ``SSL_CERT_FILE``)
apply — a corporate proxy in front of the gateway is legitimate — except for a loopback endpoint
(the demo model, a local Ollama), which no proxy can serve.
Redirects are not followed, so the token never travels to a host it was not configured for.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import random as random_module
import socket
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import httpx

from agent_runtime.agent_host.tls import tls_context
from contracts.gateway_http import auth_headers
from contracts.messages import ConversationMessage
from contracts.policy import LlmPolicy
from contracts.retry import RetryAfter, call_with_retries
from contracts.tools import ToolDefinition

from . import anthropic, openai
from .config import DEFAULT_TIMEOUTS, MODEL_VARIABLE, GatewayConfig, RetrySettings, Timeouts, is_loopback
from .conversation import build_turns
from .errors import (
    LlmConfigError,
    LlmError,
    LlmMalformedToolCall,
    LlmProtocolError,
    LlmRejected,
    LlmRetriesExhausted,
    LlmStreamBroken,
    LlmTimeout,
    LlmTransientError,
    LlmUnreachable,
)
from .gateway_errors import MAX_ERROR_BODY_BYTES, error_for_status
from .prompt_cache import ProviderFamily, StablePrefix, cache_mode, provider_family
from .request_body import BodyEncoder, DialectWriter
from .response import DiscardCallback, LlmResponse, RetryCallback, TextCallback
from .sse import MAX_EVENT_CHARS, SseDecoder
from .streaming import Outcome, StreamParser
from .tool_names import ToolNameMap, names_from_wire, names_to_wire

__all__ = ["LlmClient"]

logger = logging.getLogger(__name__)

USER_AGENT = "cowork-agent-runtime"

_BODY_END_WAIT_S = 0.05
_BODY_END_MAX_BYTES = 64 * 1024

_BUILDERS = {"anthropic": anthropic.build_body, "openai": openai.build_body}
_RENDER_SYSTEM = {"anthropic": anthropic.render_system, "openai": openai.render_system}
_RENDER_TOOLS = {"anthropic": anthropic.render_tools, "openai": openai.render_tools}
_WRITERS: dict[str, DialectWriter] = {"anthropic": anthropic, "openai": openai}


@dataclass(frozen=True, slots=True)
class _Request:
    """A call's inputs as they go on the wire (model chosen, MCP tool names mapped)."""

    model: str
    max_tokens: int
    system_prompt: str
    messages: Sequence[ConversationMessage]
    tools: Sequence[ToolDefinition]
    cache_key: str | None


@dataclass(frozen=True, slots=True)
class _PrefixMemo:
    """The stable prefix of the latest inputs: it is asked for twice a step, and hashing the rendered
    tool definitions costs a fraction of a millisecond each time."""

    model: str
    system_prompt: str
    tools: tuple[ToolDefinition, ...]
    wire_names: tuple[str | None, ...]
    prefix: StablePrefix

    def matches(
        self,
        model: str,
        system_prompt: str,
        tools: Sequence[ToolDefinition],
        wire_names: tuple[str | None, ...],
    ) -> bool:
        return (
            model == self.model
            and system_prompt == self.system_prompt
            and wire_names == self.wire_names
            and len(tools) == len(self.tools)
            and all(a is b for a, b in zip(tools, self.tools, strict=True))
        )


@dataclass(slots=True)
class _Attempt:
    delivered: bool = False
    responded: bool = False
    sent_at: float = 0.0
    first_event_at: float | None = None
    """``time.monotonic()`` when its stream's first event arrived (the time to first token)."""


class LlmClient:
    """Calls one LLM gateway. Cheap to create; holds no connection between calls."""

    def __init__(
        self,
        config: GatewayConfig,
        *,
        timeouts: Timeouts = DEFAULT_TIMEOUTS,
        retry: RetrySettings | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        random: Callable[[], float] = random_module.random,
        clock: Callable[[], float] = time.time,
        trust_env: bool | None = None,
        max_event_chars: int = MAX_EVENT_CHARS,
        tool_names: ToolNameMap | None = None,
        keep_alive_s: float = 0.0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        """``sleep``, ``random`` and ``clock`` (wall time, for HTTP-date ``Retry-After``) are injected so
        tests control backoff; ``trust_env=None`` means "yes, unless the gateway is on loopback".
        ``keep_alive_s``: keep one connection between calls for at most this long idle (0: a new
        connection per call); then :meth:`aclose` closes it. ``tls``: the context that verifies the
        gateway (default: the system's CAs, see :mod:`agent_runtime.agent_host.tls`)."""
        if keep_alive_s < 0:
            raise ValueError("keep_alive_s must not be negative")
        self._config = config
        self.task_model: str | None = None
        """The model the running task asked for (``taskOptions.model``), in place of the configured one."""
        self._url = config.url
        self._host = httpx.URL(config.url).host
        self._timeouts = timeouts
        self._retry = retry or RetrySettings()
        self._sleep = sleep
        self._random = random
        self._clock = clock
        self._trust_env = not is_loopback(config.endpoint) if trust_env is None else trust_env
        self._max_event_chars = max_event_chars
        self._keep_alive_s = keep_alive_s
        self._tls = tls
        self._pool: httpx.AsyncClient | None = None
        self._encoder = BodyEncoder(_WRITERS[config.dialect])
        self._prefix_memo: _PrefixMemo | None = None
        self.tool_names = tool_names
        """Maps MCP tools' ``server/tool`` names to and from the LLM wire (:mod:`.tool_names`)."""
        self._headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            # Compression would make intermediaries buffer the stream; events are small anyway.
            "accept-encoding": "identity",
            "user-agent": USER_AGENT,
            **({} if keep_alive_s else {"connection": "close"}),
            **auth_headers(config.dialect, config.token, self._host),
        }

    @property
    def config(self) -> GatewayConfig:
        return self._config

    @property
    def url(self) -> str:
        return self._url

    def model_for(self, policy: LlmPolicy) -> str:
        """The model a call under ``policy`` asks for (seed 000 §6.2); :class:`LlmConfigError` if none."""
        model = policy.choose_model(self.task_model or self._config.model)
        if model is None or not model.strip():
            if self._config.model:
                raise LlmConfigError(
                    f"The policy does not allow the model {self._config.model[:100]} and names no other",
                    details={"variable": MODEL_VARIABLE, "field": "allowedModels"},
                )
            raise LlmConfigError(
                f"No model to call: the policy allows any model, so set {MODEL_VARIABLE}",
                details={"variable": MODEL_VARIABLE},
            )
        return model.strip()

    def provider_family(self, model: str) -> ProviderFamily:
        """Seed 002's provider family of this gateway and ``model``."""
        return provider_family(self._config.dialect, self._host, model)

    def transport_token_field(self, model: str) -> str:
        """The body field that carries the output limit for ``model`` at this gateway."""
        if self._config.dialect == "anthropic":
            return "max_tokens"
        return openai.max_tokens_field(model, self._host)

    def stable_prefix(
        self, *, policy: LlmPolicy, system_prompt: str, tools: Sequence[ToolDefinition]
    ) -> StablePrefix:
        """The stable prefix (system prompt and tool definitions, as this dialect sends them) of the
        calls this client makes with these inputs (:mod:`.prompt_cache`)."""
        model = self.model_for(policy)
        names = self.tool_names
        wire_names = tuple(
            names.wire_name(tool.tool_name) if names is not None and "/" in tool.tool_name else None
            for tool in tools
        )
        memo = self._prefix_memo
        if memo is not None and memo.matches(model, system_prompt, tools, wire_names):
            return memo.prefix
        dialect = self._config.dialect
        wire_tools = names_to_wire(names, tools, ())[0] if names is not None else tools
        prefix = StablePrefix.of(
            provider_family=self.provider_family(model),
            mode=cache_mode(dialect, self._host),
            model=model,
            system_blocks=[system_prompt] if system_prompt.strip() else [],
            rendered_system=_RENDER_SYSTEM[dialect](system_prompt),
            rendered_tools=_RENDER_TOOLS[dialect](wire_tools),
        )
        self._prefix_memo = _PrefixMemo(model, system_prompt, tuple(tools), wire_names, prefix)
        return prefix

    def build_body(
        self,
        *,
        policy: LlmPolicy,
        system_prompt: str,
        messages: Sequence[ConversationMessage],
        tools: Sequence[ToolDefinition],
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        """The JSON body this client sends for these inputs (seed 000 §6.2). ``max_tokens``: the output
        limit, by default the policy's ``maxOutputTokens``."""
        request = self._request(policy, system_prompt, messages, tools, max_tokens)
        turns = build_turns(request.messages)
        if not turns:
            raise LlmRejected("The conversation has no message to send to the model")
        return _BUILDERS[self._config.dialect](
            model=request.model,
            max_tokens=request.max_tokens,
            system=request.system_prompt,
            turns=turns,
            tools=request.tools,
            host=self._host,
            cache_key=request.cache_key,
        )

    def encode_body(
        self,
        *,
        policy: LlmPolicy,
        system_prompt: str,
        messages: Sequence[ConversationMessage],
        tools: Sequence[ToolDefinition],
        max_tokens: int | None = None,
    ) -> bytes:
        """:meth:`build_body` as the bytes sent, byte for byte the same, built from the previous
        call's turns where they are unchanged (:mod:`.request_body`)."""
        return self._encode(self._request(policy, system_prompt, messages, tools, max_tokens))

    def _encode(self, request: _Request) -> bytes:
        content = self._encoder.encode(
            model=request.model,
            max_tokens=request.max_tokens,
            system=request.system_prompt,
            messages=request.messages,
            tools=request.tools,
            host=self._host,
            cache_key=request.cache_key,
        )
        if content is None:
            raise LlmRejected("The conversation has no message to send to the model")
        return content

    def _request(
        self,
        policy: LlmPolicy,
        system_prompt: str,
        messages: Sequence[ConversationMessage],
        tools: Sequence[ToolDefinition],
        max_tokens: int | None,
    ) -> _Request:
        model = self.model_for(policy)
        if self._config.model and model != self._config.model:
            logger.warning("the policy does not allow model %s; calling %s", self._config.model, model)
        prefix = self.stable_prefix(policy=policy, system_prompt=system_prompt, tools=tools)
        if self.tool_names is not None:
            tools, messages = names_to_wire(self.tool_names, tools, messages)
        return _Request(
            model=model,
            max_tokens=policy.max_output_tokens if max_tokens is None else max_tokens,
            system_prompt=system_prompt,
            messages=messages,
            tools=tools,
            cache_key=prefix.cache_key,
        )

    async def stream(
        self,
        *,
        policy: LlmPolicy,
        system_prompt: str,
        messages: Sequence[ConversationMessage],
        tools: Sequence[ToolDefinition],
        on_text: TextCallback | None = None,
        on_discard: DiscardCallback | None = None,
        on_retry: RetryCallback | None = None,
        before_retry: Callable[[], Awaitable[None] | None] | None = None,
        max_tokens: int | None = None,
    ) -> LlmResponse:
        """One LLM call with retries; see the module docstring for every outcome.

        ``before_retry`` runs after the backoff, immediately before each retry is sent: the caller's
        last word on whether the call may still be made (the policy may have expired meanwhile). An
        exception raised by a callback is the caller's own: it propagates as is, after the stream is
        closed, and ends the call without a retry.
        """
        request = self._request(policy, system_prompt, messages, tools, max_tokens)
        content = self._encode(request)
        started = time.monotonic()
        attempts = 0
        attempt = _Attempt(sent_at=started)

        async def one() -> Outcome:
            nonlocal attempts, attempt
            attempts += 1
            attempt = _Attempt(sent_at=time.monotonic())
            try:
                return await self._attempt(content, attempt, on_text)
            except LlmError:
                if attempt.delivered and on_discard is not None:
                    await _call(on_discard)
                raise

        def retry_on(error: Exception, _: int) -> RetryAfter | None:
            if isinstance(error, LlmTransientError):
                return RetryAfter(error.retry_after_s)
            return RetryAfter() if isinstance(error, LlmMalformedToolCall) else None

        def give_up(error: Exception, tried: int) -> NoReturn:
            assert isinstance(error, LlmError)
            logger.warning("LLM call failed after %d attempts: %s", tried, error.message)
            raise LlmRetriesExhausted(error, tried) from error

        async def before_wait(tried: int, delay: float, error: Exception) -> None:
            message = error.message if isinstance(error, LlmError) else str(error)
            logger.info("LLM call attempt %d failed (%s); retry in %.1f s", tried, message, delay)
            if on_retry is not None:
                await _call(on_retry, tried, delay, message)

        outcome = await call_with_retries(
            one,
            self._retry,
            retry_on=retry_on,
            give_up=give_up,
            before_wait=before_wait,
            after_wait=before_retry,
            sleep=self._sleep,
            random=self._random,
        )
        calls = outcome.tool_calls
        if self.tool_names is not None:
            calls = names_from_wire(self.tool_names, calls)
        return LlmResponse(
            text=outcome.text,
            tool_calls=calls,
            stop_reason=outcome.stop_reason,
            usage=outcome.usage,
            model=outcome.model or request.model,
            latency_ms=(time.monotonic() - started) * 1000.0,
            first_token_ms=None
            if attempt.first_event_at is None
            else (attempt.first_event_at - attempt.sent_at) * 1000.0,
            attempts=attempts,
            raw_stop_reason=outcome.raw_stop_reason,
            message_id=outcome.message_id,
        )

    def _parser(self) -> StreamParser:
        if self._config.dialect == "anthropic":
            return anthropic.AnthropicStream(now=self._clock)
        return openai.OpenAiStream(now=self._clock)

    async def aclose(self) -> None:
        """Close the kept connection, if any; a later call opens a new one."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.aclose()

    def _http_client(self) -> httpx.AsyncClient:
        # The pool may hold 2: a call made while another one streams (never the loop's own) opens its
        # own connection instead of waiting; only one is kept once idle.
        pooled = bool(self._keep_alive_s)
        return httpx.AsyncClient(
            timeout=httpx.Timeout(
                connect=self._timeouts.connect_s,
                read=self._timeouts.read_s,
                write=self._timeouts.connect_s,
                pool=self._timeouts.connect_s,
            ),
            trust_env=self._trust_env,
            verify=self._tls if self._tls is not None else tls_context(self._url, trust_env=self._trust_env),
            follow_redirects=False,
            limits=httpx.Limits(
                max_connections=2 if pooled else 1,
                max_keepalive_connections=1 if pooled else 0,
                keepalive_expiry=self._keep_alive_s if pooled else None,
            ),
        )

    async def _attempt(self, content: bytes, attempt: _Attempt, on_text: TextCallback | None) -> Outcome:
        if self._keep_alive_s:
            if self._pool is None:
                self._pool = self._http_client()
            return await self._exchange(self._pool, content, attempt, on_text)
        async with self._http_client() as client:
            return await self._exchange(client, content, attempt, on_text)

    async def _exchange(
        self, client: httpx.AsyncClient, content: bytes, attempt: _Attempt, on_text: TextCallback | None
    ) -> Outcome:
        try:
            async with client.stream("POST", self._url, content=content, headers=self._headers) as response:
                attempt.responded = True
                if not 200 <= response.status_code < 300:
                    body = await _read_capped(response, MAX_ERROR_BODY_BYTES)
                    raise error_for_status(response.status_code, body, response.headers, self._clock)
                content_type = response.headers.get("content-type", "")
                if "text/event-stream" not in content_type.lower():
                    raise LlmProtocolError(
                        "The LLM gateway answered with "
                        f"{_printable(content_type) or 'no content type'} instead of an event stream. "
                        "Check LLM_GATEWAY_ENDPOINT and LLM_GATEWAY_API.",
                        details={"status": response.status_code, "contentType": _printable(content_type)},
                    )
                return await self._read_stream(response, attempt, on_text)
        except httpx.TimeoutException as exc:
            raise LlmTimeout(
                "The LLM gateway did not answer in time"
                if not attempt.responded
                else "The LLM gateway's stream stalled past the read timeout",
                details={"connectTimeoutS": self._timeouts.connect_s, "readTimeoutS": self._timeouts.read_s},
            ) from exc
        except httpx.DecodingError as exc:
            raise LlmProtocolError("The LLM gateway sent a body that could not be decoded") from exc
        except httpx.TransportError as exc:
            if attempt.responded:
                raise LlmStreamBroken(
                    "The LLM gateway's stream broke off before the response was complete"
                ) from exc
            raise LlmUnreachable(
                "The LLM gateway could not be reached",
                details={"reason": type(exc).__name__, "networkError": _network_error(exc)},
            ) from exc

    async def _read_stream(
        self, response: httpx.Response, attempt: _Attempt, on_text: TextCallback | None
    ) -> Outcome:
        decoder = SseDecoder(self._max_event_chars)
        parser = self._parser()
        chunks = response.aiter_bytes()
        async for chunk in chunks:
            if attempt.first_event_at is None:
                attempt.first_event_at = time.monotonic()
            for event in decoder.feed(chunk):
                text = parser.event(event)
                if text is not None and on_text is not None:
                    attempt.delivered = True
                    result = on_text(text)
                    if result is not None and inspect.isawaitable(result):
                        await result
                if parser.done:
                    if self._keep_alive_s:
                        await _read_to_end(chunks)
                    return parser.outcome()
        for event in decoder.finish():
            text = parser.event(event)
            if text is not None and on_text is not None:
                attempt.delivered = True
                await _call(on_text, text)
            if parser.done:
                return parser.outcome()
        raise LlmStreamBroken(
            "The LLM gateway's stream ended before the response was complete",
            details={"incompleteEvent": decoder.pending},
        )


async def _call(callback: Callable[..., Awaitable[None] | None], *args: Any) -> None:
    result = callback(*args)
    if result is not None and inspect.isawaitable(result):
        await result


async def _read_to_end(chunks: AsyncIterator[bytes]) -> None:
    """Read what follows the stream's terminal event — normally just the body's end, in the same
    packet — so the connection is clean and can be kept. A server that keeps sending or stays silent
    is not waited for: the response is then closed with the connection, as one of a single call is."""
    size = 0
    try:
        async with asyncio.timeout(_BODY_END_WAIT_S):
            async for chunk in chunks:
                size += len(chunk)
                if size > _BODY_END_MAX_BYTES:
                    return
    except (TimeoutError, httpx.HTTPError):
        pass


async def _read_capped(response: httpx.Response, limit: int) -> bytes:
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) >= limit:
            break
    return bytes(body[:limit])


def _network_error(exc: BaseException) -> str:
    """The operating system's words for why a connection failed ("connection refused", "name or
    service not known"): httpx and anyio wrap the socket's error, and their own text ("All connection
    attempts failed") hides which it was."""
    found: OSError | None = None
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError):
            found = current
        current = current.__cause__ or current.__context__
    if isinstance(found, socket.gaierror):
        return f"its host name could not be resolved ({found.strerror or found})"
    if found is not None and isinstance(found.errno, int) and found.errno > 0:
        return os.strerror(found.errno).lower()
    return str(found or exc)[:200] or type(exc).__name__


def _printable(text: str) -> str:
    return "".join(ch for ch in text[:100] if ch.isprintable())
