"""``ToolDispatch``: the host's side of a tool call (seed 000 §7.2–§7.5, §5.2).

The loop drives a call in three moves, with the policy and approvals in between:

1. ``prepare`` (§7.3 steps 1–2): the tool's capability, or ``TOOL_NOT_FOUND``; every path argument
   resolved (``paths.resolve_path``) and written back into the call, the facts the policy needs
   (§8.2–§8.3: real path, file size, project folders), and the target a user sees and a session-wide
   approval keys on (the path, the command line, the URL's host).
2. the loop asks ``PolicyEnforcer.check(prepared.facts, prepared.capability, …)`` and, if needed, the
   user (§7.3 steps 3–5).
3. ``execute`` (§7.3 step 6): the original of a file about to change is recorded for the patch
   preview, the router runs the call under its category's timeout (§7.4), and artifacts are uploaded
   best-effort and released (§7.5). Tool faults come back as failed results; only cancellation
   propagates, after the router stopped what the call started (the ``ToolRouter`` contract).

Redirects: HttpRequest follows them itself (up to five, with HTTP's method rules), but before each hop
it asks back. ``execute`` prepares the hop as a call of its own (the same ``prepare``: the URL's host
is the target) and hands it to the loop's ``vet_redirect`` — the policy check and, where the policy
asks for one, the approval, exactly as for the first URL. A refused hop ends the call with the loop's
refused result naming the URL; the time spent waiting for an approval does not count against the
call's timeout.

Residual race (TOCTOU): the path is resolved at ``prepare``, the tool opens it later (after an
approval, possibly minutes later). ``execute`` resolves it again just before the call and refuses if
the answer changed — a directory swapped for a symlink meanwhile — which narrows the window to the
microseconds between that check and the tool's own ``open``. Closing it fully would need
``openat``-style descriptor walking inside the tools; the policy's decision is on the path, so a local
process that can rewrite the project's directories inside that window can still redirect one call.
"""

from __future__ import annotations

import asyncio
import locale
import logging
import os
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from agent_runtime.agent_host.policy import ToolCallFacts, UrlRejected, parse_url_host
from agent_runtime.agent_host.routing.artifacts import (
    MAX_UPLOAD_BYTES,
    ArtifactQueue,
    ArtifactUploader,
    UploadContext,
    UploadOutcome,
    queue_artifacts,
    upload_artifacts,
)
from agent_runtime.agent_host.routing.before_images import BeforeImages
from agent_runtime.agent_host.routing.errors import PathRejected
from agent_runtime.agent_host.routing.patches import MAX_DIFF_BYTES, PatchTracker
from agent_runtime.agent_host.routing.paths import resolve_path, resolve_root
from agent_runtime.agent_host.routing.protocol import ToolRouter
from agent_runtime.agent_host.routing.timeouts import DEFAULT_TIMEOUTS, ToolTimeouts
from contracts.edits import EditRefused, apply_edit
from contracts.enums import TOOL_CAPABILITIES, Capability, ToolName, ToolStatus
from contracts.errors import ErrorCode
from contracts.mcp import McpServerStatus, split_tool_name
from contracts.methods import PatchPreview
from contracts.rest.tools import BackendToolName
from contracts.tools import (
    ReadScope,
    ToolCall,
    ToolDefinition,
    ToolError,
    ToolRequest,
    ToolResult,
    ToolScope,
)

if TYPE_CHECKING:
    from contracts.mcp_boundary import McpServers

__all__ = ["PreparedCall", "RedirectVetter", "ToolDispatch"]

logger = logging.getLogger(__name__)

