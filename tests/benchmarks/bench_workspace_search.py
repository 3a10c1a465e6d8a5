"""Benchmark of the workspace search index (WorkspaceSearch's): what indexing adds to uploads on the local
store, and how long a search takes on the local store (SQLite FTS5) and on the AWS store (moto's server:
its per-request cost is moto's, not DynamoDB's, so that figure is an upper bound of the ranking work
plus one emulated Query per page).

* a 64 KiB text artifact uploaded through the Workspace Service, against the same bytes declared binary
  (not indexed): the difference is the indexing;
* a session's history snapshot after each of ``--messages`` tasks (one message more each time), the
  index brought up to date incrementally;
* searches of two words over ``--sessions`` sessions of ``--messages`` messages, p50 / p99.

Run: ``.venv/bin/python -m tests.benchmarks.bench_workspace_search`` (``--help`` for sizes). Prints a
table.
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from backend.common.auth import Principal
from backend.common.settings import Settings
from backend.storage import Stores
from backend.storage.local import open_local_stores
from backend.workspace.service import WorkspaceService
from contracts.enums import ArtifactType, WorkspaceScope
from contracts.rest.workspaces import ArtifactUploadRequest
from tests.benchmarks.figures import Targets, percentile, report

TARGETS: Targets = {
    "upload_text_ms": ("upload of 64 KiB text, indexed, local store, p50", "ms", None, None),
    "upload_binary_ms": ("upload of the same bytes declared binary (not indexed), p50", "ms", None, None),
    "index_added_ms": ("indexing added to a 64 KiB text upload, p50 (off the event loop)", "ms", None, None),
    "history_ms": ("history snapshot upload, one message more each time, p50", "ms", None, None),
    "history_p99_ms": ("history snapshot upload, p99", "ms", "<=", 50.0),
    "local_search_p50_ms": ("search, local store (FTS5), p50", "ms", "<=", 20.0),
    "local_search_p99_ms": ("search, local store (FTS5), p99", "ms", "<=", 100.0),
    "aws_search_p50_ms": ("search, AWS store on moto, p50", "ms", None, None),
    "aws_search_p99_ms": ("search, AWS store on moto, p99", "ms", None, None),
}

ALICE = Principal("acme", "alice")
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
VOCABULARY = 20_000
"""Words of the synthetic text, used as often as in natural language (Zipf: the n-th most common about
1/n as often as the first); a query asks for two of the 200th to 2,000th most common."""
_WEIGHTS = [1 / rank for rank in range(1, VOCABULARY + 1)]


class _Sessions:
    def __init__(self) -> None:
        self.workspace: dict[str, str] = {}

    def workspace_of(self, principal: Principal, session_id: str) -> str | None:
        return self.workspace.get(session_id)


class _Clock:
    def __init__(self) -> None:
        self.moment = T0 + timedelta(days=1)

    def now(self) -> datetime:
        self.moment += timedelta(milliseconds=1)
        return self.moment


def _word(rank: int) -> str:
    return f"w{rank}x"


def _sentence(rng: random.Random, words: int = 60) -> str:
    ranks = rng.choices(range(VOCABULARY), weights=_WEIGHTS, k=words)
    return " ".join(_word(rank) for rank in ranks)


def _upload(
    workspace_id: str, session_id: str, data: bytes, content_type: str, index: int
) -> ArtifactUploadRequest:
    return ArtifactUploadRequest(
        workspace_id=workspace_id,
        session_id=session_id,
        task_id="task_1",
        step_id=f"step_{index}",
        artifact_type=ArtifactType.TOOL_OUTPUT,
        artifact_name=f"out-{index}.log",
        content_type=content_type,
        content_base64=base64.b64encode(data).decode(),
    )


def _history(workspace_id: str, session_id: str, messages: list[str], at: datetime) -> ArtifactUploadRequest:
    document = {
        "workspaceId": workspace_id,
        "sessionId": session_id,
        "snapshotAfterTaskId": f"task_{len(messages)}",
        "snapshotAt": at.isoformat(),
        "messages": [
            {
                "messageId": f"msg_{index}",
                "sessionId": session_id,
                "role": "user" if index % 2 == 0 else "assistant",
                "content": text,
                "timestamp": (T0 + timedelta(seconds=index)).isoformat(),
            }
            for index, text in enumerate(messages)
        ],
    }
    return ArtifactUploadRequest(
        workspace_id=workspace_id,
        session_id=session_id,
        artifact_type=ArtifactType.SESSION_HISTORY,
        artifact_name="session_history.json",
        content_type="application/json",
        content_base64=base64.b64encode(json.dumps(document).encode()).decode(),
    )


def _timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return (time.perf_counter() - started) * 1000


def _service(stores: Stores, sessions: _Sessions, clock: _Clock) -> WorkspaceService:
    return WorkspaceService(stores.workspaces, stores.content, sessions, clock, Settings())


def _fill(
    service: WorkspaceService, sessions: _Sessions, workspace_id: str, count: int, messages: int
) -> None:
    rng = random.Random(7)
    for number in range(count):
        session_id = f"sess_{number}"
        sessions.workspace[session_id] = workspace_id
        texts = [_sentence(rng) for _ in range(messages)]
        service.upload(ALICE, workspace_id, _history(workspace_id, session_id, texts, T0), None)


def _query_word(rng: random.Random) -> str:
    return _word(rng.randrange(200, 2_000))


def _searches(service: WorkspaceService, workspace_id: str, runs: int) -> list[float]:
    rng = random.Random(11)
    return [
        _timed(lambda: service.search(ALICE, workspace_id, f"{_query_word(rng)} {_query_word(rng)}"))
        for _ in range(runs)
    ]


def measure_local(
    directory: Path, uploads: int, messages: int, sessions_count: int, runs: int
) -> dict[str, float]:
    stores = open_local_stores(directory)
    sessions, clock = _Sessions(), _Clock()
    service = _service(stores, sessions, clock)
    try:
        workspace = service.resolve(ALICE, WorkspaceScope.GENERAL, [])
        ws = workspace.workspace_id
        sessions.workspace["sess_up"] = ws
        rng = random.Random(3)
        text = (_sentence(rng, 12_000).encode() + b"\n")[: 64 * 1024]
        texts, binaries = [], []
        for index in range(uploads):
            varied = index.to_bytes(8, "big").hex().encode() + text[16:]
            texts.append(
                _timed(
                    lambda v=varied, i=index: service.upload(
                        ALICE, ws, _upload(ws, "sess_up", v, "text/plain", i), None
                    )
                )
            )
            binaries.append(
                _timed(
                    lambda v=varied, i=index: service.upload(
                        ALICE, ws, _upload(ws, "sess_up", v, "application/octet-stream", uploads + i), None
                    )
                )
            )
        sessions.workspace["sess_grow"] = ws
        grown: list[str] = []
        history_times = []
        for step in range(messages):
            grown.append(_sentence(rng))
            request = _history(ws, "sess_grow", list(grown), T0 + timedelta(minutes=step))
            history_times.append(_timed(lambda r=request: service.upload(ALICE, ws, r, None)))
        _fill(service, sessions, ws, sessions_count, messages)
        searches = _searches(service, ws, runs)
    finally:
        stores.close()
    return {
        "upload_text_ms": statistics.median(texts),
        "upload_binary_ms": statistics.median(binaries),
        "index_added_ms": statistics.median(texts) - statistics.median(binaries),
        "history_ms": statistics.median(history_times),
        "history_p99_ms": percentile(history_times, 0.99),
        "local_search_p50_ms": statistics.median(searches),
        "local_search_p99_ms": percentile(searches, 0.99),
    }


def measure_aws(messages: int, sessions_count: int, runs: int) -> dict[str, float]:
    from moto.server import ThreadedMotoServer

    from backend.storage.aws import AwsSettings, create_resources, open_aws_stores

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    os.environ.update(
        {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1"}
    )
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        settings = AwsSettings(env_prefix="bench", endpoint_url=f"http://{host}:{port}")
        create_resources(settings)
        stores = open_aws_stores(settings)
        sessions, clock = _Sessions(), _Clock()
        service = _service(stores, sessions, clock)
        try:
            ws = service.resolve(ALICE, WorkspaceScope.GENERAL, []).workspace_id
            _fill(service, sessions, ws, sessions_count, messages)
            searches = _searches(service, ws, runs)
        finally:
            stores.close()
    finally:
        server.stop()
    return {"aws_search_p50_ms": statistics.median(searches), "aws_search_p99_ms": percentile(searches, 0.99)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uploads", type=int, default=200, help="64 KiB uploads of each kind (default 200)")
    parser.add_argument("--messages", type=int, default=50, help="messages per session (default 50)")
    parser.add_argument("--sessions", type=int, default=100, help="sessions searched, local (default 100)")
    parser.add_argument("--aws-sessions", type=int, default=20, help="sessions searched on moto (default 20)")
    parser.add_argument("--searches", type=int, default=200, help="searches per store (default 200)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        figures = measure_local(Path(directory), args.uploads, args.messages, args.sessions, args.searches)
    figures |= measure_aws(args.messages, args.aws_sessions, max(1, args.searches // 4))
    print(report(figures, TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
