"""Benchmark of the Local State Store's checkpoint write (seed 000 §9.3) and the event emitter (§12).

A checkpoint is written after every step, synchronously, so its cost is added to every step. Measures,
on a ``--messages``-message thread of realistic messages (user prompts, assistant turns with tool
calls, tool results; ~300–2,000 characters each), where each write brings two new messages as a step
does:

* the whole write — encode, write, fsync the file, rename, fsync the directory — the figure with the
  target;
* its two halves on their own: encoding (with and without reusing each message's JSON from the
  previous write) and the two fsyncs;
* the same write with nothing reused (the first write after a restart), reading a checkpoint back,
  and the file's size;
* ``EventEmitter.emit`` of a text chunk — called for every chunk the LLM streams.

Run: ``.venv/bin/python -m tests.benchmarks.bench_checkpoint`` (``--help`` for sizes). Prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agent_runtime.agent_host.events import EventEmitter
from agent_runtime.agent_host.state import CheckpointEncoder, CheckpointStore, serialize_checkpoint
from agent_runtime.agent_host.state.files import fsync_directory
from contracts.checkpoint import Checkpoint
from contracts.events import EventType
from tests.agent_runtime.agent_host.state.samples import sample_checkpoint
from tests.benchmarks.figures import Targets, report

TARGETS: Targets = {
    "write_p50_ms": ("checkpoint write (fsync included), median", "ms", "<=", 15.0),
    "encode_cached_p50_ms": ("  serialise, message JSON reused, median", "ms", None, None),
    "fsync_p50_ms": ("  fsync file + directory only, median", "ms", None, None),
    "serialize_p50_ms": ("serialise, whole checkpoint by pydantic, median", "ms", None, None),
    "write_cold_p50_ms": ("checkpoint write, nothing reused (first after restart)", "ms", None, None),
    "load_p50_ms": ("checkpoint load (read + validate), median", "ms", None, None),
    "file_kb": ("checkpoint file size", "KiB", None, None),
    "emit_p50_us": ("EventEmitter.emit of a text chunk, median per call", "µs", None, None),
}


def step_checkpoints(base: Checkpoint, count: int) -> list[Checkpoint]:
    """``count`` checkpoints of the same thread whose two newest messages are new objects each time."""
    thread = base.thread
    return [
        base.model_copy(
            update={
                "thread": [*thread[:-2], *(message.model_copy() for message in thread[-2:])],
                "session_tokens_used": index,
            }
        )
        for index in range(count)
    ]


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


def timed(action: Callable[..., object], *args: object) -> float:
    started = time.perf_counter()
    action(*args)
    return time.perf_counter() - started


def measure_checkpoint(messages: int, writes: int, directory: Path) -> dict[str, float]:
    base = sample_checkpoint("sess_bench", messages=messages)
    checkpoints = step_checkpoints(base, writes)
    store = CheckpointStore(directory / "checkpoints")
    store.write(base)  # the previous step's checkpoint: its messages' JSON is what gets reused
    write = [timed(store.write, checkpoint) for checkpoint in checkpoints]
    encoder = CheckpointEncoder()
    encoder.encode(base)
    encode_cached = [timed(encoder.encode, checkpoint) for checkpoint in checkpoints]
    serialize = [timed(serialize_checkpoint, checkpoint) for checkpoint in checkpoints]
    cold: list[float] = []
    for checkpoint in checkpoints:
        fresh = CheckpointStore(store.directory)
        cold.append(timed(fresh.write, checkpoint))
    fsyncs = measure_fsync(serialize_checkpoint(base), directory, writes)
    load = [timed(store.load, "sess_bench") for _ in range(max(3, writes // 5))]
    return {
        "write_p50_ms": median_ms(write),
        "encode_cached_p50_ms": median_ms(encode_cached),
        "fsync_p50_ms": median_ms(fsyncs),
        "serialize_p50_ms": median_ms(serialize),
        "write_cold_p50_ms": median_ms(cold),
        "load_p50_ms": median_ms(load),
        "file_kb": store.path_for("sess_bench").stat().st_size / 1024,
    }


def measure_fsync(data: bytes, directory: Path, count: int) -> list[float]:
    """The durable part alone: fsync of a freshly written file of the checkpoint's size, then of its
    directory (as ``replace_file`` does after the rename)."""
    samples: list[float] = []
    path = directory / "fsync-probe.bin"
    for _ in range(count):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, data)
            started = time.perf_counter()
            os.fsync(fd)
            fsync_directory(directory)
            samples.append(time.perf_counter() - started)
        finally:
            os.close(fd)
    path.unlink()
    return samples


async def measure_emit(events: int, directory: Path) -> float:
    async def desktop(method: str, params: object) -> None:
        del method, params

    emitter = EventEmitter(
        workspace_id="ws_bench",
        session_id="sess_bench",
        notify=desktop,
        log_path=directory / "logs" / "sess_bench.events.jsonl",
    )
    samples: list[float] = []
    text = "The retry logic needs a bounded backoff. "
    for index in range(events):
        started = time.perf_counter()
        emitter.emit(EventType.TEXT_CHUNK, {"text": text}, task_id="task_001", step_id=f"step_{index // 50}")
        samples.append(time.perf_counter() - started)
        if index % 100 == 99:
            await emitter.drain()  # as in a real stream: the sinks keep up between chunks
    await emitter.aclose()
    return statistics.median(samples) * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=1_000, help="messages in the checkpoint's thread")
    parser.add_argument("--writes", type=int, default=50, help="checkpoint writes measured")
    parser.add_argument("--events", type=int, default=5_000, help="text-chunk events emitted")
    args = parser.parse_args(argv)
    print(f"Cowork checkpoint benchmark: {args.messages}-message thread, {args.writes} writes")
    with tempfile.TemporaryDirectory(prefix="cowork-bench-") as scratch:
        figures = measure_checkpoint(args.messages, args.writes, Path(scratch))
        figures["emit_p50_us"] = asyncio.run(measure_emit(args.events, Path(scratch)))
    print(report(figures, TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
