"""Turning what the gateway said went wrong into the client's errors (seed 000 §6.4, §11).

=========================  ======================================  =========
gateway says               error                                   retried
=========================  ======================================  =========
429                        LlmRateLimited (RATE_LIMITED)           yes
408, 5xx (529 included)    LlmServerError                          yes
400 or 403, content block  LlmGuardrailBlocked                     no
400                        LlmRejected (INVALID_REQUEST)           no
401, 403                   LlmRejected (UNAUTHORIZED)              no
other 4xx (404, 413, 422)  LlmRejected (INVALID_REQUEST)           no
3xx                        LlmRejected: redirects are not followed no
=========================  ======================================  =========

The seed names a 400 "guardrail blocked" because the gateway owns the guardrails; but a 400 is also
every plain bad request (an unsupported parameter, a prompt over the context window), and calling
those a block sends the user off rephrasing a request that can never pass. So a 400 is a guardrail
block only when its body says content was blocked — an error code such as ``content_filter`` or
``content_policy_violation`` (OpenAI, Azure OpenAI), or a message naming a guardrail, a content
filter or policy, moderation or a flagged prompt (LiteLLM's guardrails, Anthropic's output filter,
OpenAI's prompt check). A 403 that says so is one too: OpenRouter answers a moderation flag with 403.
Any other 400 is an :class:`LlmRejected` in the gateway's own words. An error *event* inside a
stream (Anthropic's ``event: error``, OpenAI-style ``{"error": …}`` chunks) is classified the same
way, by the status its type stands for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from contracts.errors import ErrorCode
from contracts.retry import parse_retry_after

from .errors import (
    LlmError,
    LlmGuardrailBlocked,
    LlmRateLimited,
    LlmRejected,
    LlmServerError,
)

__all__ = ["MAX_ERROR_BODY_BYTES", "error_for_status", "gateway_message", "status_for_error_type"]

MAX_ERROR_BODY_BYTES = 64 * 1024
MAX_MESSAGE_CHARS = 300

# Anthropic's error types (https://docs.anthropic.com/en/api/errors) and the status each stands for;
# OpenAI-compatible servers use some of the same words.
_ERROR_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
    "insufficient_quota": 429,
    "server_error": 500,
}

# Error codes and types that mean "content was blocked", as substrings of the lowercased code:
# content_filter / content_policy_violation (OpenAI, Azure OpenAI and its innererror
# ResponsibleAIPolicyViolation), guardrail_* (gateways), moderation_* .
_BLOCK_CODES = ("content_filter", "content_policy", "policy_violation", "guardrail", "moderation")
# Phrases in the gateway's message that say the same: LiteLLM's "Violated guardrail policy" and
# "Violated content safety policy", Anthropic's "Output blocked by content filtering policy", OpenAI's
# "flagged as potentially violating our usage policy" and "rejected as a result of our safety system".
# Deliberately not bare "safety", "moderation" or "policy": a plain bad request may name the
# ``safety_identifier`` parameter, a model such as omni-moderation, or the policy's model allowlist.
_BLOCK_PHRASES = (
    "guardrail",
    "content filter",
    "content_filter",
    "content management policy",
    "content policy",
    "content safety",
    "safety policy",
    "safety system",
    "usage policy",
    "usage policies",
    "moderation polic",
    "flagged",
)

_TRACEBACK = re.compile(r"Traceback \(most recent call last\)|File \"[^\"]+\", line \d+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def status_for_error_type(error: Mapping[str, Any]) -> int:
    """The HTTP status an in-stream error object stands for; unknown kinds count as a server error."""
    for key in ("status", "code", "status_code"):
        value = error.get(key)
        if isinstance(value, int) and 400 <= value <= 599:
            return value
        if isinstance(value, str) and value.isdigit() and 400 <= int(value) <= 599:
            return int(value)
    for key in ("type", "code"):
        value = error.get(key)
        if isinstance(value, str) and value in _ERROR_TYPE_STATUS:
            return _ERROR_TYPE_STATUS[value]
    return 500


def gateway_message(body: bytes | str | Mapping[str, Any] | None) -> str | None:
    """The gateway's own explanation, made safe to show: one line, trimmed, no traceback."""
    data: Any = body
    if isinstance(body, bytes | str):
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            data = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = _find_message(data)
    if text is None:
        return None
    if _TRACEBACK.search(text):
        return None
    text = _CONTROL.sub(" ", text).strip()
    if not text or text.lstrip().startswith("<"):
        # Empty, or an HTML error page from a proxy: nothing worth showing.
        return None
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[: MAX_MESSAGE_CHARS - 1].rstrip() + "…"
    return text


