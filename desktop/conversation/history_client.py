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
from collections.abc import Awaitable, Callable, Collection
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel

from contracts.enums import WorkspaceScope
from contracts.messages import SessionHistory
from contracts.rest.workspaces import ArtifactList, ArtifactMetadata, WorkspaceList, WorkspaceResource
from desktop.conversation.sidebar import ConversationSummary, summarize_history
from desktop.i18n import translate

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

    # ------------------------------------------------------------------ deleting

    async def delete_conversation(self, summary: ConversationSummary) -> None:
        """Permanently remove the conversation from the backend: the history and artifacts of its
        session and of every session it continued (each in the workspace it ran in)."""
        workspaces = {known.session_id: known.workspace_id for known in self._summaries.values()}
        for session_id in sorted(summary.chain):
            workspace_id = workspaces.get(session_id, summary.workspace_id)
            path = f"/workspaces/{workspace_id}/sessions/{session_id}"
            try:
                response = await self._http.delete(path)
            except httpx.HTTPError as exc:
                raise BackendUnavailable(
                    translate("Conversation", "The backend at {url} cannot be reached ({problem}).").format(
                        url=self._http.base_url, problem=type(exc).__name__
                    )
                ) from exc
            # 404: already gone (deleted from another window, or purged) — the wish is fulfilled.
            if response.status_code not in (204, 404):
                raise BackendUnavailable(
                    translate(
                        "Conversation", "The backend refused to delete the conversation: {problem}"
                    ).format(problem=_error_message(response))
                )
        self._summaries = {
            key: known for key, known in self._summaries.items() if known.session_id not in summary.chain
        }

    async def attachments(self, workspace_id: str, names: Collection[str]) -> dict[str, bytes]:
        """The bytes of the workspace's ``attachment`` artifacts called ``names`` — the images a
        history names instead of holding them; those not stored are left out."""
        wanted = set(names)
        if not wanted:
            return {}
        listing = await self._get_json(
            f"/workspaces/{workspace_id}/artifacts", ArtifactList, params={"artifactType": "attachment"}
        )
        found = {a.artifact_name: a for a in listing.artifacts if a.artifact_name in wanted}

        async def read(artifact: ArtifactMetadata) -> tuple[str, bytes]:
            path = f"/workspaces/{workspace_id}/artifacts/{artifact.artifact_id}/content"
            return artifact.artifact_name, await self._limited(self._get, path)

        return dict(await asyncio.gather(*(read(artifact) for artifact in found.values())))

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
            raise BackendUnavailable(
                translate("Conversation", "The backend sent an answer this app cannot read ({path}).").format(
                    path=path
                )
            ) from exc

    async def _get(self, path: str, *, params: dict[str, str] | None = None) -> bytes:
        try:
            response = await self._http.get(path, params=params)
        except httpx.HTTPError as exc:
            raise BackendUnavailable(
                translate("Conversation", "The backend at {url} cannot be reached ({problem}).").format(
                    url=self._http.base_url, problem=type(exc).__name__
                )
            ) from exc
        if response.status_code != 200:
            raise BackendUnavailable(
                translate("Conversation", "The backend refused to list the history: {problem}").format(
                    problem=_error_message(response)
                )
            )
        return response.content


def _error_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except (ValueError, json.JSONDecodeError):
        body = None
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return f"{body['message']} ({response.status_code})"
    return f"HTTP {response.status_code}"