_FILE_TOOLS = frozenset({Capability.FILE_READ, Capability.FILE_WRITE, Capability.FILE_DELETE})
_REMOTE_TOOL_NAMES = frozenset(name.value for name in BackendToolName)
"""The Backend Tool Service's tools by name, known to be remote even when a session has none of them."""
_CHANGES_FILES = frozenset({Capability.FILE_WRITE, Capability.FILE_DELETE})
#: Up to this much written text is hashed on the event loop (well under a millisecond); more in a thread.
_HASH_ON_LOOP_CHARS = 256 * 1024
#: A file up to this size is read for its revert record on the event loop (tens of microseconds):
#: cheaper than a thread hop there and back, which costs 0.5 ms or more in a busy runtime.
_READ_ON_LOOP_BYTES = 16 * 1024
#: Tools that show or read the files below the path they name: its ``path`` defaults to the project
#: folder, and each file they touch passes the policy's File.Read paths (``read_scope``).
_SEARCH_TOOLS = frozenset({ToolName.LIST_DIRECTORY.value, ToolName.GLOB.value, ToolName.GREP.value})
#: Decoding chain after UTF-8 for EditFile's proposed diff: the tool runtime's on this OS.
_LEGACY_ENCODINGS = (
    ("mac_roman", "latin-1")
    if sys.platform == "darwin"
    else ("cp1252", "latin-1")
    if sys.platform == "win32"
    else (locale.getpreferredencoding(False), "latin-1")
)


@dataclass(frozen=True, slots=True)
class PreparedCall:
    """A tool call ready for the policy: resolved, rewritten, or already failed."""

    call: ToolCall
    """The call to run: its path arguments rewritten to the resolved absolute paths."""
    capability: Capability | None
    facts: ToolCallFacts
    target: str | None
    """The normalised path / command / URL host the user sees and a session grant keys on."""
    failure: ToolResult | None = None
    """Set when the call fails before the policy: unknown tool (TOOL_NOT_FOUND), unusable path."""


RedirectVetter = Callable[[PreparedCall], Awaitable[ToolResult | None]]
"""The loop's check of one redirect hop, prepared like a call of its own: None to follow it, or the
result the call ends with (denied by the policy or by the user)."""


