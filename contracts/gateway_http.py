"""How a model call reaches the LLM gateway: the URL an endpoint stands for in each dialect, and the
headers that carry its token. Both the runtime's LLM client and the desktop's Settings → Test
connection send requests this way, so a test that passes means the runtime's calls will reach the
same place with the same credentials.

Endpoint → request URL, one rule for both dialects (``path`` is the endpoint's path, trailing ``/``
ignored): a path already ending in the call's own path (``/v1/messages``, ``/chat/completions``) is
used as is; one ending in ``/v1`` gets the rest (``/messages``, ``/chat/completions``); any other gets
``/v1/…``. So ``https://api.anthropic.com``, ``https://api.openai.com/v1``, ``http://litellm:4000`` and
``http://localhost:11434/v1`` (Ollama) all work as their documentation gives them.
"""

from __future__ import annotations

from typing import Literal

import httpx

__all__ = ["ANTHROPIC_VERSION", "Dialect", "auth_headers", "request_url"]

Dialect = Literal["anthropic", "openai"]
ANTHROPIC_VERSION = "2023-06-01"

_FULL_PATHS: dict[str, str] = {"anthropic": "/v1/messages", "openai": "/chat/completions"}
_AFTER_V1: dict[str, str] = {"anthropic": "/messages", "openai": "/chat/completions"}


def request_url(endpoint: str, dialect: Dialect) -> str:
    """The URL one model call is POSTed to (``httpx.InvalidURL`` for an endpoint that is no URL)."""
    url = httpx.URL(endpoint)
    path = url.path.rstrip("/")
    if path.endswith(_FULL_PATHS[dialect]):
        new_path = path
    elif path.endswith("/v1"):
        new_path = path + _AFTER_V1[dialect]
    else:
        new_path = path + "/v1" + _AFTER_V1[dialect]
    return str(url.copy_with(path=new_path))


def auth_headers(dialect: Dialect, token: str | None, host: str = "") -> dict[str, str]:
    """Anthropic's ``anthropic-version`` and ``x-api-key`` — and ``Authorization: Bearer`` too for
    gateways that expect it (LiteLLM and others), but not for Anthropic's own API, which reads a
    bearer token as an OAuth token and answers an API key sent that way with 401; OpenAI's dialect
    takes a bearer token."""
    if dialect == "openai":
        return {"authorization": f"Bearer {token}"} if token else {}
    headers = {"anthropic-version": ANTHROPIC_VERSION}
    if token:
        headers["x-api-key"] = token
        lowered = host.lower().rstrip(".")
        if not (lowered == "anthropic.com" or lowered.endswith(".anthropic.com")):
            headers["authorization"] = f"Bearer {token}"
    return headers
