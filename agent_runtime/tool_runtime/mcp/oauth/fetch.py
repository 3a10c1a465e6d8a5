"""The authorization flow's own HTTP traffic (metadata, registration, tokens): one client
configuration, bodies read up to a cap, and transport failures told in a sentence."""

from __future__ import annotations

import json
from typing import Any

import httpx

from agent_runtime.tool_runtime.mcp.errors import McpTransportError
from agent_runtime.tool_runtime.mcp.oauth.urls import for_display

__all__ = ["MAX_BODY_BYTES", "JsonAnswer", "new_client", "oauth_error_text", "send_for_json"]

# Metadata documents and token responses are a few kilobytes; a megabyte is generous and keeps a
# misbehaving server from filling memory.
MAX_BODY_BYTES = 2**20
_TIMEOUT = httpx.Timeout(30.0)


def new_client() -> httpx.AsyncClient:
    # Redirects are never followed here: a token request must not be replayed (with its code or
    # secret) somewhere else, and a metadata document answered by a redirect is treated as absent,
    # as the MCP SDKs do.
    return httpx.AsyncClient(timeout=_TIMEOUT, follow_redirects=False, headers={"Accept": "application/json"})


class JsonAnswer:
    """A response's status, headers and body parsed as a JSON object (None when it is not one)."""

    def __init__(self, status: int, headers: httpx.Headers, body: dict[str, Any] | None) -> None:
        self.status = status
        self.headers = headers
        self.body = body


async def send_for_json(client: httpx.AsyncClient, request: httpx.Request, *, what: str) -> JsonAnswer:
    """Send ``request`` and read its JSON object answer. Raises ``McpTransportError`` when the server
    cannot be reached or its body is too large."""
    try:
        response = await client.send(request, stream=True)
        try:
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise McpTransportError(
                        f"The {what} at {for_display(str(request.url))} sent more than "
                        f"{MAX_BODY_BYTES // 1024} KB; refusing to read it."
                    )
                chunks.append(chunk)
        finally:
            await response.aclose()
    except httpx.HTTPError as exc:
        raise McpTransportError(
            f"Could not reach the {what} at {for_display(str(request.url))}: {type(exc).__name__}"
            + (f" ({exc})" if str(exc) else "")
        ) from exc
    body: dict[str, Any] | None = None
    try:
        parsed = json.loads(b"".join(chunks))
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        body = parsed
    return JsonAnswer(response.status_code, response.headers, body)


def oauth_error_text(answer: JsonAnswer) -> str:
    """The ``error`` and ``error_description`` of an OAuth error response (RFC 6749 §5.2), short and
    printable, else the HTTP status. Nothing else of the body is shown: it is the server's text."""
    body = answer.body or {}
    error, description = body.get("error"), body.get("error_description")
    parts = [f"HTTP {answer.status}"]
    if isinstance(error, str) and error:
        parts.append(_printable(error, 80))
    if isinstance(description, str) and description:
        parts.append(_printable(description, 200))
    return ": ".join(parts[:2]) + (f" ({parts[2]})" if len(parts) > 2 else "")


def _printable(text: str, limit: int) -> str:
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text).strip()
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"