class ToolDispatch:
    """Routes the model's tool calls to a ``ToolRouter`` for one session.

    ``workspace_roots`` are the session's project folders (absolute; the first one resolves relative
    paths and is a command's default directory). ``uploader`` receives artifacts (None: they are
    dropped); ``on_upload_failed(artifact_name, reason)`` hears of each upload that failed. With
    ``artifact_queue`` the step does not wait for uploads: artifacts are put in the queue, which sends
    them in the background (``uploader`` is then not used for them). The dispatch owns the router:
    ``aclose`` closes it.
    """

    def __init__(
        self,
        router: ToolRouter,
        *,
        workspace_roots: Sequence[str],
        uploader: ArtifactUploader | None,
        on_upload_failed: Callable[[str, str], None] | None = None,
        artifact_queue: ArtifactQueue | None = None,
        timeouts: ToolTimeouts = DEFAULT_TIMEOUTS,
        max_upload_bytes: int = MAX_UPLOAD_BYTES,
        patches: PatchTracker | None = None,
        before_images: BeforeImages | None = None,
    ) -> None:
        self._router = router
        self._raw_roots = tuple(workspace_roots)
        self._roots = tuple(resolve_root(root) for root in workspace_roots)
        self._uploader = uploader
        self._on_upload_failed = on_upload_failed
        self._artifact_queue = artifact_queue
        self._timeouts = timeouts
        self._max_upload = max_upload_bytes
        self._patches = patches if patches is not None else PatchTracker(roots=self._roots)
        self.before_images = before_images
        """Each task's before-images, kept on disk for ``RevertChanges`` (None: revert is not offered)."""
        # A router's tools are fixed for its life (seed 003 §3 registry): looked up once, not per call.
        self._builtin = tuple(
            d.tool_name for d in router.get_available_tools() if _capability(d.tool_name) is not None
        )
        self._known = self._builtin
        self._mcp: McpServers | None = None
        self._mcp_tools: frozenset[str] = frozenset()
        self._remote: ToolRouter | None = None
        self._remote_tools: tuple[str, ...] = ()
        self._remote_allowed: Callable[[str], bool] = lambda _name: False
        self._upload_tool: ToolRouter | None = None

    # ------------------------------------------------------------------ MCP tools (seed 003 §9)

    def attach_mcp(self, servers: McpServers) -> None:
        """Route the MCP tools ``servers`` registered (``server/tool`` → ``Mcp.Invoke``) like built-ins."""
        self._mcp = servers
        self.refresh_tools()

    def refresh_tools(self) -> None:
        """Take the MCP tools as they are now: called between steps, after the MCP client refreshed."""
        if self._mcp is None:
            return
        names = [
            d.tool_name for d in self._mcp.get_available_tools() if split_tool_name(d.tool_name) is not None
        ]
        self._mcp_tools = frozenset(names)
        self._update_known()

    # ------------------------------------------------------------------ the host's own tools

    def attach_remote(self, router: ToolRouter, *, allowed: Callable[[str], bool]) -> None:
        """Route the Backend Tool Service's tools ``router`` offers (seed 000 §7.6) as ``BackendTool.
        Invoke``; ``allowed(name)`` is the bundle's allowlist as it is now (read at each offer, so a
        refreshed bundle that drops a tool stops offering it)."""
        self._remote = router
        self._remote_tools = tuple(d.tool_name for d in router.get_available_tools())
        self._remote_allowed = allowed
        self._update_known()

    @property
    def remote_attached(self) -> bool:
        return self._remote is not None

    def attach_upload_tool(self, router: ToolRouter) -> None:
        """Route ``UploadArtifact`` (``Workspace.Upload``, handled by the host, seed 000 §7.2) to
        ``router``: offered when uploads and reading files are both granted."""
        self._upload_tool = router
        self._update_known()

    def _update_known(self) -> None:
        upload = (ToolName.UPLOAD_ARTIFACT.value,) if self._upload_tool is not None else ()
        self._known = (*self._builtin, *upload, *self._remote_tools, *sorted(self._mcp_tools))

    def capability_of(self, tool_name: str) -> Capability | None:
        """The capability a call of ``tool_name`` is checked under (§7.2); None for an unknown tool."""
        if tool_name in self._mcp_tools:
            return Capability.MCP_INVOKE
        if tool_name in self._remote_tools:
            return Capability.BACKEND_TOOL_INVOKE
        if tool_name == ToolName.UPLOAD_ARTIFACT.value and self._upload_tool is not None:
            return Capability.WORKSPACE_UPLOAD
        return _capability(tool_name) if tool_name in self._builtin else None

    def _mcp_unknown(self, tool_name: str) -> str | None:
        """Why an MCP server's tool is not there, when its server is configured but has none now."""
        parts = split_tool_name(tool_name)
        if self._mcp is None or parts is None:
            return None
        state = next((state for state in self._mcp.states() if state.name == parts[0]), None)
        if state is None:
            return None
        if state.state is McpServerStatus.CONNECTED:
            return f"The MCP server {parts[0]} has no tool {parts[1]!r}."
        why = f" ({state.last_error})" if state.last_error else ""
        return (
            f"The MCP server {parts[0]} has no tool {parts[1]!r} available now: it is"
            f" {state.state.value}{why}."
        )

    def _router_for(self, capability: Capability | None) -> ToolRouter:
        if capability is Capability.MCP_INVOKE and self._mcp is not None:
            return self._mcp
        if capability is Capability.BACKEND_TOOL_INVOKE and self._remote is not None:
            return self._remote
        if capability is Capability.WORKSPACE_UPLOAD and self._upload_tool is not None:
            return self._upload_tool
        return self._router

    @property
    def workspace_roots(self) -> tuple[str, ...]:
        """The project folders, resolved as the policy compares them."""
        return self._roots

    # ------------------------------------------------------------------ what the model may call

    def available_tools(self, granted: Collection[Capability]) -> list[ToolDefinition]:
        """§5.2: the router's tools whose capability is granted, in the router's order; UploadArtifact
        when uploads and reads are granted; the remote tools the bundle allows, when ``BackendTool.
        Invoke`` is granted; then the MCP tools, when ``Mcp.Invoke`` is granted."""
        tools = [
            definition
            for definition in self._router.get_available_tools()
            if _capability(definition.tool_name) in granted
        ]
        if self._upload_tool is not None and {Capability.WORKSPACE_UPLOAD, Capability.FILE_READ} <= set(
            granted
        ):
            tools += self._upload_tool.get_available_tools()
        if self._remote is not None and Capability.BACKEND_TOOL_INVOKE in granted:
            tools += [d for d in self._remote.get_available_tools() if self._remote_allowed(d.tool_name)]
        if self._mcp is not None and Capability.MCP_INVOKE in granted:
            tools += [d for d in self._mcp.get_available_tools() if d.tool_name in self._mcp_tools]
        return tools

    # ------------------------------------------------------------------ prepare (§7.3 steps 1–2)

    def prepare(self, call: ToolCall, *, session_id: str, task_id: str, step_id: str) -> PreparedCall:
        """Resolve ``call`` for the policy. Never raises for anything the model wrote."""
        ids = (session_id, task_id, step_id)
        capability = self.capability_of(call.tool_name)
        if capability is None:
            absent = self._mcp_unknown(call.tool_name)
            if absent is not None:
                # A configured server's tool that is not registered: the loop asks the policy first, so
                # a tool the policy does not allow is refused as such (seed 003 §9.4).
                return self._failed_early(call, Capability.MCP_INVOKE, ErrorCode.TOOL_NOT_FOUND, absent, ids)
            if call.tool_name in _REMOTE_TOOL_NAMES:
                # The same for the Backend Tool Service's tools: one the bundle does not allow is denied
                # as such; one it allows is not available in this session (the service did not offer it).
                message = f"The remote tool {call.tool_name} is not available in this session."
                return self._failed_early(
                    call, Capability.BACKEND_TOOL_INVOKE, ErrorCode.TOOL_NOT_FOUND, message, ids
                )
            shown = call.tool_name if len(call.tool_name) <= 80 else call.tool_name[:77] + "..."
            message = f"Unknown tool: {shown!r}. Known tools: {', '.join(self._known) or 'none'}."
            return self._failed_early(call, None, ErrorCode.TOOL_NOT_FOUND, message, ids)
        arguments = dict(call.arguments)
        target: str | None = None
        resolved_path: str | None = None
        file_size: int | None = None
        try:
            if capability is Capability.WORKSPACE_UPLOAD:
                # UploadArtifact reads the file: resolved and measured as a ReadFile's would be.
                if "path" not in arguments:
                    raise PathRejected("arguments.path", "is required")
                resolved_path = self._resolve(arguments["path"], "arguments.path", final=True)
                arguments["path"] = target = resolved_path
                file_size = _size(resolved_path, follow=True)
            elif capability in _FILE_TOOLS:
                searches = call.tool_name in _SEARCH_TOOLS
                if arguments.get("path") is None and searches and self._roots:
                    arguments["path"] = self._roots[0]  # "search the project" needs no path
                if "path" not in arguments:
                    raise PathRejected("arguments.path", "is required")
                resolved_path = self._resolve(
                    arguments["path"], "arguments.path", final=capability is not Capability.FILE_DELETE
                )
                arguments["path"] = target = resolved_path
                if not searches:  # a directory's size says nothing about the files below it
                    file_size = _size(resolved_path, follow=capability is not Capability.FILE_DELETE)
            elif capability is Capability.SHELL_EXEC:
                cwd = arguments.get("cwd")
                if cwd is not None:
                    arguments["cwd"] = self._resolve(cwd, "arguments.cwd", final=True)
                elif self._roots:
                    arguments["cwd"] = self._roots[0]
                command = arguments.get("command")
                target = (command.strip() or None) if isinstance(command, str) else None
            elif capability is Capability.NETWORK_HTTP:
                target = _host(arguments.get("url"))
            elif capability in (Capability.MCP_INVOKE, Capability.BACKEND_TOOL_INVOKE):
                target = call.tool_name
        except PathRejected as exc:
            return self._failed_early(call, capability, ErrorCode.INVALID_REQUEST, str(exc), ids)
        prepared = call.model_copy(update={"arguments": arguments})
        facts = ToolCallFacts(
            tool_name=call.tool_name,
            arguments=MappingProxyType(arguments),
            resolved_path=resolved_path,
            file_size=file_size,
            workspace_roots=self._roots,
        )
        if capability is Capability.MCP_INVOKE and self._mcp is not None:
            facts = replace(facts, destructive=self._mcp.is_destructive(call.tool_name))
        return PreparedCall(call=prepared, capability=capability, facts=facts, target=target)

    def _resolve(self, raw: object, field: str, *, final: bool) -> str:
        return resolve_path(
            raw, field=field, roots=self._roots, raw_roots=self._raw_roots, resolve_final=final
        )

    def _failed_early(
        self,
        call: ToolCall,
        capability: Capability | None,
        code: ErrorCode,
        message: str,
        ids: tuple[str, str, str],
    ) -> PreparedCall:
        failure = _failed(call.tool_name, call.tool_call_id, ids, code, message)
        facts = ToolCallFacts(
            tool_name=call.tool_name,
            arguments=MappingProxyType(dict(call.arguments)),
            workspace_roots=self._roots,
        )
        return PreparedCall(call=call, capability=capability, facts=facts, target=None, failure=failure)

    # ------------------------------------------------------------------ execute (§7.3 step 6, §7.4, §7.5)

    async def execute(
        self,
        prepared: PreparedCall,
        *,
        session_id: str,
        workspace_id: str,
        task_id: str,
        step_id: str,
        scope: ToolScope | None,
        vet_redirect: RedirectVetter | None = None,
        read_scope: ReadScope | None = None,
    ) -> ToolResult:
        """Run a prepared call the policy allowed. Never raises for tool faults; cancellation propagates.

        ``vet_redirect`` judges each redirect hop of an HttpRequest before it is followed (see the
        module docstring); without it only the tool runtime's own guard applies to hops.
        ``read_scope`` (``PolicyReadScope``) judges each file a ListDirectory, Glob or Grep shows or
        reads below the path the policy checked."""
        if prepared.failure is not None:
            return prepared.failure
        call, capability = prepared.call, prepared.capability
        ids = (session_id, task_id, step_id)
        # On the loop, like ``prepare``: a realpath is a few lstat calls, cheaper than a thread hop.
        moved = self._moved_since_prepare(prepared)
        if moved is not None:
            return _failed(call.tool_name, call.tool_call_id, ids, ErrorCode.TOOL_EXECUTION_FAILED, moved)
        changes = prepared.facts.resolved_path if capability in _CHANGES_FILES else None
        if changes is not None:
            if _small_or_absent(changes):
                self._before_write(changes, task_id)
            else:
                await asyncio.to_thread(self._before_write, changes, task_id)
        request = ToolRequest(
            tool_name=call.tool_name,
            arguments=call.arguments,
            session_id=session_id,
            task_id=task_id,
            step_id=step_id,
            capability=capability,
            tool_call_id=call.tool_call_id,
            scope=self._scope(scope),
        )
        limit = self._timeouts.for_call(capability, call.arguments)
        deadline = asyncio.timeout(limit)
        refusals: list[ToolResult] = []
        check_redirect = None
        if vet_redirect is not None and capability is Capability.NETWORK_HTTP:
            check_redirect = self._redirect_check(prepared, vet_redirect, deadline, refusals, ids)
        # Passed only where it applies, so a router written before the search tools keeps working.
        extra: dict[str, Any] = {}
        if read_scope is not None and call.tool_name in _SEARCH_TOOLS:
            extra["read_scope"] = read_scope
        router = self._router_for(capability)
        try:
            async with deadline:
                result = None
                try:
                    result = await router.execute(request, check_redirect=check_redirect, **extra)
                finally:
                    if changes is not None and self.before_images is not None:
                        await self._after_write(self.before_images, changes, task_id, call, result)
        except TimeoutError:
            if not deadline.expired():
                return self._crashed(call, ids)
            message = f"{call.tool_name} did not finish within {limit:g} seconds and was stopped"
            return _failed(call.tool_name, call.tool_call_id, ids, ErrorCode.TOOL_EXECUTION_TIMEOUT, message)
        except Exception:
            return self._crashed(call, ids)
        if refusals and result.status is ToolStatus.FAILED:
            # The tool stopped because the host refused a hop (a failure carries no artifacts): the
            # host's refusal — denied, with the policy's or the user's code — is the outcome.
            return refusals[0]
        if result.tool_call_id is None and call.tool_call_id is not None:
            result = result.model_copy(update={"tool_call_id": call.tool_call_id})
        return await self._with_artifacts_uploaded(result, router, workspace_id=workspace_id, ids=ids)

    def _redirect_check(
        self,
        prepared: PreparedCall,
        vet: RedirectVetter,
        deadline: asyncio.Timeout,
        refusals: list[ToolResult],
        ids: tuple[str, str, str],
    ) -> Callable[[str, str], Awaitable[str | None]]:
        call = prepared.call
        session_id, task_id, step_id = ids

        async def check(url: str, method: str) -> str | None:
            arguments = {**call.arguments, "url": url, "method": method}
            if method != str(call.arguments.get("method", "GET")).upper():
                arguments.pop("body", None)  # a hop turned into a GET carries no body
            hop = self.prepare(
                call.model_copy(update={"arguments": arguments}),
                session_id=session_id,
                task_id=task_id,
                step_id=step_id,
            )
            async with _paused(deadline):
                refused = await vet(hop)
            if refused is None:
                return None
            code = refused.error.code if refused.error else ErrorCode.CAPABILITY_DENIED
            why = refused.error.message if refused.error else "refused"
            message = f"The server redirected to {url}, which was not followed: {why}"
            error = ToolError(code=code, message=message)
            refusals.append(refused.model_copy(update={"error": error, "tool_call_id": call.tool_call_id}))
            return message

        return check

    def _crashed(self, call: ToolCall, ids: tuple[str, str, str]) -> ToolResult:
        # The router broke its contract (it should answer every fault with a result): logged with
        # its traceback here, reported to the model without it.
        logger.exception("the tool router raised running %s", call.tool_name)
        message = f"{call.tool_name} failed unexpectedly; see the runtime log"
        return _failed(call.tool_name, call.tool_call_id, ids, ErrorCode.TOOL_EXECUTION_FAILED, message)

    def _moved_since_prepare(self, prepared: PreparedCall) -> str | None:
        """Why the call's paths no longer resolve as the policy saw them, or None."""
        arguments = prepared.call.arguments
        checks = []
        if prepared.capability in _FILE_TOOLS or prepared.capability is Capability.WORKSPACE_UPLOAD:
            checks.append(("path", prepared.capability is not Capability.FILE_DELETE))
        elif prepared.capability is Capability.SHELL_EXEC and isinstance(arguments.get("cwd"), str):
            checks.append(("cwd", True))
        for name, final in checks:
            checked = arguments[name]
            try:
                now = self._resolve(checked, f"arguments.{name}", final=final)
            except PathRejected as exc:
                return f"{exc}; nothing was done"
            if now != checked:
                return (
                    f"arguments.{name} changed between the policy check and the run ({checked} now leads"
                    f" to {now}, e.g. through a new symbolic link); nothing was done"
                )
        return None

    def _scope(self, scope: ToolScope | None) -> ToolScope | None:
        if not self._roots or (scope is not None and scope.workspace_root is not None):
            return scope
        if scope is None:
            return ToolScope(workspace_root=self._roots[0])
        return scope.model_copy(update={"workspace_root": self._roots[0]})

    async def _with_artifacts_uploaded(
        self, result: ToolResult, router: ToolRouter, *, workspace_id: str, ids: tuple[str, str, str]
    ) -> ToolResult:
        artifacts = list(result.artifacts)
        if not artifacts:
            return result
        outcome = UploadOutcome()
        context = UploadContext(workspace_id=workspace_id, session_id=ids[0], task_id=ids[1], step_id=ids[2])
        try:
            if self._artifact_queue is not None:
                outcome = await queue_artifacts(
                    self._artifact_queue,
                    artifacts,
                    context,
                    max_bytes=self._max_upload,
                    on_failed=self._on_upload_failed,
                )
            elif self._uploader is not None:
                outcome = await upload_artifacts(
                    self._uploader,
                    artifacts,
                    context,
                    max_bytes=self._max_upload,
                    timeout_s=self._timeouts.upload_s,
                    on_failed=self._on_upload_failed,
                )
        finally:
            # Released whatever happened, cancellation included: the spool must not fill the disk.
            try:
                router.release_artifacts(artifacts)
            except Exception:
                logger.exception("releasing the artifacts of %s failed", result.tool_name)
        update: dict[str, Any] = {
            "artifacts": [],
            "artifact_uris": [*result.artifact_uris, *outcome.uris],
        }
        if outcome.notes:
            update["output_text"] = "\n".join([*filter(None, [result.output_text]), *outcome.notes])
        return result.model_copy(update=update)

    # ------------------------------------------------------------------ patch preview, shutdown

    def proposed_diff(self, prepared: PreparedCall) -> str | None:
        """The diff a WriteFile, EditFile or DeleteFile would make to the disk now, for its approval
        request (seed 000 §10.2: the user decides on facts); None for other calls. Reads the file."""
        path = prepared.call.arguments.get("path")
        if prepared.capability not in _CHANGES_FILES or not isinstance(path, str):
            return None
        if prepared.capability is Capability.FILE_DELETE:
            return self._patches.proposed_diff(path, None)
        if prepared.call.tool_name == ToolName.EDIT_FILE.value:
            return self._proposed_edit(path, prepared.call.arguments)
        content = prepared.call.arguments.get("content")
        if not isinstance(content, str):
            return None
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:
            return None  # the write itself will fail with a clear error, asked or not
        return self._patches.proposed_diff(path, data)

    def _proposed_edit(self, path: str, arguments: Mapping[str, Any]) -> str | None:
        """EditFile's change, made by the tool's own rule (``contracts.edits``) on the file as it is;
        None when the edit would be refused anyway (the tool then says why, asked or not)."""
        old, new = arguments.get("oldString"), arguments.get("newString")
        replace_all = arguments.get("replaceAll", False)
        if (
            not isinstance(old, str)
            or not old
            or not isinstance(new, str)
            or not isinstance(replace_all, bool)
        ):
            return None
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_DIFF_BYTES + 1)
        except OSError:
            return None
        if len(data) > MAX_DIFF_BYTES:
            return None
        try:
            edited = apply_edit(data, old, new, replace_all=replace_all, encodings=_LEGACY_ENCODINGS)
        except (EditRefused, UnicodeError):
            return None
        return self._patches.proposed_diff(path, edited.data)

    @staticmethod
    async def _after_write(
        images: BeforeImages, path: str, task_id: str, call: ToolCall, result: ToolResult | None
    ) -> None:
        """Whatever the call's outcome: note what the file is now, which a revert compares with."""
        content = call.arguments.get("content")
        if (
            result is not None
            and result.status is ToolStatus.SUCCEEDED
            and call.tool_name == ToolName.WRITE_FILE.value
            and isinstance(content, str)
            and len(content) <= _HASH_ON_LOOP_CHARS
        ):
            # A WriteFile that succeeded left exactly its content (UTF-8, as the tool encodes it):
            # hashed here, no read back and no thread hop. The index is rewritten off this path.
            images.after_write(path, task_id, left=content.encode("utf-8"))
            return
        if _small_or_absent(path):
            images.after_write(path, task_id)
            return
        await asyncio.shield(asyncio.to_thread(images.after_write, path, task_id))

    def _before_write(self, path: str, task_id: str) -> None:
        self._patches.touch(path, task_id)
        if self.before_images is not None:
            self.before_images.before_write(path, task_id)

    def patch_preview(self, task_id: str | None = None) -> PatchPreview:
        """``GetPatchPreview``: the files this session changed (reads them; see ``patches``), each
        with whether ``RevertChanges`` can put it back now."""
        preview = self._patches.preview(task_id)
        images = self.before_images
        if images is None:
            return preview
        files = []
        for file in preview.files:
            revertible, note = images.availability(file.path)
            files.append(
                file.model_copy(
                    update={
                        "task_ids": images.task_ids(file.path),
                        "revertible": revertible,
                        "revert_note": note,
                    }
                )
            )
        if task_id is None:
            # Changes of this session from before a runtime restart: the tracker's originals are in
            # memory only, the before-images on disk.
            listed = {file.path for file in files}
            files += [f for f in images.preview(self._roots, None) if f.path not in listed]
            files.sort(key=lambda f: f.path)
        return PatchPreview(files=files)

    async def aclose(self) -> None:
        """Close the router (stopping what still runs, removing spooled files) and forget originals."""
        try:
            await self._router.aclose()
        finally:
            self._patches.clear()
            if self.before_images is not None:
                await asyncio.to_thread(self.before_images.flush)


