"""What the approval gate can fail with, as one tree rooted at :class:`ApprovalError`.

::

    ApprovalError (contracts.errors.CoworkError: carries the seed's ErrorShape)
    ├── WrongSession          ApproveAction named another session                SESSION_NOT_FOUND
    └── ApprovalConfigError   COWORK_APPROVAL_TIMEOUT_S is not a usable number    INVALID_REQUEST

An unknown or already-resolved ``approvalId`` is not an error: the desktop may race the timeout, so
``decide`` answers ``accepted: false`` instead (seed 000 §10.3).
"""

from __future__ import annotations

from contracts.errors import CoworkError, ErrorCode

__all__ = ["ApprovalConfigError", "ApprovalError", "WrongSession"]


class ApprovalError(CoworkError):
    """Root of the approval gate's errors; ``.shape`` is the seed's error shape (seed 001 §6.5)."""


class WrongSession(ApprovalError):
    """A decision addressed to a session this runtime does not serve."""

    def __init__(self, session_id: str) -> None:
        super().__init__(
            ErrorCode.SESSION_NOT_FOUND,
            "This runtime does not serve the session named in the decision.",
            details={"sessionId": session_id},
        )


class ApprovalConfigError(ApprovalError):
    """The approval configuration in the environment is unusable; the message names the variable."""

    def __init__(self, variable: str, problem: str) -> None:
        super().__init__(ErrorCode.INVALID_REQUEST, f"{variable} {problem}", details={"variable": variable})
        self.variable = variable
