"""One ``cowork exec`` run: backend and gateway, the runtime on stdio, a session, a task, its events.

Nothing waits that need not: the runtime is spawned as soon as the gateway is chosen, while the
backend is found or started (``desktop.launch.backend.open_backend``: the embedded one is named to the
runtime by its state file until it is up) and the gateway is checked; ``CreateSession`` goes out once
both are known. The embedded backend outlives the run and serves the next one.

The run ends with the event that ends the task (or the session pausing, or the runtime going away);
its exit status says which (:mod:`desktop.headless.outcome`). Ctrl-C cancels the task; a second
Ctrl-C stops the runtime. A paused or lost session keeps its checkpoint, so ``--resume`` continues it.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contracts.ipc.client import ChildProcess, JsonRpcClient
from contracts.ipc.client_core import ConnectionClosed, RpcCallError
from contracts.jsonrpc import RpcErrorCode
from desktop.headless.approvals import Approver
from desktop.headless.elicitations import DefaultsElicitor, Elicitor
from desktop.headless.outcome import ExitCode, exit_code_for_end
from desktop.headless.render import Renderer
from desktop.launch.backend import BackendAccess, SessionBackend, default_backend_dir, open_backend, reachable
from desktop.launch.errors import LaunchError
from desktop.launch.forked import ForkedChild, start_runtime
from desktop.launch.gateway import GatewaySettings, demo_gateway, resolve_gateway, saved_choice_is_demo
from desktop.launch.runtime import SUPPORTED_CAPABILITIES, runtime_command, runtime_environment

__all__ = ["ExecOptions", "run_exec"]

TASK_ENDS = frozenset({"task_completed", "task_failed", "task_cancelled"})
SHUTDOWN_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ExecOptions:
    prompt: str | None
    workspace: Path | None
    """``None``: a general session (``--general``)."""
    approval_mode: str = "on_risky_actions"
    max_steps: int | None = None
    permission_rules: Callable[[], Sequence[dict[str, Any]]] = tuple
    """The project's saved "Always allow" rules (``desktop.settings.rules``), sent with StartTask;
    read, on a thread, while the session is created."""
    resume: str | None = None
    demo: bool = False
    endpoint: str | None = None
    api: str | None = None
    model: str | None = None


class _Run:
    def __init__(
        self,
        renderer: Renderer,
        approver: Approver,
        elicitor: Elicitor | None = None,
        open_browser: Callable[[str], object] | None = None,
    ) -> None:
        self.renderer = renderer
        self.approver = approver
        self.elicitor: Elicitor = elicitor or DefaultsElicitor()
        self.open_browser = open_browser
        self._questions: dict[str, asyncio.Future[Any]] = {}
        self.client: JsonRpcClient | None = None
        self.session_id: str | None = None
        self.task_id: str | None = None
        self.ended: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.refusals = 0
        self.interrupts = 0
        self.keep_checkpoint = False
        """Paused or lost: end the runtime without ``Shutdown``, so ``--resume`` finds the checkpoint."""
        self.main = asyncio.current_task()
        self.runtime_log: deque[str] = deque(maxlen=40)
        self._pending: set[asyncio.Future[Any]] = set()

    # Notifications arrive on the event loop, in order; approvals are answered in tasks of their own.
    def on_notification(self, method: str, params: Any) -> None:
        if method != "SessionEvent" or not isinstance(params, dict):
            return
        self.renderer.event(params)
        kind = params.get("eventType")
        payload = params.get("payload") or {}
        if kind == "tool_completed" and payload.get("status") == "denied":
            self.refusals += 1
        elif kind == "approval_requested":
            self._track(asyncio.ensure_future(self._approve(payload)))
        elif kind == "elicitation_requested":
            question = asyncio.ensure_future(self._elicit(payload))
            self._questions[str(payload.get("elicitationId"))] = question
            self._track(question)
        elif kind == "elicitation_resolved":
            # Answered, timed out or withdrawn by the runtime: a question still on the terminal is moot.
            pending = self._questions.pop(str(payload.get("elicitationId")), None)
            if pending is not None and not pending.done():
                pending.cancel()
                self.renderer.note("  (the MCP server's question was withdrawn)")
        elif kind == "mcp_authorization_required":
            self._authorize(payload)
        elif self._ends(params) and not self.ended.done():
            self.ended.set_result(params)

    def _track(self, task: asyncio.Future[Any]) -> None:
        self._pending.add(task)
        task.add_done_callback(self._settled)

    def _settled(self, task: asyncio.Future[Any]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.renderer.note(f"error: {task.exception()}")

    def stop_asking(self) -> None:
        """The task is over: questions still on the terminal no longer matter."""
        for task in self._pending:
            task.cancel()

    def _ends(self, event: dict[str, Any]) -> bool:
        kind = event.get("eventType")
        return (kind in TASK_ENDS and event.get("taskId") == self.task_id) or kind == "session_paused"

    async def _approve(self, request: dict[str, Any]) -> None:
        answer = await self.approver.answer(request)
        if answer.decision == "denied" and answer.reason:
            self.renderer.note(f"✗ not approved: {answer.reason}")
        params: dict[str, Any] = {
            "sessionId": self.session_id,
            "approvalId": request.get("approvalId"),
            "decision": answer.decision,
            "scope": answer.scope,
        }
        if answer.reason:
            params["reason"] = answer.reason
        assert self.client is not None
        with contextlib.suppress(RpcCallError, ConnectionClosed, TimeoutError):
            await self.client.call("ApproveAction", params)

    async def _elicit(self, request: dict[str, Any]) -> None:
        """An MCP server's question (elicitation): answered on the terminal, or by its defaults."""
        elicitation_id = request.get("elicitationId")
        answer = await self.elicitor.answer(request)
        params: dict[str, Any] = {
            "sessionId": self.session_id,
            "elicitationId": elicitation_id,
            "action": answer.action,
        }
        if answer.action == "accept":
            params["content"] = answer.content or {}
        else:
            server = request.get("serverName")
            self.renderer.note(f"  {answer.action}d the question of the MCP server {server}")
        assert self.client is not None
        try:
            await self.client.call("AnswerElicitation", params)
        except RpcCallError as exc:
            # The runtime checks the answer against the schema too; a refused one is declined instead.
            self.renderer.note(f"! the answer was refused: {_said(exc)}; declining")
            with contextlib.suppress(RpcCallError, ConnectionClosed, TimeoutError):
                await self.client.call("AnswerElicitation", {**params, "action": "decline", "content": None})
        except (ConnectionClosed, TimeoutError):
            pass
        finally:
            self._questions.pop(str(elicitation_id), None)

    def _authorize(self, payload: dict[str, Any]) -> None:
        """An MCP server needs the user to sign in: its page's address, opened in a browser when a
        person is at the terminal."""
        url = str(payload.get("authorizationUrl", ""))
        self.renderer.note(f"! the MCP server {payload.get('serverName')} needs you to sign in: {url}")
        if self.open_browser is not None and url.startswith(("https://", "http://")):
            self.open_browser(url)

    def on_stderr(self, data: bytes) -> None:
        self.runtime_log.extend(data.decode(errors="replace").splitlines())

    def interrupt(self) -> None:
        """Ctrl-C: the first cancels the task, the next stops the runtime."""
        self.interrupts += 1
        client = self.client
        if client is None or self.session_id is None:
            if self.main is not None:
                self.main.cancel()  # still starting: stop starting
            return
        if self.interrupts == 1 and self.task_id is not None:
            self.renderer.note("cancelling the task (Ctrl-C again to stop at once)")
            params = {"sessionId": self.session_id, "taskId": self.task_id}
            self._track(asyncio.ensure_future(_quietly(client.call("CancelTask", params))))
        elif not self.ended.done():
            # Shutdown would wait for the running step (a long command, say): closing the runtime's
            # stdin stops it now, as a crash would — the checkpoint stays, so --resume can continue.
            self.renderer.note(f"stopping; continue with: cowork exec --resume {self.session_id}")
            self.keep_checkpoint = True
            self.ended.set_result({"eventType": "task_cancelled", "payload": {}})


