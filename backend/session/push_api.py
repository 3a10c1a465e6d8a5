"""Session Service routes of the server push, its polling fallback and the remote admin stop
(wire: :mod:`contracts.rest.push`; logic: :mod:`backend.session.push`).

The WebSocket is authenticated here rather than by the routers' route class (which is for HTTP
routes): the bearer token from the upgrade's ``Authorization`` header, else from the first message.
A token in the URL is never looked at — URLs end up in access logs and proxies' logs.
"""

# Annotations are not postponed here: FastAPI reads them at run time.
import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import APIRouter, Path, Request, WebSocket
from pydantic import ValidationError
from starlette.responses import Response
from starlette.websockets import WebSocketDisconnect, WebSocketState

from backend.common.auth import Principal, TokenVerifier, require_admin
from backend.common.body import read_json
from backend.common.errors import BackendError, unauthorized
from backend.common.openapi import body_spec, error_responses
from backend.common.responses import json_response
from backend.common.runner import Runner
from backend.common.security import Authenticator, caller_of
from backend.session.push import SessionPush
from backend.session.service import SessionService
from contracts._base import WireModel
from contracts.errors import ErrorCode
from contracts.rest.push import (
    CLOSE_NOT_FOUND,
    CLOSE_UNAUTHORIZED,
    PushAuth,
    PushError,
    SessionPushStatus,
    StopSessionRequest,
)
from contracts.rest.sessions import SessionResource

__all__ = ["BODY_MODELS", "router"]

logger = logging.getLogger(__name__)

BODY_MODELS = (StopSessionRequest,)

SessionId = Annotated[str, Path(min_length=1, max_length=128, description="The session's ID")]

AUTH_WAIT_S = 10.0
"""How long a connection without an ``Authorization`` header may take to send its token."""
_MAX_TOKEN_LENGTH = 4096
_AUTH_MESSAGE = 'The first message must be {"type": "auth", "token": "<bearer token>"}'


def router(
    sessions: SessionService,
    push: SessionPush,
    authenticate: Authenticator,
    verifier: TokenVerifier,
    runner: Runner,
    max_body: int,
    *,
    websockets: bool = True,
) -> APIRouter:
    """``websockets`` False leaves the WebSocket route out (polling only)."""
    api = APIRouter(tags=["sessions"], route_class=authenticate.route_class)

    @api.get(
        "/sessions/{session_id}/policy-status",
        response_model=SessionPushStatus,
        responses=error_responses(401, 404),
        summary="What the server push would say: a changed or revoked policy, an administrator's stop",
    )
    async def policy_status(request: Request, session_id: SessionId) -> Response:
        return json_response(await runner(push.status, caller_of(request), session_id))

    @api.post(
        "/sessions/{session_id}/stop",
        response_model=SessionResource,
        responses=error_responses(400, 401, 403, 404, 409, 413, 415),
        summary="Remote admin stop: end any session of the tenant (admin scope)",
        openapi_extra=body_spec(StopSessionRequest, required=False),
    )
    async def stop(request: Request, session_id: SessionId) -> Response:
        admin = caller_of(request)
        require_admin(admin, "stop another user's session")
        body = await read_json(request, StopSessionRequest, max_body, empty_ok=True)
        return json_response(await runner(sessions.stop, admin, session_id, body.reason))

    if websockets:

        async def session_push(websocket: WebSocket, session_id: SessionId) -> None:
            await _serve_push(websocket, session_id, push, verifier)

        api.add_api_websocket_route("/sessions/{session_id}/push", session_push, name="session_push")
    return api


async def _serve_push(
    websocket: WebSocket, session_id: str, push: SessionPush, verifier: TokenVerifier
) -> None:
    await websocket.accept()

    async def send(message: WireModel) -> None:
        await websocket.send_text(message.model_dump_json(by_alias=True, exclude_none=True))

    try:
        try:
            principal = await _principal(websocket, verifier)
        except BackendError as exc:
            await _refuse(websocket, send, exc, CLOSE_UNAUTHORIZED)
            return
        try:
            record = await push.owned(principal, session_id)
        except BackendError as exc:
            code = CLOSE_NOT_FOUND if exc.shape.code is ErrorCode.SESSION_NOT_FOUND else 1011
            await _refuse(websocket, send, exc, code)
            return
        # The client says nothing after authenticating; reading is how its going away is noticed.
        serving = asyncio.ensure_future(push.serve(principal, record, send))
        listening = asyncio.ensure_future(_until_disconnect(websocket))
        try:
            await asyncio.wait({serving, listening}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (serving, listening):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect, OSError, RuntimeError):
                    await task
        if serving.done() and not serving.cancelled() and serving.exception() is None:
            await _close(websocket, 1000)
    except WebSocketDisconnect:
        return
    except Exception:
        logger.exception("the push connection of session %s failed", session_id)
        await _close(websocket, 1011)


async def _principal(websocket: WebSocket, verifier: TokenVerifier) -> Principal:
    header = websocket.headers.get("authorization")
    if header is not None:
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token or len(token) > _MAX_TOKEN_LENGTH:
            raise unauthorized("malformed", "The Authorization header must be 'Bearer <token>'")
        return verifier.verify(token)
    try:
        async with asyncio.timeout(AUTH_WAIT_S):
            text = await websocket.receive_text()
    except TimeoutError:
        raise unauthorized("missing", "This connection needs a bearer token") from None
    except KeyError:  # a binary frame
        raise unauthorized("malformed", _AUTH_MESSAGE) from None
    try:
        auth = PushAuth.model_validate_json(text)
    except ValidationError:
        raise unauthorized("malformed", _AUTH_MESSAGE) from None
    return verifier.verify(auth.token)


async def _until_disconnect(websocket: WebSocket) -> None:
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return


Sender = Callable[[WireModel], Awaitable[None]]


async def _refuse(websocket: WebSocket, send: Sender, error: BackendError, code: int) -> None:
    with contextlib.suppress(WebSocketDisconnect, OSError, RuntimeError):
        await send(PushError(error=error.shape))
    await _close(websocket, code)


async def _close(websocket: WebSocket, code: int) -> None:
    if websocket.application_state is WebSocketState.CONNECTED:
        with contextlib.suppress(WebSocketDisconnect, OSError, RuntimeError):
            await websocket.close(code)
