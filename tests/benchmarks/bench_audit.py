"""Benchmark of audit ingest as runtimes will post it: ``cowork-backend serve --store local`` in its own
process on 127.0.0.1, ``--producers`` concurrent producers (default 100), each on its own keep-alive
HTTP/1.1 connection, posting seed 001 §6.3 envelopes to ``POST /audit/events``:

* one envelope per request (a producer that sends each event as it happens);
* batches of ``--batch`` envelopes (default 50; a spool draining).

Each as events/s, request p50/p99 and the server's CPU time per event. Every event is one link of
the tenant's hash chain, appended while the other producers race for the next sequence number (the
local store links a whole request's events in one transaction), so the chain is verified afterwards:
every event in it once, every link intact.

Target: p99 ≤ 100 ms for single events at 100 producers (the backend's latency target elsewhere).
Batches are shown as measured: with every producer's batch in flight at once (5,000 events at the
defaults), a request waits for the ones queued before it, so its latency is about the events in flight
divided by the throughput (Little's law) — the figure to watch for batches is events/s. The load
generator shares the machine's cores with the server, so it is a minimal HTTP/1.1 client on uvloop
(the one of ``bench_backend``).

Run: ``.venv/bin/python -m tests.benchmarks.bench_audit`` (``--help`` for sizes). Prints a table.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import uuid
from pathlib import Path

import psutil

from backend.audit.chain import verify_chain
from backend.storage.local import open_local_stores
from contracts.ipc import eventloop
from tests.benchmarks.bench_backend import (
    Connection,
    cpu_seconds,
    drive,
    figures_of,
    http_request,
    start_server,
)
from tests.benchmarks.figures import Targets, report

TARGETS: Targets = {
    "single_per_s": ("one event per request: events/s", "/s", None, None),
    "single_p50_ms": ("one event per request: p50", "ms", None, None),
    "single_p99_ms": ("one event per request: p99", "ms", "<=", 100.0),
    "single_cpu_ms": ("one event per request: server CPU per event", "ms", None, None),
    "batch_per_s": ("batches: events/s", "/s", None, None),
    "batch_p50_ms": ("batches: request p50", "ms", None, None),
    "batch_p99_ms": ("batches: request p99", "ms", None, None),
    "batch_cpu_ms": ("batches: server CPU per event", "ms", None, None),
    "chain_checked": ("events in the verified chain", "", None, None),
}


def _envelope(user: str, index: int) -> dict[str, object]:
    return {
        "eventId": f"evt_{uuid.uuid4().hex}",
        "eventType": "tool_completed",
        "timestamp": "2026-03-02T09:00:00Z",
        "tenantId": "local",
        "userId": user,
        "workspaceId": f"ws_{index % 20}",
        "sessionId": f"sess_{index % 100}",
        "taskId": "task_001",
        "component": "LocalAgentHost",
        "boundedContext": "AgentExecution",
        "severity": "info",
        "payload": {"toolName": "RunCommand", "status": "succeeded", "latencyMs": 12, "target": "pytest -q"},
    }


def _requests(token: str, user: str, count: int, batch: int) -> list[bytes]:
    """Prepared in advance, so the producers spend their time sending, not encoding."""
    requests = []
    for index in range(count):
        events = [_envelope(user, index * batch + n) for n in range(batch)]
        body = json.dumps(events[0] if batch == 1 else events).encode()
        requests.append(http_request("POST", "/audit/events", token, body))
    return requests


async def measure(producers: int, events: int, batches: int, batch: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="cowork-bench-audit-") as directory:
        data = Path(directory) / "data"
        process, url, token = await start_server(data)
        user = json.loads((data / "backend.json").read_text())["userId"]
        try:
            host, port = url.removeprefix("http://").rsplit(":", 1)
            server = psutil.Process(process.pid)
            connections = [await Connection.open(host, int(port)) for _ in range(producers)]
            warm = _requests(token, user, min(200, events), 1)
            await drive(connections, len(warm), warm.__getitem__, 201)

            single = _requests(token, user, events, 1)
            used = cpu_seconds(server)
            elapsed, latencies, _ = await drive(connections, len(single), single.__getitem__, 201)
            figures = figures_of("single", elapsed, latencies, cpu_seconds(server) - used)

            batched = _requests(token, user, batches, batch)
            used = cpu_seconds(server)
            elapsed, latencies, _ = await drive(connections, len(batched), batched.__getitem__, 201)
            figures |= figures_of("batch", elapsed, latencies, cpu_seconds(server) - used)
            # Per event, not per request.
            figures["batch_per_s"] *= batch
            figures["batch_cpu_ms"] /= batch
            for connection in connections:
                connection.close()
        finally:
            process.terminate()
            await process.wait()
        stores = open_local_stores(data)
        try:
            verdict = verify_chain(stores.audit.records("local"))
        finally:
            stores.close()
        expected = len(warm) + events + batches * batch
        if not verdict.ok or verdict.checked != expected:
            raise RuntimeError(f"the chain does not hold every event once: {verdict}, expected {expected}")
        figures["chain_checked"] = float(verdict.checked)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.bench_audit", description=__doc__)
    parser.add_argument("--producers", type=int, default=100, help="concurrent producers (default 100)")
    parser.add_argument("--events", type=int, default=5000, help="single-event requests (default 5000)")
    parser.add_argument("--batches", type=int, default=400, help="batch requests (default 400)")
    parser.add_argument("--batch", type=int, default=50, help="envelopes per batch (default 50)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    figures = eventloop.run(measure(args.producers, args.events, args.batches, args.batch))
    print(json.dumps(figures) if args.json else report(figures, TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
