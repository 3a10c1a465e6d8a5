"""The desktop's reader of conversation history: the Workspace Service's ``session_history``
artifacts (seed 004: "History is always fetched from the backend"). Qt-free, asyncio (httpx).

The sidebar needs every conversation's title and chain, so a refresh lists the caller's workspaces,
each workspace's ``session_history`` artifacts, and reads the content of those it has not seen — a
summary is kept per artifact ID and content hash, so a refresh reads only what changed since.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel

from contracts.enums import WorkspaceScope
from contracts.messages import SessionHistory
from contracts.rest.workspaces import ArtifactList, ArtifactMetadata, WorkspaceList, WorkspaceResource
from desktop.conversation.sidebar import ConversationSummary, summarize_history

__all__ = ["BackendUnavailable", "HistoryClient"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

CONCURRENT_REQUESTS = 8
# Parsing is CPU work on the window's thread; beyond this size it moves to a worker thread.
_PARSE_OFF_THREAD_BYTES = 256 * 1024


class BackendUnavailable(Exception):
    """The backend could not be asked, or answered with an error; ``str()`` says which."""


class HistoryClient:
    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = 15.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._http = httpx.AsyncClient(
            base_url=url.rstrip("/"),
            headers={"authorization": f"Bearer {token}"},
            timeout=timeout,
            transport=transport,
            follow_redirects=False,
        )
        self._summaries: dict[tuple[str, str], ConversationSummary] = {}
        self._limit = asyncio.Semaphore(CONCURRENT_REQUESTS)

    async def aclose(self) -> None:
        await self._http.aclose()

    # ------------------------------------------------------------------ reading

    async def conversations(self) -> list[ConversationSummary]:
        """Every conversation with a stored history (unordered; :func:`build_sidebar` orders them)."""
        workspaces = (await self._get_json("/workspaces", WorkspaceList)).workspaces
        listings = await asyncio.gather(*(self._limited(self._histories, ws) for ws in workspaces))
        wanted: list[tuple[WorkspaceResource, ArtifactMetadata]] = [
            (ws, artifact)
            for ws, artifacts in zip(workspaces, listings, strict=True)
            for artifact in artifacts
        ]
        summaries = await asyncio.gather(*(self._limited(self._summary, ws, a) for ws, a in wanted))
        live = {(a.artifact_id, a.sha256) for _, a in wanted}
        for key in list(self._summaries):
            if key not in live:
                del self._summaries[key]
        return [summary for summary in summaries if summary is not None]

    async def history(self, workspace_id: str, session_id: str) -> SessionHistory | None:
        """The session's latest snapshot, or ``None`` when it has none yet."""
        listing = await self._get_json(
            f"/workspaces/{workspace_id}/artifacts",
            ArtifactList,
            params={"sessionId": session_id, "artifactType": "session_history"},
        )
        if not listing.artifacts:
            return None
        newest = max(listing.artifacts, key=lambda a: a.snapshot_at or a.updated_at)
        return await self._content(workspace_id, newest)

    # ------------------------------------------------------------------ steps

    async def _histories(self, workspace: WorkspaceResource) -> list[ArtifactMetadata]:
        listing = await self._get_json(
            f"/workspaces/{workspace.workspace_id}/artifacts",
            ArtifactList,
            params={"artifactType": "session_history"},
        )
        return listing.artifacts

    async def _summary(
        self, workspace: WorkspaceResource, artifact: ArtifactMetadata
    ) -> ConversationSummary | None:
        key = (artifact.artifact_id, artifact.sha256)
        known = self._summaries.get(key)
        if known is not None:
            return known
        history = await self._content(workspace.workspace_id, artifact)
        if history is None:
            return None
        folder = (
            workspace.local_paths[0]
            if workspace.workspace_scope is WorkspaceScope.LOCAL and workspace.local_paths
            else None
        )
        summary = summarize_history(
            history.to_wire(), folder=folder, updated_at=artifact.snapshot_at or artifact.updated_at
        )
        self._summaries[key] = summary
        return summary

    async def _content(self, workspace_id: str, artifact: ArtifactMetadata) -> SessionHistory | None:
        path = f"/workspaces/{workspace_id}/artifacts/{artifact.artifact_id}/content"
        body = await self._get(path)
        try:
            if len(body) > _PARSE_OFF_THREAD_BYTES:
                return await asyncio.to_thread(SessionHistory.model_validate_json, body)
            return SessionHistory.model_validate_json(body)
        except ValueError as exc:
            # One unreadable snapshot must not hide every other conversation.
            logger.warning("session history %s is unreadable: %s", artifact.artifact_id, exc)
            return None

    async def _limited(self, call: Callable[..., Awaitable[T]], *args: Any) -> T:
        async with self._limit:
            return await call(*args)

    async def _get_json(self, path: str, model: type[M], *, params: dict[str, str] | None = None) -> M:
        body = await self._get(path, params=params)
        try:
            return model.model_validate_json(body)
        except ValueError as exc:
            raise BackendUnavailable(f"The backend sent an answer this app cannot read ({path}).") from exc

    async def _get(self, path: str, *, params: dict[str, str] | None = None) -> bytes:
        try:
            response = await self._http.get(path, params=params)
        except httpx.HTTPError as exc:
            raise BackendUnavailable(
                f"The backend at {self._http.base_url} cannot be reached ({type(exc).__name__})."
            ) from exc
        if response.status_code != 200:
            raise BackendUnavailable(f"The backend refused to list the history: {_error_message(response)}")
        return response.content


def _error_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except (ValueError, json.JSONDecodeError):
        body = None
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return f"{body['message']} ({response.status_code})"
    return f"HTTP {response.status_code}"
