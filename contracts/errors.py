"""The one error shape used on every wire (seed 001 §6.5) and its twenty codes."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from contracts._base import WireModel


class ErrorCode(StrEnum):
    INVALID_REQUEST = "INVALID_REQUEST"
    UNAUTHORIZED = "UNAUTHORIZED"
    SESSION_NOT_FOUND = "SESSION_NOT_FOUND"
    SESSION_EXPIRED = "SESSION_EXPIRED"
    POLICY_BUNDLE_INVALID = "POLICY_BUNDLE_INVALID"
    POLICY_EXPIRED = "POLICY_EXPIRED"
    CAPABILITY_DENIED = "CAPABILITY_DENIED"
    APPROVAL_REQUIRED = "APPROVAL_REQUIRED"
    APPROVAL_DENIED = "APPROVAL_DENIED"
    TOOL_NOT_FOUND = "TOOL_NOT_FOUND"
    TOOL_EXECUTION_FAILED = "TOOL_EXECUTION_FAILED"
    TOOL_EXECUTION_TIMEOUT = "TOOL_EXECUTION_TIMEOUT"
    FILE_NOT_FOUND = "FILE_NOT_FOUND"
    FILE_TOO_LARGE = "FILE_TOO_LARGE"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    LLM_GUARDRAIL_BLOCKED = "LLM_GUARDRAIL_BLOCKED"
    LLM_BUDGET_EXCEEDED = "LLM_BUDGET_EXCEEDED"
    WORKSPACE_UPLOAD_FAILED = "WORKSPACE_UPLOAD_FAILED"
    RATE_LIMITED = "RATE_LIMITED"
    INTERNAL_ERROR = "INTERNAL_ERROR"


class ErrorShape(WireModel):
    """``{"code", "message", "retryable", "details"}`` — the seed's error on every wire."""

    code: ErrorCode
    message: str = Field(min_length=1)
    retryable: bool = False
    details: dict[str, Any] = Field(default_factory=dict)


class CoworkError(Exception):
    """An error that carries the seed's shape; raised by application code, rendered once per wire."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        retryable: bool = False,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.shape = ErrorShape(code=code, message=message, retryable=retryable, details=details or {})

    @property
    def code(self) -> ErrorCode:
        return self.shape.code

    @property
    def message(self) -> str:
        return self.shape.message
