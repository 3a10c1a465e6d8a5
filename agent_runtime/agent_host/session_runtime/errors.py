"""The error a request meets when the session's state refuses it (raised by the state machine here and
by the session; the JSON-RPC dispatcher turns it into ``-32001``)."""

from __future__ import annotations

from typing import Any

from contracts.errors import CoworkError, ErrorCode

__all__ = ["StateConflict"]


class StateConflict(CoworkError):
    """The request is well formed but the session's state refuses it: a task is already running, the
    session is paused or has ended, the transition is not in the state tables, the client is not
    compatible. Travels as ``-32001`` (:attr:`RpcErrorCode.STATE_CONFLICT`), not as invalid params:
    the same request may succeed later, and a client must not blame its own input."""

    def __init__(self, message: str, *, code: ErrorCode = ErrorCode.INVALID_REQUEST, **details: Any) -> None:
        super().__init__(code, message, details=details)