async def _quietly(call: Awaitable[Any]) -> None:
    # The task may have ended, or the runtime gone, in the meantime: then there is nothing to cancel.
    with contextlib.suppress(RpcCallError, ConnectionClosed, TimeoutError):
        await call


async def run_exec(
    options: ExecOptions,
    environ: Mapping[str, str],
    renderer: Renderer,
    approver: Approver,
    *,
    elicitor: Elicitor | None = None,
    open_browser: Callable[[str], object] | None = None,
) -> int:
    """Run the task; the exit status (``ExitCode``). Configuration problems end as one clear line.
    ``elicitor`` answers MCP servers' questions (default: their defaults, as without a terminal);
    ``open_browser`` opens an MCP server's sign-in page (None: the address is only printed)."""
    try:
        return await _run(options, environ, _Run(renderer, approver, elicitor, open_browser))
    except LaunchError as exc:
        renderer.note(f"error: {exc}")
        return ExitCode.CONFIGURATION
    except asyncio.CancelledError:
        renderer.note("interrupted before the task started")
        return ExitCode.CANCELLED
    finally:
        renderer.finish()


async def _run(options: ExecOptions, environ: Mapping[str, str], run: _Run) -> int:
    renderer = run.renderer
    if options.workspace is not None and not options.workspace.is_dir():
        raise LaunchError(f"The workspace {options.workspace} is not a folder")
    async with contextlib.AsyncExitStack() as stack:
        # First the backend: the embedded one, if it has to be started, starts now.
        backend = await stack.enter_async_context(open_backend(environ))
        gateway = await _gateway(options, environ, stack)
        # Forked by the warm fork server where there is one (desktop.launch.forked), else spawned.
        client, child = await start_runtime(
            runtime_command(environ),
            ["--stdio"],
            env=runtime_environment(environ, backend, gateway),
            cwd=str(options.workspace) if options.workspace else None,
            environ=environ,
            data_dir=default_backend_dir().parent,
            on_notification=run.on_notification,
            on_stderr=run.on_stderr,
        )
        run.client = client
        stack.push_async_callback(_stop, run, child)
        _catch_interrupts(run, stack)
        # While the runtime starts: the backend found or started, the gateway checked.
        access = await _ready(backend, gateway)
        if gateway.demo:
            renderer.note("using the offline demo model — not a real LLM")
        try:
            status = await (_resume(run, options) if options.resume else _start(run, options, access))
            if status is not None:
                return status
            return await _until_end(run, child, renderer)
        except (ConnectionClosed, TimeoutError) as exc:
            return _lost(run, renderer, str(exc))


