"""Reaching another backend service over HTTP when the services run apart (seed 001 §11: backend
services talk over their HTTP APIs only). Each adapter implements one of the services' ports and
forwards the caller's own bearer token, so the other service applies the same tenant scoping.

Errors come back in the seed's shape and are re-raised as they are (a 404 stays a 404); a service
that cannot be reached is 503 ``INTERNAL_ERROR``, retryable.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import quote

from pydantic import ValidationError

from backend.common.auth import Principal
from backend.common.errors import BackendError
from contracts._base import WireModel
from contracts.enums import Capability, WorkspaceScope
from contracts.errors import ErrorCode, ErrorShape
from contracts.rest.policies import IssueBundleRequest, IssuedBundle
from contracts.rest.sessions import SessionResource
from contracts.rest.workspaces import ResolveWorkspaceRequest, WorkspaceResource, WorkspaceSearchResult

if TYPE_CHECKING:
    import httpx

__all__ = [
    "HttpPolicyProvider",
    "HttpSessionDirectory",
    "HttpWorkspaceResolver",
    "HttpWorkspaceSearcher",
    "ServiceClient",
]

logger = logging.getLogger(__name__)
M = TypeVar("M", bound=WireModel)


class ServiceClient:
    def __init__(
        self, base_url: str, *, timeout: float = 10.0, transport: httpx.BaseTransport | None = None
    ) -> None:
        # Imported here: only a backend split across processes has peers, and httpx would add 16 ms
        # (measured) to the start of every embedded backend otherwise.
        import httpx

        self._client = httpx.Client(base_url=base_url, timeout=timeout, transport=transport)

    def close(self) -> None:
        self._client.close()

    def call(
        self,
        principal: Principal,
        method: str,
        path: str,
        answer: type[M],
        body: WireModel | None = None,
        params: dict[str, str | int] | None = None,
    ) -> M:
        import httpx

        headers = {"Authorization": f"Bearer {principal.token}", "Accept": "application/json"}
        content = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            content = body.model_dump_json(by_alias=True, exclude_none=True)
        try:
            response = self._client.request(method, path, content=content, headers=headers, params=params)
        except httpx.HTTPError as exc:
            logger.warning("backend peer unreachable: %s %s: %s", method, path, exc)
            raise BackendError(
                ErrorCode.INTERNAL_ERROR,
                "A backend service is unreachable; retry",
                status_code=503,
                retryable=True,
            ) from exc
        try:
            if response.status_code >= 400:
                shape = ErrorShape.model_validate_json(response.content)
                raise BackendError(
                    shape.code,
                    shape.message,
                    status_code=response.status_code,
                    retryable=shape.retryable,
                    details=shape.details,
                )
            return answer.model_validate_json(response.content)
        except ValidationError as exc:
            logger.error("backend peer answered %s %s with an unexpected body", method, path)
            raise BackendError(
                ErrorCode.INTERNAL_ERROR,
                "A backend service answered unexpectedly",
                status_code=502,
                retryable=True,
            ) from exc


class HttpPolicyProvider:
    def __init__(self, client: ServiceClient) -> None:
        self._client = client

    def issue(
        self,
        principal: Principal,
        session_id: str,
        workspace_paths: Sequence[str],
        supported: Sequence[Capability] | None,
    ) -> IssuedBundle:
        request = IssueBundleRequest(
            session_id=session_id,
            workspace_paths=list(workspace_paths),
            supported_capabilities=None if supported is None else list(supported),
        )
        return self._client.call(principal, "POST", "/policy/bundles", IssuedBundle, request)


class HttpWorkspaceResolver:
    def __init__(self, client: ServiceClient) -> None:
        self._client = client

    def resolve(
        self, principal: Principal, scope: WorkspaceScope, local_paths: Sequence[str]
    ) -> WorkspaceResource:
        request = ResolveWorkspaceRequest(workspace_scope=scope, local_paths=list(local_paths) or None)
        return self._client.call(principal, "POST", "/workspaces", WorkspaceResource, request)


class HttpSessionDirectory:
    def __init__(self, client: ServiceClient) -> None:
        self._client = client

    def workspace_of(self, principal: Principal, session_id: str) -> str | None:
        try:
            session = self._client.call(
                principal, "GET", f"/sessions/{quote(session_id, safe='')}", SessionResource
            )
        except BackendError as exc:
            if exc.code is ErrorCode.SESSION_NOT_FOUND:
                return None
            raise
        return session.workspace_id


class HttpWorkspaceSearcher:
    def __init__(self, client: ServiceClient) -> None:
        self._client = client

    def search(
        self,
        principal: Principal,
        workspace_id: str,
        query: str,
        *,
        limit: int = 10,
        session_id: str | None = None,
    ) -> WorkspaceSearchResult:
        params: dict[str, str | int] = {"query": query, "limit": limit}
        if session_id is not None:
            params["sessionId"] = session_id
        path = f"/workspaces/{quote(workspace_id, safe='')}/search"
        return self._client.call(principal, "GET", path, WorkspaceSearchResult, params=params)
