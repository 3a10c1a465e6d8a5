"""Bearer authentication for every route of a router: ``Authorization: Bearer …`` → :class:`Principal`.

A router made with ``APIRouter(route_class=authenticate.route_class)`` checks the token before anything
else about the request — its parameters and body are looked at only once the caller is known — and a
route cannot be added to it without authentication by forgetting a parameter. The endpoint reads the
caller with :func:`caller_of`. A public route on such a router says so explicitly
(``route_class_override=APIRoute``).

Not a FastAPI dependency (``Depends(authenticate)``): a route with dependencies to resolve costs FastAPI
20-60 µs more per request than one without — measured, 8% of a session creation, 4% of a 64 KiB
upload and 8-15% of an artifact read — for a value that needs nothing FastAPI resolves.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request
from fastapi.routing import APIRoute
from starlette.responses import Response

from backend.common.auth import Principal, TokenVerifier
from backend.common.errors import unauthorized

__all__ = ["Authenticator", "caller_of"]

_MAX_TOKEN_LENGTH = 4096
_PRINCIPAL = "cowork.principal"
"""Where an authenticated route keeps its caller, in the request's ASGI scope."""

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class Authenticator:
    def __init__(self, verifier: TokenVerifier) -> None:
        self._verifier = verifier
        authenticate = self

        class AuthenticatedRoute(APIRoute):
            def get_route_handler(self) -> Handler:
                handler = super().get_route_handler()

                async def authenticated(request: Request) -> Response:
                    request.scope[_PRINCIPAL] = authenticate(request)
                    return await handler(request)

                return authenticated

        self.route_class: type[APIRoute] = AuthenticatedRoute
        """The route class of routers whose every route needs a bearer token."""

    def __call__(self, request: Request) -> Principal:
        header = request.headers.get("authorization")
        if header is None:
            raise unauthorized("missing", "This request needs a bearer token")
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token or len(token) > _MAX_TOKEN_LENGTH:
            raise unauthorized("malformed", "The Authorization header must be 'Bearer <token>'")
        return self._verifier.verify(token)


def caller_of(request: Request) -> Principal:
    """Who is calling, on a route of an authenticated router."""
    principal = request.scope.get(_PRINCIPAL)
    if not isinstance(principal, Principal):
        # Only a route added without the authenticated route class gets here: a bug, answered 500.
        raise RuntimeError("this route is not authenticated")
    return principal
