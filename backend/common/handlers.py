"""The one place where exceptions become HTTP answers, all in the seed's error shape.

* :class:`~backend.common.errors.BackendError` (any ``CoworkError``) → its own status and shape;
* unknown routes → 404, wrong methods → 405 (with ``Allow``), both ``INVALID_REQUEST``;
* bad path or query parameters → 400 ``INVALID_REQUEST`` naming the parameter;
* anything else → 500 ``INTERNAL_ERROR`` with a fixed message; the traceback goes to the log only.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backend.common.errors import BackendError
from backend.common.responses import error_response
from contracts.errors import CoworkError, ErrorCode, ErrorShape
from contracts.validation import describe, field_path

__all__ = ["install_error_handling"]

logger = logging.getLogger(__name__)

_INTERNAL = ErrorShape(code=ErrorCode.INTERNAL_ERROR, message="The service failed to handle the request")


async def _cowork_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, CoworkError)
    status = exc.status_code if isinstance(exc, BackendError) else 400
    headers = exc.headers if isinstance(exc, BackendError) else None
    return error_response(exc.shape, status, headers)


async def _http_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 404:
        message, details = "There is no such route", {"resource": "route"}
    elif exc.status_code == 405:
        message, details = "This route does not allow that method", {"resource": "route"}
    else:
        message, details = "The request cannot be handled", {}
    code = ErrorCode.INTERNAL_ERROR if exc.status_code >= 500 else ErrorCode.INVALID_REQUEST
    shape = ErrorShape(code=code, message=message, details=details)
    return error_response(shape, exc.status_code, exc.headers)


async def _validation_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
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


class ErrorShapeMiddleware:
    """Catches what no handler did, so even a bug answers in the error shape and leaks nothing."""

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
            await self.app(scope, receive, tracking_send)
        except Exception:
            logger.exception("unhandled error in %s %s", scope.get("method"), scope.get("path"))
            if started:
                raise
            await error_response(_INTERNAL, 500)(scope, receive, send)


def install_error_handling(app: FastAPI) -> None:
    app.add_exception_handler(CoworkError, _cowork_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_middleware(ErrorShapeMiddleware)
