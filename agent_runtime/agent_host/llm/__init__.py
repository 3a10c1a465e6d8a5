"""The LLM gateway client (seed 000 §6): streamed calls in the Anthropic Messages or OpenAI Chat
Completions dialect, normalised to one :class:`LlmResponse`, with the retries of §6.4.

Typical use by the agent loop::

    client = LlmClient(GatewayConfig.from_env(os.environ))
    response = await client.stream(
        policy=bundle.llm_policy, system_prompt=prompt, messages=thread, tools=tools,
        on_text=send_text_chunk, on_discard=drop_shown_text, on_retry=tell_user_we_retry,
    )
"""

from __future__ import annotations

from .client import LlmClient
from .config import DEFAULT_TIMEOUTS, Dialect, GatewayConfig, RetrySettings, Timeouts, request_url
from .errors import (
    LlmConfigError,
    LlmError,
    LlmGuardrailBlocked,
    LlmMalformedToolCall,
    LlmProtocolError,
    LlmRateLimited,
    LlmRejected,
    LlmRetriesExhausted,
    LlmServerError,
    LlmStreamBroken,
    LlmTimeout,
    LlmTransientError,
    LlmUnreachable,
)
from .response import DiscardCallback, LlmResponse, LlmUsage, RetryCallback, TextCallback

__all__ = [
    "DEFAULT_TIMEOUTS",
    "Dialect",
    "DiscardCallback",
    "GatewayConfig",
    "LlmClient",
    "LlmConfigError",
    "LlmError",
    "LlmGuardrailBlocked",
    "LlmMalformedToolCall",
    "LlmProtocolError",
    "LlmRateLimited",
    "LlmRejected",
    "LlmResponse",
    "LlmRetriesExhausted",
    "LlmServerError",
    "LlmStreamBroken",
    "LlmTimeout",
    "LlmTransientError",
    "LlmUnreachable",
    "LlmUsage",
    "RetryCallback",
    "RetrySettings",
    "TextCallback",
    "Timeouts",
    "request_url",
]
