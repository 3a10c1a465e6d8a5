"""Artifacts and histories reach the Workspace Service off the steps' path (the upload queue): a step
never waits for an upload, a task's end waits for its history while the service answers, the exit
never does, and what could not be sent is sent by the next runtime — even after a kill -9.

A proxy in front of the real local backend slows down, holds or refuses the artifact uploads; every
other call passes through. The test reads the backend directly."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from agent_runtime.scripted_gateway import ScriptedGateway
from tests.integration.runtime.harness import Backend, Launch, Runtime, eventually, tool_call

Scope = dict[str, Any]


class UploadProxy:
    """Forwards everything to the backend; artifact uploads can be slowed (``delay_s`` by artifact type),
    held until released (``hold``) or refused with a 503 (``refuse``)."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.delay_s: dict[str, float] = {}
        self.refuse = False
        self.hold = asyncio.Event()
        self.hold.set()
        self.uploads: list[str] = []

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["method"] == "POST" and scope["path"].endswith("/artifacts"):
            kind = json.loads(body)["artifactType"]
            self.uploads.append(kind)
            if self.refuse:
                await _answer(send, 503, b'{"code":"INTERNAL_ERROR","message":"down for a moment"}')
                return
            await self.hold.wait()
            await asyncio.sleep(self.delay_s.get(kind, 0.0))
        query = scope["query_string"].decode()
        headers = [(k.decode(), v.decode()) for k, v in scope["headers"] if k.lower() not in (b"host",)]
        async with httpx.AsyncClient(base_url=self.upstream, timeout=30) as http:
            reply = await http.request(
                scope["method"], scope["path"] + (f"?{query}" if query else ""), headers=headers, content=body
            )
        await _answer(
            send, reply.status_code, reply.content, reply.headers.get("content-type", "application/json")
        )


async def _answer(send: Any, status: int, body: bytes, content_type: str = "application/json") -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type.encode()),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


@pytest.fixture
async def proxy(backend: Backend) -> AsyncIterator[tuple[UploadProxy, str]]:
    app = UploadProxy(backend.url)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, access_log=False, lifespan="off")
    )
    serving = asyncio.create_task(server.serve())
    async with asyncio.timeout(10):
        while not server.started:  # noqa: ASYNC110 - uvicorn has no event for it
            await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield app, f"http://127.0.0.1:{port}"
    finally:
        app.hold.set()
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(serving, 10)


def writes(workspace: Path, count: int) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = [
        {
            "toolCalls": [
                tool_call("WriteFile", f"call_{n}", path=str(workspace / f"f{n}.txt"), content=f"{n}\n")
            ]
        }
        for n in range(count)
    ]
    return [*turns, {"text": "All written."}]


async def artifacts(backend: Backend, rt: Runtime, kind: str) -> list[dict[str, Any]]:
    listing = await backend.get_json(
        f"/workspaces/{rt.workspace_id}/artifacts", sessionId=rt.session_id, artifactType=kind
    )
    found: list[dict[str, Any]] = listing["artifacts"]
    return found


