"""The event outbox and its spool: envelopes appended to disk at once, sent in batches in the background,
kept while the service is down (and across a killed runtime), dropped only when refused or past the
spool's bound."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.agent_host.llm.config import RetrySettings
from agent_runtime.agent_host.observability import EventOutbox, EventSpool, SegmentHeader
from agent_runtime.agent_host.services import BackendRejected, BackendUnreachable
from contracts.errors import ErrorCode, ErrorShape
from contracts.local_backend import try_lock
from tests.support.peers import REPO_ROOT

HEADER = SegmentHeader("audit", "http://127.0.0.1", "acme", "alice")
FAST = RetrySettings(max_retries=0, base_s=0.01, cap_s=0.05)


class Service:
    """An in-memory Audit Service: keeps the batches it takes (by eventId), or is down, or refuses."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.down = False
        self.refuse_ids: set[str] = set()
        self.refuse_all = False

    @property
    def ids(self) -> list[str]:
        return [event_id for batch in self.batches for event_id in batch]

    async def deliver(self, lines: list[bytes]) -> None:
        await asyncio.sleep(0)
        if self.down:
            raise BackendUnreachable(ErrorCode.INTERNAL_ERROR, "The Audit Service could not be reached")
        ids = [json.loads(line)["eventId"] for line in lines]
        if self.refuse_all:
            raise BackendRejected(ErrorShape(code=ErrorCode.PERMISSION_DENIED, message="no"), status=403)
        for index, event_id in enumerate(ids):
            if event_id in self.refuse_ids:
                shape = ErrorShape(
                    code=ErrorCode.INVALID_REQUEST,
                    message="eventType is not valid",
                    details={"field": f"[{index}].eventType"},
                )
                raise BackendRejected(shape, status=400)
        self.batches.append(ids)


def event(n: int, size: int = 0) -> dict[str, Any]:
    return {"eventId": f"evt_{n}", "eventType": "tool_completed", "payload": {"pad": "x" * size}}


def outbox(spool_dir: Path, service: Service, **options: Any) -> EventOutbox:
    options.setdefault("flush_after_s", 0.02)
    options.setdefault("retry", FAST)
    return EventOutbox(EventSpool(spool_dir), HEADER, service.deliver, **options)


def segments(spool_dir: Path) -> list[Path]:
    return sorted(spool_dir.glob("*/*.seg"))


async def test_envelopes_are_sent_in_order_in_batches_and_leave_the_spool(tmp_path: Path) -> None:
    service = Service()
    box = outbox(tmp_path, service, batch_events=500)
    box.start()
    for n in range(1200):
        assert box.put(event(n))
    assert await box.flush(timeout_s=10)
    assert service.ids == [f"evt_{n}" for n in range(1200)]
    assert [len(batch) for batch in service.batches] == [500, 500, 200]
    assert box.sent == 1200
    assert box.dropped == 0
    assert segments(tmp_path) == []
    await box.aclose()


async def test_a_lone_envelope_is_sent_after_the_flush_interval(tmp_path: Path) -> None:
    service = Service()
    box = outbox(tmp_path, service, flush_after_s=0.05)
    box.start()
    box.put(event(1))
    async with asyncio.timeout(5):
        while not service.batches:  # noqa: ASYNC110 - the outbox has no event for a test to wait on
            await asyncio.sleep(0.01)
    assert service.ids == ["evt_1"]
    await box.aclose()


async def test_put_writes_the_envelope_to_disk_before_it_returns(tmp_path: Path) -> None:
    service = Service()
    box = outbox(tmp_path, service, flush_after_s=60)
    box.start()
    box.put(event(7))
    (path,) = segments(tmp_path)
    lines = path.read_bytes().splitlines()
    assert json.loads(lines[-1])["eventId"] == "evt_7"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    await box.aclose(flush_timeout_s=5)