async def _gateway(
    options: ExecOptions, environ: Mapping[str, str], stack: contextlib.AsyncExitStack
) -> GatewaySettings:
    """The gateway chosen (the demo model started); whether it answers is checked while the runtime
    starts (:func:`_ready`)."""
    if options.demo or saved_choice_is_demo(environ, endpoint=options.endpoint):
        return await stack.enter_async_context(demo_gateway())
    return resolve_gateway(environ, endpoint=options.endpoint, api=options.api, model=options.model)


async def _ready(backend: SessionBackend, gateway: GatewaySettings) -> BackendAccess:
    """The backend once it is up, and the gateway once it accepts connections; the first problem
    either has is the run's ``LaunchError``."""
    checks = [asyncio.ensure_future(backend.access()), asyncio.ensure_future(_check_gateway(gateway))]
    try:
        access, _ = await asyncio.gather(*checks)
    finally:
        for check in checks:
            check.cancel()
    assert isinstance(access, BackendAccess)
    return access


async def _check_gateway(gateway: GatewaySettings) -> None:
    if gateway.demo:
        return  # started for this run, and answering: it printed its address
    try:
        async with asyncio.timeout(5):
            await reachable(gateway.endpoint)
    except (OSError, TimeoutError) as exc:
        raise LaunchError(f"The LLM gateway at {gateway.endpoint} cannot be reached") from exc


def _client_info() -> dict[str, str]:
    import importlib.metadata  # here, not at start-up: it costs 25 ms and runs while the runtime starts

    try:
        version = importlib.metadata.version("cowork")
    except importlib.metadata.PackageNotFoundError:
        version = "0.1.0"
    family = {"darwin": "macOS", "win32": "Windows"}.get(sys.platform, "Linux")
    return {"desktopAppVersion": version, "localAgentHostVersion": version, "osFamily": family}


async def _start(run: _Run, options: ExecOptions, backend: BackendAccess) -> int | None:
    assert run.client is not None
    assert options.prompt is not None
    # The saved rules are read (their models imported: ~60 ms of CPU) while the session is created,
    # on a thread: read earlier, they took a core from the backend and the runtime, which on a
    # two-core machine were both still starting, and delayed the first request by ~40 ms (measured).
    reading_rules = asyncio.ensure_future(asyncio.to_thread(_read_rules, options))
    params: dict[str, Any] = {
        "userId": backend.user_id,
        "tenantId": backend.tenant_id,
        "clientInfo": _client_info(),
        "supportedCapabilities": list(SUPPORTED_CAPABILITIES),
    }
    if options.workspace is not None:
        params["workspaceHint"] = {"localPaths": [str(options.workspace)]}
    try:
        session = await run.client.call("CreateSession", params, timeout=60)
    except RpcCallError as exc:
        reading_rules.cancel()  # the thread finishes on its own; nobody waits for its answer
        run.renderer.note(f"error: could not start a session: {_said(exc)}")
        return ExitCode.CONFIGURATION
    except BaseException:
        reading_rules.cancel()
        raise
    rules = await reading_rules
    run.session_id = session["sessionId"]
    run.renderer.note(f"session {run.session_id}")
    run.task_id = f"task_{uuid.uuid4().hex[:16]}"
    # The session ends with this task: its history is spooled for the next runtime, not awaited.
    task_options: dict[str, Any] = {"approvalMode": options.approval_mode, "lastTask": True}
    if options.max_steps is not None:
        task_options["maxSteps"] = options.max_steps
    if rules:
        task_options["permissionRules"] = rules
        run.renderer.note(f"{len(rules)} saved permission rule(s) of this project apply")
    params = {
        "sessionId": run.session_id,
        "taskId": run.task_id,
        "prompt": options.prompt,
        "taskOptions": task_options,
    }
    try:
        try:
            await run.client.call("StartTask", params)
        except RpcCallError as exc:
            if not _unknown_option(exc, "lastTask"):
                raise
            # A runtime older than the option (one the backend still accepts): the same task, with
            # its end waiting for the history as it did there.
            del task_options["lastTask"]
            await run.client.call("StartTask", params)
    except RpcCallError as exc:
        run.renderer.note(f"error: the task was not started: {_said(exc)}")
        return ExitCode.USAGE if exc.error_code == "INVALID_REQUEST" else ExitCode.FAILED
    return None


