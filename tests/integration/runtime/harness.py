"""Driving the real ``cowork-agent-runtime`` program over its real socket, as the desktop does.

* :func:`start_backend` (from :mod:`tests.support.backend`) runs ``cowork-backend serve --store local``
  in a subprocess and reads the ``backend.json`` it writes (url, token, tenant, user, policy keys).
* :class:`Runtime` opens the desktop's end of the wire (:class:`RuntimeListener`), spawns
  ``python -m agent_runtime --connect NAME`` with the environment the desktop gives it, accepts the
  authenticated connection and collects every ``SessionEvent`` notification. Waits are bounded and
  wake on each notification (never a fixed sleep); a runtime that dies while a test waits for it
  fails the wait at once, with the runtime's output.
* Small readers of what reached the gateway (tool results, tool calls) and of what the backend holds
  (approvals, the session history).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import ValidationError

from contracts.events import SessionEvent
from contracts.ipc.client import JsonRpcClient
from contracts.ipc.client_core import RpcCallError
from contracts.ipc.listener import RuntimeListener
from contracts.methods import SESSION_EVENT
from tests.support.backend import Backend, start_backend
from tests.support.peers import REPO_ROOT

__all__ = [
    "ALL_CAPABILITIES",
    "SHORT_BUNDLE_TTL_S",
    "Backend",
    "Launch",
    "Runtime",
    "RuntimeGone",
    "eventually",
    "held_command",
    "open_session",
    "rpc_error",
    "runtime_environment",
    "start_backend",
    "start_held_command",
    "tool_call",
    "tool_results",
    "tool_uses",
]

T = TypeVar("T")

SHORT_BUNDLE_TTL_S = 3
"""The expiry tests' policy bundles last this long (backend.toml ``[sessions] bundleTtlSeconds``)."""

ALL_CAPABILITIES = [
    "File.Read",
    "File.Write",
    "File.Delete",
    "Shell.Exec",
    "Network.Http",
    "Workspace.Upload",
    "LLM.Call",
]

STEP_EVENTS = frozenset(
    {
        "step_started",
        "step_completed",
        "text_chunk",
        "llm_request_started",
        "llm_request_completed",
        "tool_requested",
        "tool_completed",
        "approval_requested",
        "approval_resolved",
        "approval_timeout",
    }
)
"""Events about one step: they carry the whole ID chain, ``taskId`` and ``stepId`` included (§12)."""

TASK_END_EVENTS = frozenset({"task_completed", "task_failed", "task_cancelled"})
TASK_EVENTS = TASK_END_EVENTS | {"task_started"}


# ------------------------------------------------------------------------------------------- runtime


