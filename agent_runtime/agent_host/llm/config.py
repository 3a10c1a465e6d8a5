"""Where the LLM gateway is and how to talk to it (seed 000 §6.1; DESIGN.md "Runtime ⇄ LLM gateway").

Endpoint → request URL, one rule for both dialects (``path`` is the endpoint's path, trailing ``/``
ignored):

======================================  =====================  ==========================
endpoint path ends with                 anthropic              openai
======================================  =====================  ==========================
``/v1/messages`` / ``/chat/completions`` used as is            used as is
``/v1``                                 ``+ /messages``        ``+ /chat/completions``
anything else (``""``, ``/api``, …)     ``+ /v1/messages``     ``+ /v1/chat/completions``
======================================  =====================  ==========================

So ``https://api.anthropic.com``, ``https://api.openai.com/v1``, ``http://litellm:4000``,
``https://openrouter.ai/api/v1``, ``http://localhost:8000/v1`` (vLLM) and
``http://localhost:11434/v1`` (Ollama) all work as given by their documentation.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

import httpx

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

Dialect = Literal["anthropic", "openai"]
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


_FULL_PATHS: dict[Dialect, tuple[str, ...]] = {
    "anthropic": ("/v1/messages",),
    "openai": ("/chat/completions",),
}
_AFTER_V1: dict[Dialect, str] = {"anthropic": "/messages", "openai": "/chat/completions"}


def request_url(endpoint: str, dialect: Dialect) -> str:
    """The URL one LLM call is POSTed to; see the module docstring for the rule."""
    url = httpx.URL(endpoint)
    path = url.path.rstrip("/")
    if path.endswith(_FULL_PATHS[dialect]):
        new_path = path
    elif path.endswith("/v1"):
        new_path = path + _AFTER_V1[dialect]
    else:
        new_path = path + "/v1" + _AFTER_V1[dialect]
    return str(url.copy_with(path=new_path))


def is_loopback(endpoint: str) -> bool:
    """Whether the gateway is on this machine (then no proxy from the environment applies)."""
    host = httpx.URL(endpoint).host
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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


@dataclass(frozen=True, slots=True)
class RetrySettings:
    """Backoff between attempts (seed 000 §6.4): exponential with full jitter, at most 3 retries.

    The n-th retry waits ``random() * min(cap_s, base_s * 2 ** (n - 1))`` unless the gateway said
    how long with ``Retry-After`` (seconds or an HTTP-date, or ``retry-after-ms``), which is honoured
    up to ``retry_after_cap_s``.
    """

    max_retries: int = 3
    base_s: float = 1.0
    cap_s: float = 30.0
    retry_after_cap_s: float = 60.0

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.base_s < 0 or self.cap_s < 0 or self.retry_after_cap_s < 0:
            raise ValueError("retry settings must not be negative")
