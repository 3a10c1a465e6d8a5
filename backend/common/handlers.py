"""The one place where exceptions become HTTP answers, all in the seed's error shape.

* :class:`~backend.common.errors.BackendError` (any ``CoworkError``) → its own status and shape;
* unknown routes → 404, wrong methods → 405 (with ``Allow``), both ``INVALID_REQUEST``;
* bad path or query parameters → 400 ``INVALID_REQUEST`` naming the parameter;
* anything else → 500 ``INTERNAL_ERROR`` with a fixed message; the traceback goes to the log only.

:class:`ErrorShapeMiddleware` takes the place of FastAPI's default middleware stack (see
:class:`backend.apps.BackendApp`): exceptions are mapped to answers here, by type, and FastAPI's request
handler gets its exit stack from it.
"""

from __future__ import annotations

import logging
from contextlib import AsyncExitStack
from typing import Any

from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backend.common.errors import BackendError
from backend.common.responses import error_response
from contracts.errors import CoworkError, ErrorCode, ErrorShape
from contracts.validation import describe, field_path

__all__ = ["ErrorShapeMiddleware", "error_answer"]

logger = logging.getLogger(__name__)

_INTERNAL = ErrorShape(code=ErrorCode.INTERNAL_ERROR, message="The service failed to handle the request")


def _cowork_error(exc: CoworkError) -> Response:
    if isinstance(exc, BackendError):
        return error_response(exc.shape, exc.status_code, exc.headers)
    return error_response(exc.shape, 400)


def _http_error(exc: StarletteHTTPException) -> Response:
    if exc.status_code == 404:
        message, details = "There is no such route", {"resource": "route"}
    elif exc.status_code == 405:
        message, details = "This route does not allow that method", {"resource": "route"}
    else:
        message, details = "The request cannot be handled", {}
    code = ErrorCode.INTERNAL_ERROR if exc.status_code >= 500 else ErrorCode.INVALID_REQUEST
    shape = ErrorShape(code=code, message=message, details=details)
    return error_response(shape, exc.status_code, exc.headers)


def _validation_error(exc: RequestValidationError) -> Response:
    problems: list[dict[str, str]] = []
    for error in exc.errors():
        # FastAPI prefixes the location ("path", "query", "header"); the name alone is what the
        # client wrote.
        location: tuple[Any, ...] = tuple(error.get("loc", ()))[1:]
        problems.append({"field": field_path(location), "problem": describe(error)})
    first = problems[0] if problems else {"field": "(root)", "problem": "is invalid"}
    shape = ErrorShape(
        code=ErrorCode.INVALID_REQUEST,
        message=f"{first['field']} {first['problem']}",
        details={"field": first["field"], "problem": first["problem"], "errors": problems[:20]},
    )
    return error_response(shape, 400)


def error_answer(exc: Exception) -> Response | None:
    """The answer to an exception the services raise on purpose; None for anything else (a bug)."""
    if isinstance(exc, CoworkError):
        return _cowork_error(exc)
    if isinstance(exc, StarletteHTTPException):
        return _http_error(exc)
    if isinstance(exc, RequestValidationError):
        return _validation_error(exc)
    return None


class ErrorShapeMiddleware:
    """Answers every exception in the error shape, so even a bug leaks nothing."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            # FastAPI's request handler requires this stack in the scope (it closes uploaded form
            # files with it); FastAPI's own middleware for it is not in this stack.
            async with AsyncExitStack() as stack:
                scope["fastapi_middleware_astack"] = stack
                await self.app(scope, receive, tracking_send)
        except Exception as exc:
            answer = None if started else error_answer(exc)
            if answer is None:
                logger.exception("unhandled error in %s %s", scope.get("method"), scope.get("path"))
                if started:
                    raise
                answer = error_response(_INTERNAL, 500)
            await answer(scope, receive, send)