def _unknown_option(exc: RpcCallError, name: str) -> bool:
    """The runtime refused the call's params because it does not know the task option ``name``."""
    return exc.rpc_code == RpcErrorCode.INVALID_PARAMS and f"taskOptions.{name}" in _said(exc)


async def _resume(run: _Run, options: ExecOptions) -> int | None:
    assert run.client is not None
    assert options.resume is not None
    run.session_id = options.resume
    try:
        result = await run.client.call("ResumeSession", {"sessionId": options.resume}, timeout=60)
    except RpcCallError as exc:
        run.renderer.note(f"error: session {options.resume} cannot be resumed: {_said(exc)}")
        return ExitCode.CONFIGURATION
    task = result.get("task") or {}
    run.task_id = task.get("taskId")
    status = task.get("status")
    run.renderer.note(
        f"resumed session {options.resume}" + (f" at step {task.get('stepCount')}" if task else "")
    )
    if run.task_id is None or status in ("TASK_COMPLETED", "TASK_FAILED", "TASK_CANCELLED"):
        run.renderer.note("the session has no task left to run")
        return ExitCode.COMPLETED if status in (None, "TASK_COMPLETED") else ExitCode.FAILED
    return None


async def _until_end(run: _Run, child: ChildProcess | ForkedChild, renderer: Renderer) -> int:
    exited: asyncio.Future[Any] = asyncio.ensure_future(child.wait())
    try:
        await asyncio.wait([run.ended, exited], return_when=asyncio.FIRST_COMPLETED)
    finally:
        exited.cancel()
    run.stop_asking()
    if not run.ended.done():
        return _lost(run, renderer, "the agent runtime exited")
    end = run.ended.result()
    kind = end.get("eventType")
    payload = end.get("payload") or {}
    if kind == "session_paused":
        renderer.note(f"continue with: cowork exec --resume {run.session_id}")
        run.keep_checkpoint = True
        return ExitCode.PAUSED
    code = exit_code_for_end(str(kind), payload.get("reason"), run.refusals)
    if code is ExitCode.DENIED and kind == "task_completed":
        renderer.note(f"! the task completed, but {run.refusals} action(s) were refused")
    return code


def _read_rules(options: ExecOptions) -> list[dict[str, Any]]:
    return list(options.permission_rules())


def _said(exc: RpcCallError) -> str:
    return exc.data.message if exc.data is not None else exc.rpc_message


def _lost(run: _Run, renderer: Renderer, why: str) -> int:
    for line in list(run.runtime_log)[-5:]:
        renderer.note(f"  runtime: {line[:300]}")
    renderer.note(f"error: {why}")
    if run.session_id:
        renderer.note(f"continue with: cowork exec --resume {run.session_id}")
    run.keep_checkpoint = True
    return ExitCode.RUNTIME_LOST


def _catch_interrupts(run: _Run, stack: contextlib.AsyncExitStack) -> None:
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, run.interrupt)
        stack.callback(loop.remove_signal_handler, signal.SIGINT)
    except (NotImplementedError, RuntimeError):  # Windows' proactor loop has no signal handlers
        previous = signal.signal(signal.SIGINT, lambda *_: loop.call_soon_threadsafe(run.interrupt))
        stack.callback(signal.signal, signal.SIGINT, previous)


async def _stop(run: _Run, child: ChildProcess | ForkedChild) -> None:
    """End the runtime: ``Shutdown`` after a finished task (§3.4: history uploaded, checkpoint
    removed); otherwise just close its stdin, which it takes as a crash — the checkpoint stays."""
    client = run.client
    assert client is not None
    if not run.keep_checkpoint and not client.closed and run.session_id is not None:
        with contextlib.suppress(RpcCallError, ConnectionClosed, TimeoutError):
            await client.call("Shutdown", {}, timeout=SHUTDOWN_TIMEOUT_S)
    await client.close()
    try:
        async with asyncio.timeout(SHUTDOWN_TIMEOUT_S):
            await child.wait()
    except TimeoutError:
        child.kill()
        await child.wait()
