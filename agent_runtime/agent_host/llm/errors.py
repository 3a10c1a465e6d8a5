"""Everything the LLM client can fail with, as one tree rooted at :class:`LlmError`.

::

    LlmError (contracts.errors.CoworkError: carries the seed's ErrorShape)
    ├── LlmConfigError          LLM_GATEWAY_* missing or invalid               INVALID_REQUEST
    ├── LlmGuardrailBlocked     a 400/403 whose body says content was blocked,  LLM_GUARDRAIL_BLOCKED
    │                           content_filter, refusal; never retried
    ├── LlmRejected             any other 400, other 4xx, redirects, an         UNAUTHORIZED /
    │                           unusable request; never retried                 INVALID_REQUEST
    ├── LlmProtocolError        malformed SSE, JSON or event order               INTERNAL_ERROR
    │   └── LlmMalformedToolCall  a tool call's arguments are not a JSON object (retried)
    ├── LlmRetriesExhausted     every attempt failed transiently: the loop pauses the session (§6.4)
    └── LlmTransientError       one failed attempt worth retrying; only ever seen as the ``cause`` of
        │                       LlmRetriesExhausted, never raised out of ``LlmClient.stream``
        ├── LlmRateLimited      HTTP 429                                         RATE_LIMITED
        ├── LlmServerError      HTTP 5xx / 408, or an error event mid-stream     INTERNAL_ERROR
        ├── LlmTimeout          connect timeout, or no bytes within the read timeout
        ├── LlmUnreachable      connection refused, DNS failure, reset before the response
        └── LlmStreamBroken     the stream ended before its terminal event

Messages are written for the person using the desktop: they name what happened and, where the gateway
said why, its own words (trimmed, one line, never a traceback). Library text stays in ``__cause__``.
"""

from __future__ import annotations

from typing import Any

from contracts.errors import CoworkError, ErrorCode

__all__ = [
    "LlmConfigError",
    "LlmError",
    "LlmGuardrailBlocked",
    "LlmMalformedToolCall",
    "LlmProtocolError",
    "LlmRateLimited",
    "LlmRejected",
    "LlmRetriesExhausted",
    "LlmServerError",
    "LlmStreamBroken",
    "LlmTimeout",
    "LlmTransientError",
    "LlmUnreachable",
]


class LlmError(CoworkError):
    """Root of the LLM client's errors; ``.shape`` is the seed's error shape (seed 001 §6.5)."""

    default_code = ErrorCode.INTERNAL_ERROR
    default_retryable = False

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode | None = None,
        retryable: bool | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(
            code or self.default_code,
            message,
            retryable=self.default_retryable if retryable is None else retryable,
            details=details,
        )


class LlmConfigError(LlmError):
    """The gateway configuration is missing or invalid; ``details["variable"]`` names the variable."""

    default_code = ErrorCode.INVALID_REQUEST


class LlmGuardrailBlocked(LlmError):
    """The gateway or the model refused the request on content grounds (seed 000 §6.4): do not retry."""

    default_code = ErrorCode.LLM_GUARDRAIL_BLOCKED


class LlmRejected(LlmError):
    """The gateway refused the request for a reason a retry cannot fix (a 400 that is not a content
    block — an unsupported parameter, a prompt over the window —, 401/403, 404/413/422, 3xx)."""

    default_code = ErrorCode.INVALID_REQUEST


class LlmProtocolError(LlmError):
    """The gateway's answer does not follow the dialect: the endpoint or ``LLM_GATEWAY_API`` is wrong.

    Not retried: a gateway that speaks another protocol answers the same way every time.
    """


class LlmMalformedToolCall(LlmProtocolError):
    """A tool call's accumulated arguments are not a JSON object.

    Retried, unlike other protocol errors: the stream itself was well-formed, the model's sampled
    output was not, and a second sample usually is. The thread is untouched, so the retry is safe.
    """

    default_retryable = True


class LlmTransientError(LlmError):
    """One attempt failed in a way a later attempt may not (seed 000 §6.4, §11)."""

    default_retryable = True

    def __init__(
        self,
        message: str,
        *,
        retry_after_s: float | None = None,
        code: ErrorCode | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, code=code, retryable=True, details=details)
        self.retry_after_s = retry_after_s
        """What the gateway asked us to wait (``Retry-After``), if it said."""


class LlmRateLimited(LlmTransientError):
    default_code = ErrorCode.RATE_LIMITED


class LlmServerError(LlmTransientError):
    pass


class LlmTimeout(LlmTransientError):
    pass


class LlmUnreachable(LlmTransientError):
    pass


class LlmStreamBroken(LlmTransientError):
    pass


class LlmRetriesExhausted(LlmError):
    """Every attempt failed with a retryable error; ``cause`` is the last one.

    The agent loop turns this into a checkpoint and a paused session (seed 000 §6.4), so the shape is
    ``retryable``: resuming later may well succeed.
    """

    def __init__(self, cause: LlmError, attempts: int) -> None:
        super().__init__(
            f"The LLM gateway still failed after {attempts} attempts: {cause.message}",
            code=cause.code,
            retryable=True,
            details={"attempts": attempts, "cause": cause.shape.to_wire()},
        )
        self.cause = cause
        self.attempts = attempts