def moment(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")).timestamp()


async def test_steps_do_not_wait_for_uploads_and_the_task_ends_once_its_history_is_stored(
    launch: Launch, backend: Backend, workspace: Path, proxy: tuple[UploadProxy, str]
) -> None:
    uploads, url = proxy
    uploads.delay_s = {"file_diff": 0.8, "session_history": 0.5}
    async with ScriptedGateway(writes(workspace, 3)) as gateway:
        rt = await launch(gateway.url, extra={"COWORK_BACKEND_URL": url})
        await rt.create_session(backend, workspace)
        end = await rt.run_task("Write three files", maxSteps=10, timeout=60)
        # The moment the task's end is announced, its history and every artifact are stored.
        history = await backend.session_history(rt.workspace_id or "", rt.session_id or "")
        diffs = await artifacts(backend, rt, "file_diff")
    assert end["eventType"] == "task_completed"
    assert history is not None
    assert history.messages[-1].content == "All written."
    steps = [e["stepId"] for e in rt.events if e["eventType"] == "tool_requested"]
    assert sorted(diff["stepId"] for diff in diffs) == sorted(steps)
    # Each upload took 0.8 s; no step waited for one.
    started = {e["stepId"]: moment(e) for e in rt.events if e["eventType"] == "step_started"}
    completed = {e["stepId"]: moment(e) for e in rt.events if e["eventType"] == "step_completed"}
    assert max(completed[step] - started[step] for step in steps) < 0.5, (started, completed)
    assert moment(end) - completed[steps[-1]] > 0.8  # the end waited for the uploads queued before it


async def test_a_last_tasks_end_does_not_wait_for_its_history(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path, proxy: tuple[UploadProxy, str]
) -> None:
    """``taskOptions.lastTask`` (``cowork exec``): the history is durable in the spool when the end is
    announced, and goes to the service afterwards — the exit never waits for it."""
    uploads, url = proxy
    uploads.delay_s = {"file_diff": 1.0, "session_history": 1.0}
    async with ScriptedGateway(writes(workspace, 2)) as gateway:
        rt = await launch(gateway.url, extra={"COWORK_BACKEND_URL": url})
        await rt.create_session(backend, workspace)
        await rt.start_task("Write two files", maxSteps=10, lastTask=True)
        end = await rt.task_end("task_1", timeout=60)
        spooled = [path.read_bytes() for path in (data_dir / "uploads").glob("*.upload")]

        async def stored() -> Any:
            return await backend.session_history(rt.workspace_id or "", rt.session_id or "")

        history = await eventually(stored, timeout=20, what="the history, after the end")
    assert end["eventType"] == "task_completed"
    completed = [moment(e) for e in rt.events if e["eventType"] == "step_completed"]
    assert moment(end) - completed[-1] < 0.5  # not the second the service took for each upload
    assert any(b"session_history" in entry for entry in spooled)
    assert history.messages[-1].content == "All written."


async def test_uploads_the_service_refused_wait_in_the_spool_through_a_kill_and_go_with_the_next_runtime(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path, proxy: tuple[UploadProxy, str]
) -> None:
    uploads, url = proxy
    uploads.refuse = True
    async with ScriptedGateway(writes(workspace, 1)) as gateway:
        first = await launch(gateway.url, extra={"COWORK_BACKEND_URL": url})
        await first.create_session(backend, workspace)
        end = await first.run_task("Write a file", maxSteps=10, timeout=60)
        warned = first.find("artifact_upload_failed")
        spooled = sorted((data_dir / "uploads").glob("*.upload"))
        await first.kill()
    assert end["eventType"] == "task_completed"  # the task did not wait for a service that is down
    assert [e["payload"]["artifactName"] for e in warned] == ["session_history.json"]
    assert len(spooled) == 2  # the diff and the history, kept
    assert await backend.session_history(first.workspace_id or "", first.session_id or "") is None

    uploads.refuse = False
    async with ScriptedGateway([]) as gateway:
        second = await launch(gateway.url, extra={"COWORK_BACKEND_URL": url}, label="the next runtime")
        await second.create_session(backend, workspace)

        async def stored() -> Any:
            return await backend.session_history(first.workspace_id or "", first.session_id or "")

        history = await eventually(stored, timeout=20, what="the first runtime's history")
        diffs = await artifacts(backend, first, "file_diff")
        await second.shutdown()
    assert history.messages[-1].content == "All written."
    assert len(diffs) == 1
    assert list((data_dir / "uploads").glob("*.upload")) == []


async def test_shutdown_does_not_wait_for_an_upload_the_service_holds(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path, proxy: tuple[UploadProxy, str]
) -> None:
    uploads, url = proxy
    uploads.hold.clear()  # the service accepts uploads and never answers
    script = [
        {"toolCalls": [tool_call("WriteFile", "call_w", path=str(workspace / "a.txt"), content="a\n")]},
        {"text": "Still thinking", "chunkSize": 4, "holdAfterChunks": 1},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await launch(gateway.url, extra={"COWORK_BACKEND_URL": url})
        await rt.create_session(backend, workspace)
        await rt.start_task("Write, then think", maxSteps=10)
        await rt.event("text_chunk")  # step 2 is streaming; step 1's diff waits at the service
        began = time.monotonic()
        result = await rt.shutdown()
        status = await rt.wait_exit(timeout=20)
        took = time.monotonic() - began
        gateway.release()
    assert result == {"sessionStatus": "SESSION_CANCELLED"}
    assert status == 0
    assert took < 5.0  # the backend client would wait 30 s for an answer
    assert len(list((data_dir / "uploads").glob("*.upload"))) == 2  # the diff and the history
    assert "session_history" not in uploads.uploads  # the exit did not even try
