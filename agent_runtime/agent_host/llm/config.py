"""Where the LLM gateway is and how to talk to it (seed 000 §6.1; docs/architecture/index.md,
"Processes and wires").

The URL an endpoint stands for in each dialect is :func:`contracts.gateway_http.request_url`'s rule,
shared with the desktop's Settings → Test connection: ``https://api.anthropic.com``,
``https://api.openai.com/v1``, ``http://litellm:4000``, ``https://openrouter.ai/api/v1``,
``http://localhost:8000/v1`` (vLLM) and ``http://localhost:11434/v1`` (Ollama) all work as given by
their documentation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import get_args

import httpx

from contracts.addresses import is_loopback_host
from contracts.gateway_http import Dialect, request_url
from contracts.retry import RetryPolicy

from .errors import LlmConfigError
from .output_budget import OutputBudgetSettings

__all__ = [
    "DEFAULT_TIMEOUTS",
    "KEEP_ALIVE_S",
    "Dialect",
    "GatewayConfig",
    "RetrySettings",
    "Timeouts",
    "is_loopback",
    "request_url",
]

DIALECTS: tuple[Dialect, ...] = get_args(Dialect)

ENDPOINT_VARIABLE = "LLM_GATEWAY_ENDPOINT"
TOKEN_VARIABLE = "LLM_GATEWAY_AUTH_TOKEN"
DIALECT_VARIABLE = "LLM_GATEWAY_API"
MODEL_VARIABLE = "LLM_GATEWAY_MODEL"


@dataclass(frozen=True, slots=True)
class GatewayConfig:
    """The gateway to call. The token never appears in ``repr`` or in any error message."""

    endpoint: str
    token: str | None = field(default=None, repr=False)
    dialect: Dialect = "anthropic"
    model: str | None = None
    """The model the user configured; used when the policy allows it (``LlmPolicy.choose_model``)."""
    output: OutputBudgetSettings = field(default_factory=OutputBudgetSettings)
    """How output limits are chosen (``COWORK_LLM_OUTPUT_POLICY`` and friends, :mod:`.output_budget`)."""

    def __post_init__(self) -> None:
        if self.dialect not in DIALECTS:
            raise LlmConfigError(
                f"{DIALECT_VARIABLE} must be one of {', '.join(DIALECTS)}",
                details={"variable": DIALECT_VARIABLE},
            )
        _check_endpoint(self.endpoint)
        if self.token is not None and (not self.token or any(ch in self.token for ch in "\r\n\0")):
            raise LlmConfigError(
                f"{TOKEN_VARIABLE} must be a non-empty single line", details={"variable": TOKEN_VARIABLE}
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> GatewayConfig:
        """Read ``LLM_GATEWAY_ENDPOINT``, ``LLM_GATEWAY_AUTH_TOKEN``, ``LLM_GATEWAY_API`` and
        ``LLM_GATEWAY_MODEL``, and the output-budget controls (``COWORK_LLM_OUTPUT_POLICY``, …).

        An empty token means "no token" (Ollama needs none); ``LLM_GATEWAY_API`` defaults to
        ``anthropic`` and is case-insensitive; an empty model means "the policy's first model".
        """
        endpoint = environ.get(ENDPOINT_VARIABLE, "").strip()
        if not endpoint:
            raise LlmConfigError(
                f"{ENDPOINT_VARIABLE} is not set: it must be the LLM gateway's URL",
                details={"variable": ENDPOINT_VARIABLE},
            )
        token = environ.get(TOKEN_VARIABLE, "").strip() or None
        dialect = environ.get(DIALECT_VARIABLE, "").strip().lower() or "anthropic"
        if dialect not in DIALECTS:
            raise LlmConfigError(
                f"{DIALECT_VARIABLE} must be one of {', '.join(DIALECTS)}",
                details={"variable": DIALECT_VARIABLE},
            )
        model = environ.get(MODEL_VARIABLE, "").strip() or None
        output = OutputBudgetSettings.from_env(environ)
        return cls(endpoint=endpoint, token=token, dialect=dialect, model=model, output=output)

    @property
    def url(self) -> str:
        return request_url(self.endpoint, self.dialect)


def _check_endpoint(endpoint: str) -> None:
    problem = None
    try:
        url = httpx.URL(endpoint)
    except (httpx.InvalidURL, TypeError):
        problem = "is not a valid URL"
    else:
        if url.scheme not in ("http", "https"):
            problem = "must be an http:// or https:// URL"
        elif not url.host:
            problem = "must name a host"
        elif url.userinfo:
            # Credentials in a URL end up in logs and proxies; the token variable is the place for them.
            problem = "must not contain credentials (use LLM_GATEWAY_AUTH_TOKEN)"
        elif url.fragment:
            problem = "must not contain a #fragment"
    if problem is not None:
        raise LlmConfigError(f"{ENDPOINT_VARIABLE} {problem}", details={"variable": ENDPOINT_VARIABLE})


def is_loopback(endpoint: str) -> bool:
    """Whether the gateway is on this machine (then no proxy from the environment applies)."""
    # *.localhost too: a gateway's own name for this machine decides only about proxies, not trust.
    host = httpx.URL(endpoint).host
    return host.endswith(".localhost") or is_loopback_host(host)


@dataclass(frozen=True, slots=True)
class Timeouts:
    """``connect``: to open the connection; ``read``: the longest silence between bytes of a stream
    (a model that thinks long before its first token needs a generous one). Either counts as a 5xx."""

    connect_s: float = 10.0
    read_s: float = 120.0

    def __post_init__(self) -> None:
        if self.connect_s <= 0 or self.read_s <= 0:
            raise ValueError("timeouts must be positive")


DEFAULT_TIMEOUTS = Timeouts()

KEEP_ALIVE_S = 4.0
"""How long the runtime keeps an idle connection to the gateway for the next call (a departure from
seed 000 §6.1, docs/decisions/0001-llm-connection-reuse.md): below the 5 s after which uvicorn — under
LiteLLM and the scripted gateway — closes idle connections, so the client lets a connection go before
the server would, and long enough for the time between a response and the next request of a step."""


RetrySettings = RetryPolicy
"""Backoff between attempts (seed 000 §6.4): exponential with full jitter, at most 3 retries; the
gateway's ``Retry-After`` (seconds or an HTTP-date, or ``retry-after-ms``) is honoured up to
``retry_after_cap_s``. The platform's one retry policy (:mod:`contracts.retry`)."""