@asynccontextmanager
async def _paused(deadline: asyncio.Timeout) -> AsyncIterator[None]:
    """The call's deadline stopped meanwhile: a hop's approval waits for the user, not the tool."""
    loop = asyncio.get_running_loop()
    when = deadline.when()
    remaining = None if when is None else when - loop.time()
    deadline.reschedule(None)
    try:
        yield
    finally:
        if remaining is not None:
            deadline.reschedule(loop.time() + remaining)


def _capability(tool_name: str) -> Capability | None:
    try:
        return TOOL_CAPABILITIES[ToolName(tool_name)]
    except ValueError:
        return None


def _size(path: str, *, follow: bool) -> int | None:
    try:
        return (os.stat if follow else os.lstat)(path).st_size
    except (OSError, ValueError):
        return None


def _host(url: Any) -> str | None:
    if not isinstance(url, str):
        return None
    try:
        return parse_url_host(url).name
    except UrlRejected:
        return None


def _failed(
    tool_name: str, tool_call_id: str | None, ids: tuple[str, str, str], code: ErrorCode, message: str
) -> ToolResult:
    session_id, task_id, step_id = ids
    return ToolResult(
        tool_name=tool_name,
        session_id=session_id,
        task_id=task_id,
        step_id=step_id,
        tool_call_id=tool_call_id,
        status=ToolStatus.FAILED,
        error=ToolError(code=code, message=message),
    )


def _small_or_absent(path: str) -> bool:
    """Whether ``path`` is cheap to read on the event loop: absent, or a regular file of at most
    :data:`_READ_ON_LOOP_BYTES` (a link or anything else is read in a thread, as before)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size <= _READ_ON_LOOP_BYTES
