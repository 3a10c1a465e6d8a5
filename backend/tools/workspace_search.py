"""WorkspaceSearch: the agent recalls earlier work — full-text search over this workspace's past
conversations and the text artifacts they produced, through the Workspace Service's search (which owns
the index and checks the workspace is the caller's)."""

from __future__ import annotations

from backend.common.errors import BackendError
from backend.common.runner import Runner
from backend.tools.base import BackendTool, ToolCall, ToolFailed, ToolOutput
from backend.tools.ports import WorkspaceSearcher
from contracts.errors import ErrorCode
from contracts.rest.tools import BackendToolName, WorkspaceSearchArguments
from contracts.rest.workspaces import WorkspaceSearchHit, WorkspaceSearchResult

__all__ = ["WorkspaceSearch", "render"]


class WorkspaceSearch(BackendTool[WorkspaceSearchArguments]):
    name = BackendToolName.WORKSPACE_SEARCH.value
    description = (
        "Search this workspace's earlier conversations (every session's messages and tool results) and "
        "the text artifacts they produced, to recall earlier work: decisions, commands run, errors seen, "
        "files changed. Results are ranked best first, each with a snippet and its session, message or "
        "artifact, and time."
    )
    arguments = WorkspaceSearchArguments

    def __init__(self, searcher: WorkspaceSearcher, runner: Runner) -> None:
        self._searcher = searcher
        self._runner = runner

    async def run(self, call: ToolCall, args: WorkspaceSearchArguments) -> ToolOutput:
        try:
            result = await self._runner(
                self._searcher.search,
                call.principal,
                call.workspace_id,
                args.query,
                limit=args.limit,
                session_id=args.session_id,
            )
        except BackendError as exc:
            if exc.status_code == 400:
                # The query itself (no word in it): the model can rephrase.
                raise ToolFailed(ErrorCode.INVALID_REQUEST, exc.shape.message) from exc
            raise
        return ToolOutput(text=render(result, args.session_id))


def _hit(number: int, hit: WorkspaceSearchHit) -> str:
    when = hit.timestamp.strftime("%Y-%m-%d %H:%M UTC")
    if hit.kind == "message":
        role = hit.role.value if hit.role is not None else "message"
        head = f"{number}. {role} message {hit.message_id} · session {hit.session_id}"
    else:
        head = f'{number}. artifact "{hit.artifact_name}" ({hit.artifact_uri}) · session {hit.session_id}'
    task = f" · task {hit.task_id}" if hit.task_id else ""
    return f"{head}{task} · {when}\n   {hit.snippet}"


def render(result: WorkspaceSearchResult, session_id: str | None = None) -> str:
    """The results as the model reads them: one numbered entry per hit, snippet under its reference."""
    where = f"session {session_id}" if session_id else "this workspace"
    if not result.results:
        text = f'No results for "{result.query}" in {where}.'
    else:
        count = len(result.results)
        noun = "result" if count == 1 else "results"
        lines = [f'{count} {noun} for "{result.query}" in {where}, best first:', ""]
        lines += [_hit(number, hit) for number, hit in enumerate(result.results, 1)]
        text = "\n".join(lines)
    if result.truncated:
        text += "\n\n(Only the most recent part of the workspace was searched; older matches may exist.)"
    return text
