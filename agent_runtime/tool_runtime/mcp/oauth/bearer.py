"""A static bearer token from the configuration (``auth: {"type": "bearer", "tokenEnv": …}``)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator

import httpx

from agent_runtime.tool_runtime.mcp.errors import McpAuthorizationError
from agent_runtime.tool_runtime.mcp.oauth.challenge import bearer_challenge
from agent_runtime.tool_runtime.mcp.oauth.models import is_b64token
from agent_runtime.tool_runtime.mcp.oauth.urls import for_display

__all__ = ["BearerAuth"]


class BearerAuth(httpx.Auth):
    """Sends ``Authorization: Bearer <token>`` on every request. A 401 or a 403 ``insufficient_scope``
    cannot be fixed without a new token, so it raises ``McpAuthorizationError``."""

    def __init__(self, token: str) -> None:
        token = token.strip()
        if not token:
            raise McpAuthorizationError(401, "the configured bearer token is empty")
        if not is_b64token(token):
            # Said without the token: an HTTP library refusing the header would quote it.
            raise McpAuthorizationError(
                401, "the configured bearer token has characters an Authorization header cannot carry"
            )
        self._token = token

    def __repr__(self) -> str:
        return "BearerAuth(token=<hidden>)"

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        response = yield self._authorized(request)
        self._check(response)

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        response = yield self._authorized(request)
        self._check(response)

    def _authorized(self, request: httpx.Request) -> httpx.Request:
        request.headers["Authorization"] = f"Bearer {self._token}"
        return request

    @staticmethod
    def _check(response: httpx.Response) -> None:
        challenge = bearer_challenge(response)
        where = for_display(str(response.request.url))
        if response.status_code == 401:
            raise McpAuthorizationError(
                401,
                f"{where} refused the configured bearer token"
                + (f" ({challenge.error})" if challenge.error else "")
                + "; check the token in the server's configuration",
            )
        if response.status_code == 403 and challenge.error == "insufficient_scope":
            raise McpAuthorizationError(
                403,
                f"the configured bearer token lacks the permissions {where} needs"
                + (f" (scope {challenge.scope})" if challenge.scope else ""),
            )
