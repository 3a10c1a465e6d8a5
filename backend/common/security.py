"""The FastAPI dependency that turns ``Authorization: Bearer …`` into a :class:`Principal`."""

from __future__ import annotations

from fastapi import Request

from backend.common.auth import Principal, TokenVerifier
from backend.common.errors import unauthorized

__all__ = ["Authenticator"]

_MAX_TOKEN_LENGTH = 4096


class Authenticator:
    def __init__(self, verifier: TokenVerifier) -> None:
        self._verifier = verifier

    async def __call__(self, request: Request) -> Principal:
        header = request.headers.get("authorization")
        if header is None:
            raise unauthorized("missing", "This request needs a bearer token")
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token or len(token) > _MAX_TOKEN_LENGTH:
            raise unauthorized("malformed", "The Authorization header must be 'Bearer <token>'")
        return self._verifier.verify(token)
