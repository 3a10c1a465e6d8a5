"""The backend's one exception root and the errors its services raise.

::

    contracts.errors.CoworkError        (the seed's error shape)
    └── BackendError                    + the HTTP status (and headers) it is answered with
        └── StorageError                a store failed (database, files, DynamoDB, S3): 503, retryable

Library errors (sqlite3, boto3, OS errors) are translated once, where they leave a repository
(``raise StorageError(...) from exc``), so no library text ever reaches a client.
"""

from __future__ import annotations

from typing import Any

from contracts.errors import CoworkError, ErrorCode

__all__ = [
    "MAX_JSON_DEPTH",
    "BackendError",
    "StorageError",
    "artifact_not_found",
    "forbidden",
    "invalid",
    "not_json",
    "session_not_found",
    "too_large",
    "unauthorized",
    "workspace_not_found",
]


class BackendError(CoworkError):
    """An error answered over HTTP with ``status_code`` and the seed's error shape as the body."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        status_code: int,
        retryable: bool = False,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(code, message, retryable=retryable, details=details)
        self.status_code = status_code
        self.headers = headers or {}


class StorageError(BackendError):
    """The store could not do what was asked; the client may retry."""

    def __init__(self, message: str, *, code: ErrorCode = ErrorCode.INTERNAL_ERROR) -> None:
        super().__init__(code, message, status_code=503, retryable=True, headers={"Retry-After": "1"})


MAX_JSON_DEPTH = 200
"""How deep the JSON parser (pydantic-core's) lets a document nest; deeper ones are refused."""


def invalid(message: str, *, status_code: int = 400, **details: Any) -> BackendError:
    return BackendError(ErrorCode.INVALID_REQUEST, message, status_code=status_code, details=details)


def not_json(reason: str, what: str = "The request body", **details: Any) -> BackendError:
    """``INVALID_REQUEST`` for bytes the JSON parser refused (``reason`` is its message). Valid JSON
    that is merely too deep is called that, naming the limit, not "not valid JSON"."""
    if "recursion limit" in reason:
        return invalid(
            f"{what} is nested too deeply: JSON may nest at most {MAX_JSON_DEPTH} levels",
            maxDepth=MAX_JSON_DEPTH,
            **details,
        )
    return invalid(f"{what} is not valid JSON", **details)


def unauthorized(reason: str, message: str, **details: Any) -> BackendError:
    return BackendError(
        ErrorCode.UNAUTHORIZED,
        message,
        status_code=401,
        details={"reason": reason, **details},
        headers={"WWW-Authenticate": 'Bearer error="invalid_token"' if reason != "missing" else "Bearer"},
    )


def forbidden(message: str, **details: Any) -> BackendError:
    return BackendError(ErrorCode.PERMISSION_DENIED, message, status_code=403, details=details)


def session_not_found(session_id: str) -> BackendError:
    # The same answer whether the session never existed or belongs to someone else: an ID from
    # another tenant must not even reveal that it exists.
    return BackendError(
        ErrorCode.SESSION_NOT_FOUND,
        "No such session",
        status_code=404,
        details={"sessionId": session_id},
    )


def workspace_not_found(workspace_id: str) -> BackendError:
    return BackendError(
        ErrorCode.INVALID_REQUEST,
        "No such workspace",
        status_code=404,
        details={"resource": "workspace", "workspaceId": workspace_id},
    )


def artifact_not_found(artifact_id: str) -> BackendError:
    return BackendError(
        ErrorCode.FILE_NOT_FOUND,
        "No such artifact",
        status_code=404,
        details={"resource": "artifact", "artifactId": artifact_id},
    )


def too_large(code: ErrorCode, what: str, limit: int) -> BackendError:
    return BackendError(
        code, f"{what} is larger than {limit} bytes", status_code=413, details={"limitBytes": limit}
    )