async def test_nothing_is_lost_while_the_service_is_down_and_it_is_sent_once_back(tmp_path: Path) -> None:
    service = Service()
    service.down = True
    box = outbox(tmp_path, service)
    box.start()
    for n in range(30):
        box.put(event(n))
    assert not await box.flush(timeout_s=2)
    assert box.stalled
    assert segments(tmp_path)  # kept on disk
    service.down = False
    for n in range(30, 40):
        box.put(event(n))
    assert await box.flush(timeout_s=10)
    assert sorted(service.ids, key=lambda i: int(i[4:])) == [f"evt_{n}" for n in range(40)]
    assert not box.stalled
    await box.aclose()


async def test_an_envelope_the_service_refuses_is_dropped_and_the_rest_of_its_batch_sent(
    tmp_path: Path,
) -> None:
    service = Service()
    service.refuse_ids = {"evt_2"}
    box = outbox(tmp_path, service)
    box.start()
    for n in range(5):
        box.put(event(n))
    assert await box.flush(timeout_s=5)
    assert service.ids == ["evt_0", "evt_1", "evt_3", "evt_4"]
    assert box.dropped == 1


async def test_a_batch_refused_as_a_whole_is_dropped_not_retried_forever(tmp_path: Path) -> None:
    service = Service()
    service.refuse_all = True
    box = outbox(tmp_path, service)
    box.start()
    box.put(event(1))
    assert await box.flush(timeout_s=5)
    assert box.dropped == 1
    assert service.ids == []
    assert segments(tmp_path) == []
    await box.aclose()


async def test_the_spool_is_bounded_and_past_the_bound_envelopes_are_dropped(tmp_path: Path) -> None:
    service = Service()
    service.down = True
    box = outbox(tmp_path, service, max_pending_bytes=20_000)
    box.start()
    taken = sum(box.put(event(n, size=900)) for n in range(100))
    assert 10 <= taken < 30
    assert box.dropped == 100 - taken
    assert sum(path.stat().st_size for path in segments(tmp_path)) < 25_000
    await box.aclose()


async def test_segments_moved_out_of_memory_are_read_back_from_disk(tmp_path: Path) -> None:
    service = Service()
    service.down = True
    box = outbox(tmp_path, service, batch_events=10, max_memory_bytes=1)
    box.start()
    for n in range(50):
        box.put(event(n, size=100))
    service.down = False
    assert await box.flush(timeout_s=10)
    assert sorted(service.ids, key=lambda i: int(i[4:])) == [f"evt_{n}" for n in range(50)]
    await box.aclose()


async def test_what_is_unsent_at_the_end_stays_and_the_next_outbox_sends_it_first(tmp_path: Path) -> None:
    down = Service()
    down.down = True
    first = outbox(tmp_path, down)
    first.start()
    for n in range(3):
        first.put(event(n))
    await first.aclose(flush_timeout_s=0.2)
    first._spool.close()
    assert segments(tmp_path)
    service = Service()
    second = outbox(tmp_path, service)
    second.start()
    second.put(event(3))
    assert await second.flush(timeout_s=10)
    assert service.ids == ["evt_0", "evt_1", "evt_2", "evt_3"]
    await second.aclose()
    second._spool.close()
    assert list(tmp_path.iterdir()) == []  # every owner directory and lock file cleaned up


async def test_a_live_runtimes_spool_is_never_taken(tmp_path: Path) -> None:
    alive = outbox(tmp_path, Service(), flush_after_s=60)
    alive.start()
    alive.put(event(1))
    service = Service()
    other = outbox(tmp_path, service)
    other.start()
    await other.flush(timeout_s=0.3)
    assert service.ids == []
    await other.aclose()
    await alive.aclose(flush_timeout_s=0)


async def test_only_segments_for_the_same_backend_and_identity_are_taken(tmp_path: Path) -> None:
    down = Service()
    down.down = True
    for header in (
        HEADER,
        SegmentHeader("audit", "http://127.0.0.1", "acme", "bob"),
        SegmentHeader("audit", "https://elsewhere.example", "acme", "alice"),
        SegmentHeader("telemetry", "http://127.0.0.1", "acme", "alice"),
    ):
        box = EventOutbox(EventSpool(tmp_path), header, down.deliver, retry=FAST)
        box.start()
        box.put(event(hash(header) % 1000))
        await box.aclose(flush_timeout_s=0)
        box._spool.close()
    service = Service()
    box = outbox(tmp_path, service)
    box.start()
    assert await box.flush(timeout_s=5)
    assert len(service.ids) == 1
    await box.aclose()
    assert len(segments(tmp_path)) == 3  # the others wait for their own runtime