def _find_message(data: Any) -> str | None:
    if isinstance(data, str):
        return data
    if not isinstance(data, Mapping):
        return None
    error = data.get("error")
    if isinstance(error, Mapping):
        found = _find_message(error)
        if found:
            return found
    elif isinstance(error, str) and error:
        return error
    for key in ("message", "detail"):
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, Mapping):
            # LiteLLM's guardrails put an object here: {"error": "Violated guardrail policy", …}.
            found = _find_message(value)
            if found:
                return found
    return None


def _error_type(body: Any) -> str | None:
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping):
            kind = error.get("type") or error.get("code")
            if isinstance(kind, str):
                return kind[:100]
    return None


def _error_codes(body: Any) -> list[str]:
    """Every error code and type the body names, lowercased (Azure nests one in ``innererror``)."""
    codes: list[str] = []
    error = body.get("error") if isinstance(body, Mapping) else None
    for source in (body, error, error.get("innererror") if isinstance(error, Mapping) else None):
        if isinstance(source, Mapping):
            codes.extend(
                value.lower() for key in ("code", "type") if isinstance(value := source.get(key), str)
            )
    return codes


def _says_content_blocked(body: Any, said: str | None) -> bool:
    """Whether an error body says the request's content was blocked (see the module docstring)."""
    if any(marker in code for code in _error_codes(body) for marker in _BLOCK_CODES):
        return True
    text = (said or "").lower()
    return any(phrase in text for phrase in _BLOCK_PHRASES)


def error_for_status(
    status: int,
    body: bytes | Mapping[str, Any] | None,
    headers: Mapping[str, str],
    now: Callable[[], float],
    *,
    in_stream: bool = False,
) -> LlmError:
    """The error for a gateway answer with this status (or an in-stream error standing for it)."""
    said = gateway_message(body)
    parsed: Any = body
    if isinstance(body, bytes):
        try:
            parsed = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            parsed = None
    details: dict[str, Any] = {"status": status}
    kind = _error_type(parsed)
    if kind:
        details["gatewayErrorType"] = kind
    if in_stream:
        details["inStream"] = True
    suffix = f": {said}" if said else ""

    if status == 429:
        return LlmRateLimited(
            f"The LLM gateway is rate limiting requests (HTTP 429){suffix}",
            retry_after_s=parse_retry_after(headers, now),
            details=details,
        )
    if status >= 500 or status == 408:
        return LlmServerError(
            f"The LLM gateway failed (HTTP {status}){suffix}",
            retry_after_s=parse_retry_after(headers, now),
            details=details,
        )
    if status in (400, 403) and _says_content_blocked(parsed, said):
        return LlmGuardrailBlocked(
            f"The LLM gateway blocked the request{suffix or f' (HTTP {status})'}", details=details
        )
    if status == 400:
        return LlmRejected(f"The LLM gateway rejected the request (HTTP 400){suffix}", details=details)
    if status in (401, 403):
        return LlmRejected(
            f"The LLM gateway refused the credentials (HTTP {status}){suffix}. Check LLM_GATEWAY_AUTH_TOKEN.",
            code=ErrorCode.UNAUTHORIZED,
            details=details,
        )
    if 300 <= status < 400:
        location = headers.get("location", "")
        details["location"] = location[:500]
        return LlmRejected(
            f"The LLM gateway redirected the request (HTTP {status}); redirects are not followed, so "
            "that credentials never reach another host: set LLM_GATEWAY_ENDPOINT to the final URL",
            details=details,
        )
    if status == 404:
        return LlmRejected(
            f"The LLM gateway has no such endpoint or model (HTTP 404){suffix}. Check "
            "LLM_GATEWAY_ENDPOINT, LLM_GATEWAY_API and the policy's allowed models.",
            details=details,
        )
    if status == 413:
        return LlmRejected(f"The LLM gateway found the request too large (HTTP 413){suffix}", details=details)
    return LlmRejected(f"The LLM gateway rejected the request (HTTP {status}){suffix}", details=details)
