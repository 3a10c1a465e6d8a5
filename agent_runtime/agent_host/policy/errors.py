"""Errors of the policy package. Checks never raise — they return outcomes (``outcomes.py``); these
are for loading a bundle and for the pre-checks the loop turns into a failed task.

::

    PolicyError                  (CoworkError)
    ├── PolicyBundleInvalid      POLICY_BUNDLE_INVALID — the bundle cannot be enforced as written
    └── PolicyExpiredError       POLICY_EXPIRED — the bundle's ``expiresAt`` has passed
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from contracts.errors import CoworkError, ErrorCode

__all__ = ["PolicyBundleInvalid", "PolicyError", "PolicyExpiredError"]


class PolicyError(CoworkError):
    """Root of every error the policy package raises."""


class PolicyBundleInvalid(PolicyError):
    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(ErrorCode.POLICY_BUNDLE_INVALID, message, details=details)


class PolicyExpiredError(PolicyError):
    def __init__(self, expires_at: datetime) -> None:
        super().__init__(
            ErrorCode.POLICY_EXPIRED,
            f"The policy bundle expired at {expires_at.isoformat()}; resume the session to refresh it.",
            details={"expiresAt": expires_at.isoformat()},
        )
        self.expires_at = expires_at