def runtime_environment(
    backend: Backend,
    gateway_url: str,
    data_dir: Path,
    *,
    approval_timeout_s: float = 60,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment the desktop gives a runtime (i6 context), on top of this process's own minus
    any Cowork or gateway settings the developer's shell may hold."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COWORK_", "LLM_GATEWAY_"))}
    env.update(
        {
            "COWORK_BACKEND_URL": backend.url,
            "COWORK_BACKEND_TOKEN": backend.token,
            "COWORK_POLICY_KEYS": json.dumps(backend.policy_keys),
            "LLM_GATEWAY_ENDPOINT": gateway_url,
            "LLM_GATEWAY_API": "anthropic",
            "LLM_GATEWAY_MODEL": "demo-model",
            "COWORK_RUNTIME_DATA_DIR": str(data_dir),
            "COWORK_APPROVAL_TIMEOUT_S": f"{approval_timeout_s:g}",
            # Real backoff, made short: a test of exhausted retries must not wait seconds (i6 E brief).
            "COWORK_LLM_RETRY_BASE_S": "0.01",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(extra or {})
    return env


class Launch(Protocol):
    """The ``launch`` fixture: a connected runtime for a gateway, killed when the test ends."""

    def __call__(
        self,
        gateway_url: str,
        *,
        backend: Backend = ...,
        data_dir: Path = ...,
        approval_timeout_s: float = 60,
        extra: dict[str, str] | None = None,
        label: str | None = None,
    ) -> Awaitable[Runtime]: ...


class RuntimeGone(AssertionError):
    """The runtime exited or dropped the connection while the test was waiting for it."""


def rpc_error(exc: BaseException) -> RpcCallError:
    assert isinstance(exc, RpcCallError), f"expected a JSON-RPC error, got {exc!r}"
    return exc


@dataclass
class Runtime:
    """One runtime process and its JSON-RPC connection, seen from the desktop's side."""

    process: asyncio.subprocess.Process
    client: JsonRpcClient
    label: str
    output: list[str] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    invalid_events: list[str] = field(default_factory=list)
    other_notifications: list[tuple[str, Any]] = field(default_factory=list)
    session_id: str | None = None
    workspace_id: str | None = None
    rpc_secret: str = ""
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _reader: asyncio.Task[None] | None = None
    _exit_watch: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ launching

    @classmethod
    async def launch(
        cls,
        env: Mapping[str, str],
        *,
        label: str = "runtime",
        connect_timeout: float = 30.0,
        program: Sequence[str] = (sys.executable, "-m", "agent_runtime"),
    ) -> Runtime:
        """Spawn ``python -m agent_runtime --connect NAME`` (or ``program``, e.g. a frozen runtime) and
        accept its authenticated connection."""
        listener = await RuntimeListener.open()
        async with listener:
            process = await asyncio.create_subprocess_exec(
                *program,
                "--connect",
                listener.name,
                cwd=REPO_ROOT,
                env={**env, **listener.child_environment()},
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
            output: list[str] = []
            reader = asyncio.create_task(_read_lines(process, output))
            accepting = asyncio.ensure_future(listener.accept(timeout=connect_timeout))
            exited = asyncio.ensure_future(process.wait())
            await asyncio.wait({accepting, exited}, return_when=asyncio.FIRST_COMPLETED)
            if not accepting.done():
                accepting.cancel()
                with contextlib.suppress(BaseException):
                    await accepting
                await reader
                raise RuntimeGone(
                    f"{label} exited ({process.returncode}) before connecting:\n" + "".join(output)[-4000:]
                )
            exited.cancel()
            try:
                client = accepting.result()
            except BaseException:
                process.kill()
                await process.wait()
                await reader
                raise
        runtime = cls(
            process=process,
            client=client,
            label=label,
            output=output,
            rpc_secret=listener.secret,
            _reader=reader,
        )
        client.on_notification = runtime._on_notification
        runtime._exit_watch = asyncio.create_task(runtime._watch_exit())
        return runtime

    async def _watch_exit(self) -> None:
        await self.process.wait()
        self._wake()

    def _on_notification(self, method: str, params: Any) -> None:
        if method != SESSION_EVENT:
            self.other_notifications.append((method, params))
            self._wake()
            return
        self.events.append(params)
        try:
            SessionEvent.model_validate_json(json.dumps(params))
        except (ValidationError, TypeError, ValueError) as exc:
            self.invalid_events.append(f"{params.get('eventType')!r}: {exc}")
        self._wake()

    def _wake(self) -> None:
        # Swap the event: every waiter holds the old one and wakes; later waiters get the new one.
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    @property
    def alive(self) -> bool:
        return self.process.returncode is None and not self.client.closed

    def output_text(self) -> str:
        return "".join(self.output)

    # ------------------------------------------------------------------ waiting

    async def wait_until(self, check: Callable[[], T | None], *, timeout: float, what: str) -> T:
        """``check()``'s first truthy value, re-checked on every notification; bounded."""
        deadline = time.monotonic() + timeout
        while True:
            found = check()
            if found:
                return found
            if not self.alive:
                raise RuntimeGone(
                    f"{self.label} is gone (exit {self.process.returncode}, "
                    f"{self.client.close_reason or 'connection open'}) while waiting for {what}; "
                    f"events: {self.types()}\n{self.output_text()[-4000:]}"
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(
                    f"{self.label}: no {what} within {timeout:g} s; events: {self.types()}\n"
                    f"{self.output_text()[-4000:]}"
                )
            changed = self._changed
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(remaining, 0.5)):
                    await changed.wait()

    def mark(self) -> int:
        """The index the next event will have: wait for events after a point with ``after=``."""
        return len(self.events)

    def find(
        self, event_type: str, *, after: int = 0, where: Callable[[dict[str, Any]], bool] | None = None
    ) -> list[dict[str, Any]]:
        return [
            event
            for event in self.events[after:]
            if event.get("eventType") == event_type and (where is None or where(event))
        ]

    async def event(
        self,
        event_type: str,
        *,
        timeout: float = 15.0,
        after: int = 0,
        where: Callable[[dict[str, Any]], bool] | None = None,
        count: int = 1,
    ) -> dict[str, Any]:
        """The ``count``-th event of ``event_type`` (from index ``after``), waiting for it if needed."""

        def check() -> dict[str, Any] | None:
            found = self.find(event_type, after=after, where=where)
            return found[count - 1] if len(found) >= count else None

        return await self.wait_until(check, timeout=timeout, what=f"{event_type} event #{count}")

    async def task_end(self, task_id: str, *, timeout: float = 20.0) -> dict[str, Any]:
        """The event that ended ``task_id``: task_completed, task_failed or task_cancelled."""

        def check() -> dict[str, Any] | None:
            for event in self.events:
                if (
                    event.get("eventType") in TASK_EVENTS - {"task_started"}
                    and event.get("taskId") == task_id
                ):
                    return event
            return None

        return await self.wait_until(check, timeout=timeout, what=f"the end of {task_id}")

    def types(self, *, after: int = 0) -> list[str]:
        return [str(event.get("eventType")) for event in self.events[after:]]

    def id_chain_problems(self) -> list[str]:
        """Events without the ID chain seed 000 §12 asks for."""
        problems = list(self.invalid_events)
        for index, event in enumerate(self.events):
            kind = event.get("eventType")
            if not event.get("workspaceId") or not event.get("sessionId"):
                problems.append(f"#{index} {kind}: no workspaceId/sessionId")
            if self.session_id is not None and event.get("sessionId") != self.session_id:
                problems.append(f"#{index} {kind}: sessionId {event.get('sessionId')!r}")
            if (kind in STEP_EVENTS or kind in TASK_EVENTS) and not event.get("taskId"):
                problems.append(f"#{index} {kind}: no taskId")
            if kind in STEP_EVENTS and not event.get("stepId"):
                problems.append(f"#{index} {kind}: no stepId")
        return problems

    # ------------------------------------------------------------------ calling

    async def call(self, method: str, params: Any = None, *, timeout: float = 15.0) -> Any:
        return await self.client.call(method, params, timeout=timeout)

    async def create_session(
        self, backend: Backend, workspace: Path | None, **overrides: Any
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "userId": backend.user_id,
            "tenantId": backend.tenant_id,
            "clientInfo": {
                "desktopAppVersion": "0.1.0",
                "localAgentHostVersion": "0.1.0",
                "osFamily": "Linux",
            },
            "supportedCapabilities": ALL_CAPABILITIES,
        }
        if workspace is not None:
            params["workspaceHint"] = {"localPaths": [str(workspace)]}
        params.update(overrides)
        result: dict[str, Any] = await self.call("CreateSession", params, timeout=30)
        self.session_id = result["sessionId"]
        self.workspace_id = result["workspaceId"]
        return result

    async def start_task(self, prompt: str, *, task_id: str = "task_1", **options: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"sessionId": self.session_id, "taskId": task_id, "prompt": prompt}
        if options:
            params["taskOptions"] = options
        result: dict[str, Any] = await self.call("StartTask", params)
        return result

    async def run_task(
        self, prompt: str, *, task_id: str = "task_1", timeout: float = 20.0, **options: Any
    ) -> dict[str, Any]:
        """Start ``task_id`` and wait (bounded) for the event that ends it."""
        await self.start_task(prompt, task_id=task_id, **options)
        return await self.task_end(task_id, timeout=timeout)

    async def state(self) -> dict[str, Any]:
        result: dict[str, Any] = await self.call("GetSessionState", {"sessionId": self.session_id})
        return result

    async def cancel(self, task_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self.call(
            "CancelTask", {"sessionId": self.session_id, "taskId": task_id}
        )
        return result

    async def approve(
        self, approval_id: str, decision: str = "approved", *, scope: str = "once", reason: str | None = None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "sessionId": self.session_id,
            "approvalId": approval_id,
            "decision": decision,
            "scope": scope,
        }
        if reason is not None:
            params["reason"] = reason
        result: dict[str, Any] = await self.call("ApproveAction", params)
        return result

    async def resume(self, session_id: str, *, timeout: float = 30.0) -> dict[str, Any]:
        result: dict[str, Any] = await self.call("ResumeSession", {"sessionId": session_id}, timeout=timeout)
        self.session_id = result["sessionId"]
        return result

    async def shutdown(self, *, timeout: float = 30.0) -> dict[str, Any]:
        result: dict[str, Any] = await self.call("Shutdown", {}, timeout=timeout)
        return result

    # ------------------------------------------------------------------ ending

    async def wait_exit(self, timeout: float = 15.0) -> int:
        async with asyncio.timeout(timeout):
            return await self.process.wait()

    async def kill(self) -> None:
        """SIGKILL, as a crash: nothing of the runtime's runs after it."""
        if self.process.returncode is None:
            self.process.kill()
        await self.process.wait()
        await self.client.close()
        for task in (self._reader, self._exit_watch):
            if task is not None:
                # A command the runtime started may outlive it holding its stdout: do not wait forever.
                with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(task, timeout=5)

    async def aclose(self) -> None:
        await self.kill()


async def open_session(
    launch: Launch, gateway_url: str, backend: Backend, workspace: Path | None, **launch_options: Any
) -> Runtime:
    """A runtime launched for ``gateway_url`` with a session created on ``workspace`` in ``backend``."""
    rt = await launch(gateway_url, backend=backend, **launch_options)
    await rt.create_session(backend, workspace)
    return rt


async def _read_lines(process: asyncio.subprocess.Process, into: list[str]) -> None:
    assert process.stdout is not None
    while True:
        line = await process.stdout.readline()
        if not line:
            return
        into.append(line.decode("utf-8", "replace"))


async def eventually(check: Callable[[], Awaitable[T | None]], *, timeout: float, what: str) -> T:
    """Poll an outside party (the backend) until ``check`` returns something truthy; bounded.

    Only for state the runtime hands to another service in the background (seed 000 §10.4:
    approval persistence is fire-and-forget) — nothing notifies the test when it lands.
    """
    deadline = time.monotonic() + timeout
    delay = 0.02
    while True:
        found = await check()
        if found:
            return found
        if time.monotonic() >= deadline:
            raise TimeoutError(f"no {what} within {timeout:g} s")
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.25)


def held_command(started: Path, go: Path, then: str) -> str:
    """A shell command that creates ``started``, waits (bounded, about 12 s) until ``go`` exists, then
    runs ``then``: the test decides when the tool may finish."""
    return (
        f"touch {started}; n=0; while [ ! -e {go} ]; do n=$((n+1)); [ $n -gt 600 ] && exit 9; "
        f"sleep 0.02; done; {then}"
    )


async def start_held_command(rt: Runtime, prompt: str, started: Path) -> None:
    """Start task_1, whose step runs one command that needs approval (a :func:`held_command`), approve
    it and wait (bounded) until the command has created ``started``: the tool is then running."""
    await rt.start_task(prompt)
    asked = await rt.event("approval_requested")
    await rt.approve(asked["payload"]["approvalId"])

    async def running() -> bool:
        return started.exists()

    await eventually(running, timeout=15, what="the command to start")


# ------------------------------------------------------------------------------------------- gateway


def tool_call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
    """One scripted tool call (scripted gateway format)."""
    return {"name": name, "id": call_id, "arguments": arguments}


def _last_user_blocks(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, list) else [{"type": "text", "text": content}]
    return []


def tool_results(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks that answer the last assistant turn, in order (Anthropic dialect)."""
    return [block for block in _last_user_blocks(body) if block.get("type") == "tool_result"]


def tool_uses(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every tool_use block the request replays, in order."""
    uses: list[dict[str, Any]] = []
    for message in body.get("messages", []):
        if message.get("role") == "assistant" and isinstance(message.get("content"), list):
            uses.extend(block for block in message["content"] if block.get("type") == "tool_use")
    return uses


def all_tool_results(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    for message in body.get("messages", []):
        if message.get("role") == "user" and isinstance(message.get("content"), list):
            results.extend(block for block in message["content"] if block.get("type") == "tool_result")
    return results


def result_text(block: Mapping[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)
