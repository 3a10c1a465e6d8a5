"""Settings → Test connection: one small request to the LLM gateway, and a precise answer. Qt-free.

The request is the one the runtime makes, shrunk to a single output token: a streamed
``POST …/v1/messages`` (Anthropic dialect) or ``…/chat/completions`` (OpenAI) with the chosen model
and token, to the URL and with the headers the runtime uses (:mod:`contracts.gateway_http`). Only the
status line and, for an error, the first part of the body are read; the stream of a working gateway
is closed unread. So the answer distinguishes what a user can fix: the gateway cannot be reached (and
why), it does not accept the token (401/403), it does not know the model (404, or its own message
saying so), it works — or whatever else it said, in its own words.
"""

from __future__ import annotations

import json
import ssl
from dataclasses import dataclass
from enum import Enum
from typing import Any

import httpx

from contracts.gateway_http import Dialect, auth_headers, request_url

__all__ = ["ConnectionResult", "Outcome", "check_connection", "gateway_message"]

TIMEOUT_S = 15.0
_MAX_ERROR_BYTES = 16 * 1024
_MAX_MESSAGE_CHARS = 300


class Outcome(Enum):
    OK = "ok"
    UNREACHABLE = "unreachable"
    UNAUTHORIZED = "unauthorized"
    UNKNOWN_MODEL = "unknown_model"
    GATEWAY_ERROR = "gateway_error"


@dataclass(frozen=True)
class ConnectionResult:
    outcome: Outcome
    detail: str = ""
    """The reason (unreachable) or the gateway's own message (errors); empty when OK."""
    status: int | None = None


def _headers(dialect: Dialect, token: str | None, host: str) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "accept": "text/event-stream",
        **auth_headers(dialect, token, host),
    }


def _body(model: str) -> dict[str, Any]:
    """The same shape in both dialects: one user message, one output token, streamed."""
    return {"model": model, "max_tokens": 1, "stream": True, "messages": [{"role": "user", "content": "OK?"}]}


async def check_connection(
    endpoint: str,
    dialect: str,
    model: str,
    token: str | None,
    *,
    timeout: float = TIMEOUT_S,
    transport: httpx.AsyncBaseTransport | None = None,
) -> ConnectionResult:
    """Ask the gateway once; never raises for what the gateway or the network does (cancellable)."""
    if dialect not in ("anthropic", "openai"):
        raise ValueError(f"the dialect must be anthropic or openai, not {dialect[:40]!r}")
    chosen: Dialect = "anthropic" if dialect == "anthropic" else "openai"
    try:
        url = request_url(endpoint, chosen)
    except (httpx.InvalidURL, ValueError) as exc:
        return ConnectionResult(Outcome.UNREACHABLE, f"the endpoint is not a URL ({exc})")
    host = httpx.URL(url).host
    try:
        async with (
            httpx.AsyncClient(timeout=timeout, transport=transport, follow_redirects=False) as client,
            client.stream("POST", url, headers=_headers(chosen, token, host), json=_body(model)) as reply,
        ):
            if 200 <= reply.status_code < 300:
                return ConnectionResult(Outcome.OK, status=reply.status_code)
            body = await _read_some(reply)
    except httpx.TimeoutException:
        return ConnectionResult(Outcome.UNREACHABLE, f"no answer within {timeout:g} seconds")
    except httpx.ConnectError as exc:
        return ConnectionResult(Outcome.UNREACHABLE, _connect_reason(exc))
    except httpx.TransportError as exc:
        return ConnectionResult(Outcome.UNREACHABLE, str(exc) or type(exc).__name__)
    return _classify(reply.status_code, body, model)


async def _read_some(reply: httpx.Response) -> bytes:
    collected = bytearray()
    async for chunk in reply.aiter_bytes():
        collected += chunk
        if len(collected) >= _MAX_ERROR_BYTES:
            break
    return bytes(collected[:_MAX_ERROR_BYTES])


def _connect_reason(exc: httpx.ConnectError) -> str:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return f"its TLS certificate is not trusted ({cause.verify_message or cause})"
        if isinstance(cause, ConnectionRefusedError):
            return "the connection was refused: nothing listens at that address and port"
        cause = cause.__cause__ or cause.__context__
    text = str(exc) or type(exc).__name__
    if "Name or service not known" in text or "nodename nor servname" in text or "getaddrinfo" in text:
        return f"the host name could not be resolved ({text})"
    return text


def gateway_message(body: bytes) -> str:
    """The gateway's own words: ``error.message`` (Anthropic, OpenAI), ``message``, ``detail``, else
    the start of the body as text."""
    text = body.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:_MAX_MESSAGE_CHARS]
    found: Any = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            found = error.get("message")
        elif isinstance(error, str):
            found = error
        found = found or data.get("message") or data.get("detail")
    message = found if isinstance(found, str) else text
    return message.strip()[:_MAX_MESSAGE_CHARS]


def _classify(status: int, body: bytes, model: str) -> ConnectionResult:
    message = gateway_message(body)
    if status in (401, 403):
        return ConnectionResult(Outcome.UNAUTHORIZED, message, status)
    lowered = message.lower()
    if status == 404 or (status in (400, 422) and model.lower() in lowered and "model" in lowered):
        return ConnectionResult(Outcome.UNKNOWN_MODEL, message, status)
    return ConnectionResult(Outcome.GATEWAY_ERROR, message, status)
