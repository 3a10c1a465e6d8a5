"""The upload queue: spooled at once, sent in order in the background, kept while the Workspace Service
is down (and across a killed runtime), dropped only when the service refuses."""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_runtime.agent_host.services import BackendRejected, BackendUnreachable
from agent_runtime.agent_host.uploads import SENT, SpooledUpload, UploadQueue, UploadSpool
from agent_runtime.agent_host.uploads.queue import HOLD_S
from contracts.enums import ArtifactType
from contracts.errors import ErrorCode, ErrorShape
from contracts.rest.workspaces import ArtifactUploadRequest, ArtifactUploadResponse
from tests.support.peers import REPO_ROOT

ORIGIN = "http://127.0.0.1:8765"


class Service:
    """An in-memory Workspace Service: stores what it is sent, or is down, or refuses some names."""

    def __init__(self) -> None:
        self.stored: list[tuple[str, bytes, str | None]] = []
        self.down = False
        self.refused: set[str] = set()
        self.open = asyncio.Event()
        self.open.set()

    async def upload_artifact(
        self, request: ArtifactUploadRequest, *, idempotency_key: str | None = None
    ) -> ArtifactUploadResponse:
        await self.open.wait()
        if self.down:
            raise BackendUnreachable(
                ErrorCode.WORKSPACE_UPLOAD_FAILED, "The Workspace Service could not be reached", details={}
            )
        if request.artifact_name in self.refused:
            raise BackendRejected(
                ErrorShape(code=ErrorCode.INVALID_REQUEST, message="no such workspace"), status=404
            )
        content = base64.b64decode(request.content_base64)
        self.stored.append((request.artifact_name, content, idempotency_key))
        now = datetime.now(UTC)
        return ArtifactUploadResponse(
            artifact_id="art_1",
            artifact_uri="cowork://workspaces/ws_1/artifacts/art_1",
            workspace_id=request.workspace_id,
            session_id=request.session_id,
            artifact_type=request.artifact_type,
            artifact_name=request.artifact_name,
            content_type=request.content_type,
            size_bytes=len(content),
            sha256="0" * 64,
            created_at=now,
            updated_at=now,
            outcome="created",
        )

    @property
    def names(self) -> list[str]:
        return [name for name, _, _ in self.stored]


class Backoff:
    """Stands in for the queue's sleep: records each wait and holds it until the test lets it go."""

    def __init__(self) -> None:
        self.waits: list[float] = []
        self.go = asyncio.Event()

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        await self.go.wait()
        self.go.clear()


def make_queue(
    spool: UploadSpool, service: Service, backoff: Backoff | None = None, **options: object
) -> tuple[UploadQueue, list[tuple[str, str]]]:
    failed: list[tuple[str, str]] = []
    queue = UploadQueue(
        spool,
        service,
        origin=ORIGIN,
        on_failed=lambda name, reason: failed.append((name, reason)),
        sleep=(backoff or Backoff()).sleep,
        random=lambda: 0.5,
        **options,  # type: ignore[arg-type]
    )
    return queue, failed


async def put(
    queue: UploadQueue, name: str, content: bytes = b"diff", **options: object
) -> asyncio.Future[str]:
    history = name == "session_history.json"
    return await queue.put(
        workspace_id="ws_1",
        session_id="sess_1",
        task_id="task_1",
        step_id=None if history else "step_1",
        artifact_type=ArtifactType.SESSION_HISTORY if history else ArtifactType.FILE_DIFF,
        artifact_name=name,
        content_type="application/json" if history else "text/x-diff",
        content=content,
        durable=history,
        **options,  # type: ignore[arg-type]
    )


