"""Reading JSON request bodies: bounded, then validated *as JSON* by the contracts models.

FastAPI's own body handling validates a parsed dict, which strict models refuse for enum and date-time
strings, and reads the whole body before any limit applies. Here the declared ``Content-Length`` is
checked first (413 before a byte is read), the limit is enforced again while the body streams in (for
chunked bodies and lying headers), and the bytes go to ``Model.model_validate_json``; a validation
failure becomes ``INVALID_REQUEST`` naming the field (``contracts.validation.invalid_request``).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import from_json

from backend.common.errors import BackendError, invalid, not_json, too_large
from backend.common.settings import Limits
from contracts.errors import ErrorCode
from contracts.events import EventEnvelope
from contracts.validation import invalid_request

__all__ = [
    "UploadBudget",
    "parse_json",
    "parse_json_as",
    "read_body",
    "read_events",
    "read_json",
    "read_one_or_many",
]

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


def _is_json(content_type: str | None) -> bool:
    if content_type is None:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


async def read_body(
    request: Request,
    limit: int,
    *,
    too_large_code: ErrorCode = ErrorCode.INVALID_REQUEST,
    empty_ok: bool = False,
) -> bytes:
    """The JSON body, at most ``limit`` bytes: 413 past the limit, 415 unless declared JSON.

    With ``empty_ok`` an empty body (any or no Content-Type) reads as ``{}``: for routes whose every
    field is optional, such as cancel and resume.
    """
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise invalid("Content-Length must be a whole number")
        if int(declared) > limit:
            raise too_large(too_large_code, "The request body", limit)
    received = bytearray()
    async for chunk in request.stream():
        received += chunk
        if len(received) > limit:
            raise too_large(too_large_code, "The request body", limit)
    if not received and empty_ok:
        return b"{}"
    if not _is_json(request.headers.get("content-type")):
        raise invalid("The request body must be JSON (Content-Type: application/json)", status_code=415)
    return bytes(received)


def _invalid_body(exc: ValidationError) -> BackendError:
    errors = exc.errors(include_url=False, include_input=False)
    if errors and errors[0]["type"] == "json_invalid":
        return not_json(str((errors[0].get("ctx") or {}).get("error", "")))
    shape = invalid_request(exc)
    return BackendError(shape.code, shape.message, status_code=400, details=shape.details)


def parse_json(model: type[M], raw: bytes) -> M:
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        raise _invalid_body(exc) from None


def parse_json_as(adapter: TypeAdapter[T], raw: bytes) -> T:
    """Like :func:`parse_json` for bodies that are not one model (an envelope or an array of them)."""
    try:
        return adapter.validate_json(raw)
    except ValidationError as exc:
        raise _invalid_body(exc) from None


@functools.cache
def _list_of(model: type[BaseModel]) -> TypeAdapter[list[Any]]:
    # Building an adapter costs milliseconds; there is one per model for the process's life.
    return TypeAdapter(list[model])  # type: ignore[valid-type]


async def read_one_or_many(
    request: Request, model: type[M], limit: int, max_items: int, max_item_bytes: int
) -> list[M]:
    """A body that is one ``model`` object or a JSON array of 1…``max_items`` of them (event batches),
    each at most ``max_item_bytes`` once serialised."""
    raw = await read_body(request, limit)
    try:
        # Events carry free-form payloads, where NaN or Infinity would otherwise slip through as
        # floats that no strict JSON reader downstream accepts.
        from_json(raw, allow_inf_nan=False)
    except ValueError as exc:
        raise not_json(str(exc)) from None
    if raw.lstrip()[:1] != b"[":
        items = [parse_json(model, raw)]
    else:
        items = parse_json_as(_list_of(model), raw)
        if not 1 <= len(items) <= max_items:
            raise invalid(f"A batch holds 1 to {max_items} items", field="(root)", count=len(items))
    for index, item in enumerate(items):
        if len(item.model_dump_json(by_alias=True, exclude_none=True)) > max_item_bytes:
            raise invalid(
                f"[{index}] is larger than {max_item_bytes} bytes", status_code=413, field=f"[{index}]"
            )
    return items


async def read_events(request: Request, limits: Limits) -> list[EventEnvelope]:
    """An event body (the audit and telemetry services'): one envelope or a batch, within ``limits``."""
    return await read_one_or_many(
        request,
        EventEnvelope,
        limits.max_json_body_bytes,
        limits.max_events_per_batch,
        limits.max_event_bytes,
    )


async def read_json(request: Request, model: type[M], limit: int, *, empty_ok: bool = False) -> M:
    """The request's body as ``model`` (a route declares its schema with ``body_spec``)."""
    return parse_json(model, await read_body(request, limit, empty_ok=empty_ok))


class UploadBudget:
    """Bounds the bytes of upload bodies held in memory at once, across all requests.

    A 32 MiB artifact arrives as ~43 MiB of JSON and is decoded next to it; without a bound, a burst
    of large uploads could take the process's memory. Past the budget an upload is refused at once
    with 429 ``RATE_LIMITED`` (retryable, ``Retry-After``) rather than queued without limit.
    """

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._in_use = 0

    @asynccontextmanager
    async def reserve(self, size: int) -> AsyncIterator[None]:
        # Whatever the request claims, it cannot hold more than the whole budget.
        size = min(size, self._capacity)
        # Check and reserve happen in one event-loop turn (no await between), so no lock is needed.
        if self._in_use + size > self._capacity:
            raise BackendError(
                ErrorCode.RATE_LIMITED,
                "Too many uploads are in progress; retry shortly",
                status_code=429,
                retryable=True,
                headers={"Retry-After": "1"},
            )
        self._in_use += size
        try:
            yield
        finally:
            self._in_use -= size

    @property
    def in_use(self) -> int:
        return self._in_use
