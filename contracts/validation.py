"""Turning pydantic validation failures into the seed's ``INVALID_REQUEST`` shape.

Every wire (JSON-RPC and REST) answers bad input the same way: the first offending field by its wire
name (``taskOptions.maxSteps``) and a problem written by us, not the validation library's text.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from contracts.errors import ErrorCode, ErrorShape

M = TypeVar("M", bound=BaseModel)


class FieldProblem(ValueError):
    """Raised by a validator that checks a nested value itself, to name the field inside it."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field} {problem}")
        self.field = field
        self.problem = problem


def validate_json_value(model: type[M], value: Any) -> M:
    """Validate a value decoded from JSON the way JSON is validated: strictly.

    Strict mode on Python objects would demand enum members and ``datetime`` instances, refusing the
    very strings the wire carries (``"SESSION_NOT_FOUND"``, ``"2026-02-21T15:00:00Z"``). Strict mode on
    JSON accepts exactly those spellings and still refuses ``"40"`` for an integer, so values that came
    off a wire are checked as JSON.
    """
    return model.model_validate_json(json.dumps(value))


_PROBLEMS: dict[str, str] = {
    "missing": "is required",
    "extra_forbidden": "is not a known field",
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "bool_type": "must be true or false",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "list_type": "must be an array",
    "none_required": "must be null",
    "datetime_type": "must be an ISO 8601 date-time string",
    "datetime_parsing": "must be an ISO 8601 date-time string",
    "datetime_from_date_parsing": "must be an ISO 8601 date-time string",
    "timezone_aware": "must include a time zone",
    "string_pattern_mismatch": "has the wrong format",
    "url_parsing": "must be a valid URL",
    "url_scheme": "has a scheme that is not allowed",
    "union_tag_invalid": "has an unknown type tag",
    "union_tag_not_found": "is missing its type tag",
    "literal_error": "must be one of {expected}",
    "enum": "must be one of {expected}",
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be at most {le}",
    "string_too_short": "must be at least {min_length} characters long",
    "string_too_long": "must be at most {max_length} characters long",
    "too_short": "must have at least {min_length} items",
    "too_long": "must have at most {max_length} items",
}


def field_path(loc: tuple[int | str, ...], prefix: str = "") -> str:
    """``("taskOptions", "maxSteps")`` → ``taskOptions.maxSteps``; list indexes as ``[0]``."""
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else part
    return path or "(root)"


def describe(error: ErrorDetails) -> str:
    kind = error["type"]
    ctx: dict[str, Any] = dict(error.get("ctx") or {})
    if kind == "string_too_short" and ctx.get("min_length") == 1:
        return "must not be empty"
    if kind == "value_error" and "error" in ctx:
        # Raised by our own validators; their messages are written for users.
        return str(ctx["error"])
    template = _PROBLEMS.get(kind, "is invalid")
    try:
        return template.format(**ctx)
    except (KeyError, IndexError):
        return _PROBLEMS.get(kind, "is invalid").split(" {", 1)[0]


def _located(error: ErrorDetails, prefix: str) -> dict[str, str]:
    inner = (error.get("ctx") or {}).get("error")
    if isinstance(inner, FieldProblem):
        return {"field": f"{field_path(error['loc'], prefix)}.{inner.field}", "problem": inner.problem}
    return {"field": field_path(error["loc"], prefix), "problem": describe(error)}


def invalid_request(exc: ValidationError, prefix: str = "") -> ErrorShape:
    """The ``INVALID_REQUEST`` shape for the first problem in ``exc``; all fields in ``details``."""
    fields = [_located(error, prefix) for error in exc.errors(include_url=False, include_input=False)]
    first = fields[0] if fields else {"field": prefix or "(root)", "problem": "is invalid"}
    return ErrorShape(
        code=ErrorCode.INVALID_REQUEST,
        message=f"{first['field']} {first['problem']}",
        retryable=False,
        details={"field": first["field"], "problem": first["problem"], "errors": fields[:20]},
    )
