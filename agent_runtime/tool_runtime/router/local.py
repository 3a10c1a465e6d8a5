"""``LocalToolRouter``: the tool runtime's implementation of the host's ``ToolRouter`` (seed 003 §3).

Dispatch: unknown tool → ``TOOL_NOT_FOUND``; arguments validated against the tool's own model →
``INVALID_REQUEST`` naming the argument; then the tool runs, and whatever it raises becomes a failed
result with the seed's code (§7.3). Nothing raises out of ``execute`` except cancellation, which
first stops what the call started.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agent_runtime.tool_runtime.errors import ToolFailure
from agent_runtime.tool_runtime.output.artifacts import Spool
from agent_runtime.tool_runtime.output.results import failed_result, succeeded_result
from agent_runtime.tool_runtime.platform import Platform, current_platform
from agent_runtime.tool_runtime.router.registry import ToolRegistry, builtin_tools
from agent_runtime.tool_runtime.tools.base import DEFAULT_MAX_OUTPUT_BYTES, Arguments, Tool, ToolContext
from agent_runtime.tool_runtime.tools.ledger import ReadLedger
from contracts.egress import Resolver
from contracts.errors import ErrorCode
from contracts.tools import ReadScope, ToolArtifact, ToolDefinition, ToolRequest, ToolResult
from contracts.urls import RedirectCheck
from contracts.validation import invalid_request

__all__ = ["LocalToolRouter"]

logger = logging.getLogger(__name__)


class LocalToolRouter:
    """Runs the built-in tools on this machine; structurally a ``ToolRouter`` (agent_host.routing).

    ``workspace_root`` is the default for requests whose scope names none. ``allow_loopback_http``
    lets HttpRequest reach 127.0.0.0/8 and ::1 — for tests against a local server; it is a
    constructor argument only, never read from the environment or a request. ``resolver`` replaces
    the system's DNS for HttpRequest. Spooled artifact files go to ``spool_dir`` (default: a private
    temp directory). ``kill_grace_seconds`` is the wait between TERM and KILL for a command's tree.
    ``environ`` is the environment commands inherit (default: this process's).
    """

    def __init__(
        self,
        *,
        workspace_root: Path | None = None,
        platform: Platform | None = None,
        allow_loopback_http: bool = False,
        resolver: Resolver | None = None,
        spool_dir: Path | None = None,
        max_file_size_bytes: int | None = None,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        kill_grace_seconds: float = 5.0,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        if max_output_bytes < 1:
            raise ValueError("max_output_bytes must be at least 1")
        self._platform = platform or current_platform()
        self._workspace_root = None if workspace_root is None else str(workspace_root)
        self._max_file_size_bytes = max_file_size_bytes
        self._max_output_bytes = max_output_bytes
        self._spool = Spool(spool_dir)
        self._registry = ToolRegistry(
            builtin_tools(
                resolver=resolver,
                allow_loopback_http=allow_loopback_http,
                kill_grace_seconds=kill_grace_seconds,
                environ=environ,
            )
        )
        self._running: set[asyncio.Task[Any]] = set()
        self._closed = False
        # The files this session has read, for EditFile: the router lives as long as the session.
        self._reads = ReadLedger()

    @property
    def spool_directory(self) -> Path:
        """Where spooled artifact files are kept (created on first use)."""
        return self._spool.directory

    def get_available_tools(self) -> list[ToolDefinition]:
        return self._registry.definitions()

    async def execute(
        self,
        request: ToolRequest,
        *,
        check_redirect: RedirectCheck | None = None,
        read_scope: ReadScope | None = None,
    ) -> ToolResult:
        """Run one call; ``check_redirect`` is asked before HttpRequest follows each redirect;
        ``read_scope`` filters what ListDirectory, Glob and Grep show or read."""
        tool = self._registry.get(request.tool_name)
        if tool is None:
            return failed_result(request, ErrorCode.TOOL_NOT_FOUND, f"Unknown tool: {request.tool_name}")
        if self._closed:
            return failed_result(request, ErrorCode.TOOL_EXECUTION_FAILED, "The tool runtime has shut down")
        try:
            args = _validated(tool, request.arguments)
            context = self._context(request, check_redirect, read_scope)
        except ToolFailure as failure:
            return failed_result(request, failure.code, failure.message)
        task = asyncio.current_task()
        if task is not None:
            self._running.add(task)
        try:
            output = await tool.run(args, context)
        except ToolFailure as failure:
            return failed_result(request, failure.code, failure.message, output_text=failure.output_text)
        except Exception:
            # A bug of ours, not the caller's: logged with its traceback, reported without it.
            logger.exception("tool %s failed unexpectedly", request.tool_name)
            return failed_result(
                request,
                ErrorCode.INTERNAL_ERROR,
                f"{request.tool_name} failed unexpectedly; see the runtime log",
            )
        finally:
            if task is not None:
                self._running.discard(task)
        return succeeded_result(request, output)

    def _context(
        self, request: ToolRequest, check_redirect: RedirectCheck | None, read_scope: ReadScope | None
    ) -> ToolContext:
        scope = request.scope
        workspace_root = self._workspace_root
        max_file_size = self._max_file_size_bytes
        max_output = self._max_output_bytes
        if scope is not None:
            if scope.workspace_root is not None:
                workspace_root = self._platform.normalize_path(
                    scope.workspace_root, field="scope.workspaceRoot"
                )
            if scope.max_file_size_bytes is not None:
                max_file_size = scope.max_file_size_bytes
            if scope.max_output_bytes is not None:
                max_output = scope.max_output_bytes
        return ToolContext(
            platform=self._platform,
            workspace_root=workspace_root,
            max_file_size_bytes=max_file_size,
            max_output_bytes=max_output,
            spool=self._spool,
            check_redirect=check_redirect,
            reads=self._reads,
            read_scope=read_scope,
        )

    def release_artifacts(self, artifacts: Sequence[ToolArtifact]) -> None:
        """Delete the spooled files behind ``artifacts``; files this router did not create are left alone."""
        self._spool.release(artifact.data_path for artifact in artifacts if artifact.data_path is not None)

    async def aclose(self) -> None:
        """Cancel calls still running (killing their processes), close connections, remove the spool."""
        self._closed = True
        current = asyncio.current_task()
        running = [task for task in self._running if task is not current and not task.done()]
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running)
        await self._registry.aclose()
        self._spool.close()


def _validated(tool: Tool[Any], arguments: dict[str, Any]) -> Arguments:
    """The arguments as the tool's model, validated as the JSON they are (``"5"`` is no integer)."""
    try:
        document = json.dumps(arguments, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ToolFailure(ErrorCode.INVALID_REQUEST, "arguments must be plain JSON values") from exc
    try:
        validated: Arguments = tool.arguments.model_validate_json(document)
    except ValidationError as exc:
        if any(error["type"] == "json_invalid" for error in exc.errors()):
            # json.dumps wrote it, so the one thing the parser can refuse is a lone UTF-16
            # surrogate ("\ud800"), which no file, command or URL can carry.
            field = _field_with_surrogate(arguments, "arguments") or "arguments"
            raise ToolFailure(
                ErrorCode.INVALID_REQUEST, f"{field} is not valid Unicode text (it contains a lone surrogate)"
            ) from exc
        shape = invalid_request(exc, prefix="arguments")
        raise ToolFailure(ErrorCode.INVALID_REQUEST, shape.message) from exc
    return validated


def _field_with_surrogate(value: Any, path: str) -> str | None:
    if isinstance(value, str):
        return path if any("\ud800" <= c <= "\udfff" for c in value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            found = _field_with_surrogate(key, path) or _field_with_surrogate(item, f"{path}.{key}")
            if found:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _field_with_surrogate(item, f"{path}[{index}]")
            if found:
                return found
    return None
