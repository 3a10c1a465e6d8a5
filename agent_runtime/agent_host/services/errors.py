"""Everything the backend client can fail with, as one tree rooted at :class:`BackendError`.

::

    BackendError (contracts.errors.CoworkError: carries the seed's ErrorShape)
    ├── BackendConfigError    COWORK_BACKEND_URL / _TOKEN / COWORK_POLICY_KEYS missing   INVALID_REQUEST
    │                         or invalid; ``details["variable"]`` names the variable
    ├── BackendUnreachable    connect errors, timeouts, 5xx, 429 — after the retries     retryable=True
    └── BackendRejected       a 4xx: the backend's own error shape (code, message, details)
        └── SessionGone       410 SESSION_EXPIRED: the session ended or is past its resume window

A plain :class:`BackendError` (``INTERNAL_ERROR``) means the backend answered something that is not
the contract (HTML, truncated JSON, a body that does not fit the model, a redirect) or a bundle does not
verify (``POLICY_BUNDLE_INVALID``). Library text (httpx, pydantic) stays in ``__cause__``; no message,
detail or ``repr`` ever carries the bearer token.
"""

from __future__ import annotations

from typing import Any, Final

from contracts.errors import CoworkError, ErrorCode, ErrorShape

__all__ = [
    "SESSION_GONE_REASONS",
    "BackendConfigError",
    "BackendError",
    "BackendRejected",
    "BackendUnreachable",
    "SessionGone",
]

SESSION_GONE_REASONS: Final = frozenset({"expired", "cancelled", "completed", "failed"})
"""The ``details.reason`` values of a 410 (seed 000 §9.6: stale checkpoints are deleted on these)."""


class BackendError(CoworkError):
    """Root of the backend client's errors; ``.shape`` is the seed's error shape (seed 001 §6.5)."""

    @property
    def retryable(self) -> bool:
        """Whether the same call may succeed later (the shape's ``retryable``)."""
        return self.shape.retryable

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code.value!r}, message={self.message!r})"


class BackendConfigError(BackendError):
    """The runtime's backend configuration is unusable; the message names the variable."""

    def __init__(self, variable: str, problem: str) -> None:
        super().__init__(ErrorCode.INVALID_REQUEST, f"{variable} {problem}", details={"variable": variable})
        self.variable = variable


class BackendUnreachable(BackendError):
    """Every attempt failed in a way a later attempt may not (seed 000 §11 "Network" rows).

    ``details``: ``service``, ``url`` (the base URL, never a token), ``attempts``, ``failure``
    (``connect``, ``timeout``, ``disconnected``, ``protocol`` or ``status``) and ``status`` for an HTTP
    answer. ``code`` is the backend's own when it answered with its error shape (a 503 is
    ``INTERNAL_ERROR``, a 429 ``RATE_LIMITED``), ``WORKSPACE_UPLOAD_FAILED`` for artifact uploads.
    """

    def __init__(self, code: ErrorCode, message: str, *, details: dict[str, Any]) -> None:
        super().__init__(code, message, retryable=True, details=details)
        self.attempts: int = int(details.get("attempts", 1))


class BackendRejected(BackendError):
    """The backend refused the request (4xx) with its error shape; retrying the same request is futile
    unless ``retryable`` says otherwise. ``status`` is the HTTP status."""

    def __init__(self, shape: ErrorShape, *, status: int) -> None:
        super().__init__(shape.code, shape.message, retryable=shape.retryable, details=dict(shape.details))
        self.status = status


class SessionGone(BackendRejected):
    """410 ``SESSION_EXPIRED`` on resume: the checkpoint is stale (seed 000 §9.6).

    ``reason`` is one of :data:`SESSION_GONE_REASONS`; a reason the backend did not give (or one this
    client does not know) reads as ``expired``, the one that asks nothing more of the caller.
    """

    def __init__(self, shape: ErrorShape, *, status: int = 410) -> None:
        super().__init__(shape, status=status)
        reason = shape.details.get("reason")
        self.reason: str = reason if isinstance(reason, str) and reason in SESSION_GONE_REASONS else "expired"