async def test_a_segment_older_than_a_week_is_given_up(tmp_path: Path) -> None:
    down = Service()
    down.down = True
    box = outbox(tmp_path, down)
    box.start()
    box.put(event(1))
    await box.aclose(flush_timeout_s=0)
    box._spool.close()
    (path,) = segments(tmp_path)
    old = time.time() - 8 * 24 * 3600
    os.utime(path, (old, old))
    service = Service()
    fresh = outbox(tmp_path, service)
    fresh.start()
    assert await fresh.flush(timeout_s=5)
    assert service.ids == []
    assert segments(tmp_path) == []
    await fresh.aclose()


async def test_an_unreadable_segment_is_removed_not_sent(tmp_path: Path) -> None:
    gone = tmp_path / "00000000000000000001-1-dead"
    gone.mkdir(parents=True)
    (gone / "audit-00000000000000000001-1-000000.seg").write_bytes(b"not a segment\n")
    service = Service()
    box = outbox(tmp_path, service)
    box.start()
    assert await box.flush(timeout_s=5)
    assert service.ids == []
    assert segments(tmp_path) == []
    await box.aclose()


def test_the_owner_directory_is_locked_for_the_process_life(tmp_path: Path) -> None:
    spool = EventSpool(tmp_path)
    owner = spool.open()
    with try_lock(tmp_path / f"{owner.name}.lock") as taken:
        assert not taken
    spool.close()
    assert not owner.exists()


_CHILD = textwrap.dedent(
    """
    import asyncio, os, sys
    from pathlib import Path
    from agent_runtime.agent_host.observability import EventOutbox, EventSpool, SegmentHeader

    async def never(lines):
        await asyncio.sleep(3600)

    async def main():
        header = SegmentHeader("audit", "http://127.0.0.1", "acme", "alice")
        box = EventOutbox(EventSpool(Path(sys.argv[1])), header, never, flush_after_s=0.01)
        box.start()
        for n in range(int(sys.argv[2])):
            box.put({"eventId": f"evt_{n}", "eventType": "tool_completed", "payload": {}})
        print("written", flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
async def test_envelopes_survive_a_kill_9_and_the_next_runtime_sends_them(tmp_path: Path) -> None:
    child = subprocess.Popen(  # noqa: ASYNC220 - started once; the test then waits on a thread
        [sys.executable, "-c", _CHILD, str(tmp_path), "250"], cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        assert (await asyncio.to_thread(child.stdout.readline)).strip() == "written"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        if child.stdout is not None:
            child.stdout.close()
    service = Service()
    box = outbox(tmp_path, service)
    box.start()
    assert await box.flush(timeout_s=10)
    assert sorted(service.ids, key=lambda i: int(i[4:])) == [f"evt_{n}" for n in range(250)]
    await box.aclose()


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
async def test_a_link_in_a_gone_runtimes_spool_is_never_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.seg"
    down = Service()
    down.down = True
    box = outbox(tmp_path / "spool", down)
    box.start()
    box.put(event(1))
    await box.aclose(flush_timeout_s=0)
    box._spool.close()
    (real,) = segments(tmp_path / "spool")
    elsewhere.write_bytes(real.read_bytes().replace(b"evt_1", b"evt_9"))
    real.unlink()
    (real.parent / "audit-00000000000000000002-1-000000.seg").symlink_to(elsewhere)
    service = Service()
    fresh = outbox(tmp_path / "spool", service)
    fresh.start()
    assert await fresh.flush(timeout_s=5)
    assert service.ids == []
    assert elsewhere.exists()
    await fresh.aclose()