async def eventually(check: object, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not check():  # type: ignore[operator]  # noqa: ASYNC110 - nothing to wait on but the queue
            await asyncio.sleep(0.005)


@pytest.fixture
def spool(tmp_path: Path) -> UploadSpool:
    return UploadSpool(tmp_path / "uploads")


async def test_uploads_go_in_the_order_they_were_put_and_leave_the_spool_empty(spool: UploadSpool) -> None:
    service = Service()
    queue, failed = make_queue(spool, service)
    queue.start()
    try:
        tickets = [await put(queue, f"{n}.diff", f"content {n}".encode()) for n in range(3)]
        tickets.append(await put(queue, "session_history.json", b"{}"))
        assert await queue.settle(tickets[-1]) == SENT
    finally:
        await queue.aclose()
    assert service.names == ["0.diff", "1.diff", "2.diff", "session_history.json"]
    assert [content for _, content, _ in service.stored[:3]] == [b"content 0", b"content 1", b"content 2"]
    assert all(ticket.result() == SENT for ticket in tickets)
    assert len({key for _, _, key in service.stored}) == 4  # each with its own Idempotency-Key
    assert spool.entries() == []
    assert failed == []


async def test_put_returns_before_the_service_has_answered(spool: UploadSpool) -> None:
    service = Service()
    service.open.clear()  # the service takes its time
    queue, _ = make_queue(spool, service)
    queue.start()
    try:
        ticket = await put(queue, "a.diff")
        assert not ticket.done()
        assert len(spool.entries()) == 1  # already on disk
        service.open.set()
        assert await queue.settle(ticket) == SENT
    finally:
        await queue.aclose()


async def test_while_the_loop_works_on_a_step_nothing_is_sent_until_it_waits_again(
    spool: UploadSpool,
) -> None:
    service = Service()
    queue, _ = make_queue(spool, service, hold_s=30.0)
    queue.start()
    try:
        queue.hold()  # the model's answer arrived: the step's tools run
        ticket = await put(queue, "a.diff")
        await asyncio.sleep(0.05)
        assert service.names == []
        assert len(spool.entries()) == 1
        queue.release()  # the loop waits for the model
        assert await queue.settle(ticket) == SENT
    finally:
        await queue.aclose()
    assert service.names == ["a.diff"]


async def test_a_release_after_a_delay_is_called_off_by_the_next_hold(spool: UploadSpool) -> None:
    service = Service()
    queue, _ = make_queue(spool, service, hold_s=30.0)
    queue.start()
    try:
        queue.hold()
        ticket = await put(queue, "a.diff")
        queue.release(after_s=0.02)  # a model that answers within this: nothing is sent meanwhile
        queue.hold()
        await asyncio.sleep(0.1)
        assert service.names == []
        queue.release(after_s=0.02)  # a slower one: the upload goes while it is awaited
        assert await queue.settle(ticket, timeout_s=10) == SENT
    finally:
        await queue.aclose()


async def test_a_hold_never_released_keeps_an_upload_back_only_briefly(spool: UploadSpool) -> None:
    service = Service()
    queue, _ = make_queue(spool, service, hold_s=0.2)
    queue.start()
    try:
        queue.hold()
        started = time.monotonic()
        ticket = await put(queue, "a.diff")
        assert await queue.settle(ticket, timeout_s=10) == SENT
        assert 0.2 <= time.monotonic() - started < 5
    finally:
        await queue.aclose()
    assert HOLD_S <= 0.1  # what a missed release costs a real session at most


async def test_a_refused_upload_is_dropped_and_reported_and_the_next_ones_go_on(spool: UploadSpool) -> None:
    service = Service()
    service.refused.add("bad.diff")
    queue, failed = make_queue(spool, service)
    queue.start()
    try:
        bad = await put(queue, "bad.diff")
        good = await put(queue, "good.diff")
        assert await queue.settle(good) == SENT
    finally:
        await queue.aclose()
    assert bad.result() != SENT
    assert "no such workspace" in bad.result()
    assert failed == [("bad.diff", bad.result())]
    assert service.names == ["good.diff"]
    assert spool.entries() == []


async def test_while_the_service_is_down_uploads_wait_on_disk_and_go_once_it_is_back(
    spool: UploadSpool,
) -> None:
    service = Service()
    service.down = True
    backoff = Backoff()
    queue, failed = make_queue(spool, service, backoff)
    queue.start()
    try:
        artifact = await put(queue, "a.diff")
        history = await put(queue, "session_history.json", b"{}")
        # The task's end does not wait for a service that is down: the history stays spooled.
        assert await queue.settle(history) is None
        assert queue.stalled
        await eventually(lambda: len(backoff.waits) == 1)
        assert len(spool.entries()) == 2
        backoff.go.set()  # a second try, still down: a longer wait
        await eventually(lambda: len(backoff.waits) == 2)
        assert backoff.waits[1] > backoff.waits[0]
        service.down = False
        backoff.go.set()
        assert await asyncio.wait_for(asyncio.shield(history), 5) == SENT
    finally:
        await queue.aclose()
    assert artifact.result() == SENT
    assert service.names == ["a.diff", "session_history.json"]
    assert failed == []
    assert not queue.stalled


async def test_closing_keeps_what_was_not_sent_for_the_next_runtime(spool: UploadSpool) -> None:
    service = Service()
    service.open.clear()
    queue, _ = make_queue(spool, service)
    queue.start()
    await put(queue, "a.diff")
    await put(queue, "session_history.json", b'{"messages": []}')
    await queue.aclose()
    assert len(spool.entries()) == 2

    later = Service()
    next_queue, _ = make_queue(spool, later)
    next_queue.start()
    try:
        await eventually(lambda: len(later.stored) == 2)
    finally:
        await next_queue.aclose()
    assert later.names == ["a.diff", "session_history.json"]
    assert spool.entries() == []


async def test_leftovers_go_only_to_the_backend_they_were_meant_for(spool: UploadSpool) -> None:
    other = SpooledUpload(
        origin="https://backend.example.com",
        idempotency_key="k1",
        workspace_id="ws_9",
        session_id="sess_9",
        task_id="t",
        step_id="s",
        artifact_type=ArtifactType.FILE_DIFF,
        artifact_name="elsewhere.diff",
        content_type="text/x-diff",
        content=b"x",
    )
    mine = SpooledUpload(**_fields(other, origin=ORIGIN + "/", name="mine.diff"))  # type: ignore[arg-type]
    spool.put(other, durable=True)
    spool.put(mine, durable=True)
    service = Service()
    queue, _ = make_queue(spool, service)
    queue.start()
    try:
        await eventually(lambda: service.names == ["mine.diff"])
    finally:
        await queue.aclose()
    (left,) = spool.entries()
    assert spool.read(left) == other  # still waiting for its own backend


def _fields(upload: SpooledUpload, *, origin: str, name: str) -> dict[str, object]:
    return {
        "origin": origin,
        "idempotency_key": "k2",
        "workspace_id": upload.workspace_id,
        "session_id": upload.session_id,
        "task_id": upload.task_id,
        "step_id": upload.step_id,
        "artifact_type": upload.artifact_type,
        "artifact_name": name,
        "content_type": upload.content_type,
        "content": upload.content,
    }


async def test_an_entry_cut_short_is_removed_and_never_sent(spool: UploadSpool) -> None:
    service = Service()
    queue, _ = make_queue(spool, service)
    queue.start()
    await put(queue, "a.diff", b"0123456789")
    await queue.aclose()
    (path,) = spool.entries()
    path.write_bytes(path.read_bytes()[:-3])  # what a power cut before the fsync can leave
    queue, _ = make_queue(spool, service)
    queue.start()
    await eventually(lambda: spool.entries() == [])  # taken as a leftover: unreadable, removed
    await queue.aclose()
    assert service.stored == []


async def test_artifacts_beyond_the_spool_limit_are_dropped_but_a_history_is_always_kept(
    spool: UploadSpool,
) -> None:
    service = Service()
    service.down = True
    queue, failed = make_queue(spool, service, max_pending_bytes=100)
    queue.start()
    try:
        await put(queue, "a.diff", b"x" * 80)
        dropped = await put(queue, "b.diff", b"x" * 80)
        history = await put(queue, "session_history.json", b"x" * 80)
    finally:
        await queue.aclose()
    assert "already wait" in dropped.result()
    assert [name for name, _ in failed] == ["b.diff"]
    assert history.result() != SENT
    assert len(spool.entries()) == 2  # a.diff and the history


async def test_leftovers_older_than_a_week_are_given_up(spool: UploadSpool) -> None:
    service = Service()
    queue, _ = make_queue(spool, service)
    queue.start()
    await put(queue, "old.diff")
    service.open.clear()
    await queue.aclose()
    week_later = time.time() + 8 * 24 * 3600
    later = Service()
    queue, _ = make_queue(spool, later, clock=lambda: week_later)
    queue.start()
    await eventually(lambda: spool.entries() == [])
    await queue.aclose()
    assert later.stored == []


async def test_leftovers_go_before_the_new_sessions_own_uploads(spool: UploadSpool) -> None:
    down = Service()
    down.down = True
    queue, _ = make_queue(spool, down)
    queue.start()
    await put(queue, "left.diff")
    await queue.aclose()
    service = Service()
    queue, _ = make_queue(spool, service)
    queue.start()  # the spool is read by the sending task, not here
    ticket = await put(queue, "own.diff")
    try:
        assert await queue.settle(ticket) == SENT
    finally:
        await queue.aclose()
    assert service.names == ["left.diff", "own.diff"]
    assert spool.entries() == []


# ------------------------------------------------------------------ kill -9

_PRODUCER = """
import asyncio, sys
from pathlib import Path
from agent_runtime.agent_host.uploads import UploadQueue, UploadSpool
from contracts.enums import ArtifactType

class Hanging:  # a Workspace Service that never answers
    async def upload_artifact(self, request, *, idempotency_key=None):
        await asyncio.Event().wait()

async def main():
    queue = UploadQueue(UploadSpool(Path(sys.argv[1])), Hanging(), origin=sys.argv[2])
    queue.start()
    for n in range(3):
        history = n == 2
        await queue.put(
            workspace_id="ws_1", session_id="sess_1", task_id="task_1",
            step_id=None if history else f"step_{n}",
            artifact_type=ArtifactType.SESSION_HISTORY if history else ArtifactType.FILE_DIFF,
            artifact_name="session_history.json" if history else f"{n}.diff",
            content_type="text/plain", content=f"content {n}".encode(), durable=history,
        )
    print("spooled", flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


async def test_uploads_spooled_by_a_runtime_killed_with_sigkill_are_sent_by_the_next_one(
    spool: UploadSpool,
) -> None:
    with subprocess.Popen(  # noqa: ASYNC220 - a process to kill, not to wait for
        [sys.executable, "-c", _PRODUCER, str(spool.directory), ORIGIN],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    ) as producer:
        try:
            assert producer.stdout is not None
            line = await asyncio.wait_for(asyncio.to_thread(producer.stdout.readline), 30)
            assert line.strip() == "spooled"
        finally:
            os.kill(producer.pid, signal.SIGKILL)
    assert len(spool.entries()) == 3

    service = Service()
    queue, failed = make_queue(spool, service)
    queue.start()
    try:
        await eventually(lambda: len(service.stored) == 3)
    finally:
        await queue.aclose()
    assert service.names == ["0.diff", "1.diff", "session_history.json"]
    assert [content for _, content, _ in service.stored] == [b"content 0", b"content 1", b"content 2"]
    assert failed == []
    assert spool.entries() == []
