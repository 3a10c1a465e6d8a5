"""What making a step durable costs: a whole checkpoint versus a record in the step journal.

A task's steps make their state durable twice each when a tool with side effects runs (before the
tools and after them) and once otherwise; each time either the whole checkpoint is replaced (encode,
new file, fsync, rename, fsync the directory) or a record is appended to the step journal and
fdatasynced (``CheckpointStore.write_step``). On a ``session_runtime_v2`` snapshot with
``--messages`` messages (realistic sizes), each write bringing one new message as a step does, the two
are timed in alternation so that a busy machine weighs on both alike; medians. Loading a checkpoint
with a journal behind it (after a crash) is timed too.

Run: ``.venv/bin/python -m tests.benchmarks.bench_step_journal`` (``--help`` for sizes).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agent_runtime.agent_host.state import CheckpointStore
from contracts.session_runtime import SessionRuntimeSnapshot
from tests.agent_runtime.agent_host.state.samples import thread_messages
from tests.benchmarks.figures import Targets, report

GOLDEN = (
    Path(__file__).parents[1]
    / "agent_runtime"
    / "agent_host"
    / "session_runtime"
    / "golden"
    / "v2_checkpoint.json"
)

TARGETS: Targets = {
    "full_small_ms": ("whole checkpoint write, 20-message thread, median", "ms", None, None),
    "journal_small_ms": ("  journal record instead, median", "ms", None, None),
    "full_large_ms": ("whole checkpoint write, --messages thread, median", "ms", None, None),
    "journal_large_ms": ("  journal record instead, median", "ms", None, None),
    "load_journal_ms": ("load: checkpoint plus journal (--messages thread), median", "ms", None, None),
}


def snapshot_with(messages: int) -> SessionRuntimeSnapshot:
    base = SessionRuntimeSnapshot.model_validate_json(GOLDEN.read_bytes())
    thread = [
        message.model_copy(update={"session_id": base.session_id})
        for message in thread_messages(base.session_id, messages)
    ]
    return base.model_copy(update={"transcript": base.transcript.model_copy(update={"messages": thread})})


def one_more(snapshot: SessionRuntimeSnapshot, step: int) -> SessionRuntimeSnapshot:
    """The snapshot a step later: its newest message once more, as a new object."""
    messages = snapshot.transcript.messages
    added = messages[-1].model_copy(update={"message_id": f"msg_step_{step}"})
    transcript = snapshot.transcript.model_copy(
        update={"messages": [*messages, added], "session_tokens_used": step}
    )
    return snapshot.model_copy(update={"transcript": transcript})


def measure(messages: int, steps: int, directory: Path) -> tuple[list[float], list[float]]:
    """Times of full writes and of journal records, ``steps`` each, in alternation (seconds)."""
    full_store = CheckpointStore(directory / "full")
    journal_store = CheckpointStore(directory / "journal")
    full = journal = snapshot_with(messages)
    full_store.write(full)
    journal_store.write(journal)
    full_times: list[float] = []
    journal_times: list[float] = []
    for step in range(steps):
        full = one_more(full, step)
        started = time.perf_counter()
        full_store.write(full)
        full_times.append(time.perf_counter() - started)
        journal = one_more(journal, step)
        started = time.perf_counter()
        if journal_store.write_step(journal):
            continue  # folded into a new checkpoint: counted as what it is, a full write
        journal_times.append(time.perf_counter() - started)
    return full_times, journal_times


def measure_load(messages: int, steps: int, directory: Path) -> list[float]:
    store = CheckpointStore(directory / "load")
    snapshot = snapshot_with(messages)
    store.write(snapshot)
    for step in range(steps):
        snapshot = one_more(snapshot, step)
        store.write_step(snapshot)
    times = []
    for _ in range(10):
        started = time.perf_counter()
        loaded = CheckpointStore(store.directory).load(snapshot.session_id)
        times.append(time.perf_counter() - started)
        assert loaded == snapshot
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=1_000, help="messages of the large thread")
    parser.add_argument("--steps", type=int, default=40, help="writes measured of each kind")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        small_full, small_journal = measure(20, args.steps, root / "small")
        large_full, large_journal = measure(args.messages, args.steps, root / "large")
        load = measure_load(args.messages, 10, root)
    figures = {
        "full_small_ms": statistics.median(small_full) * 1e3,
        "journal_small_ms": statistics.median(small_journal) * 1e3,
        "full_large_ms": statistics.median(large_full) * 1e3,
        "journal_large_ms": statistics.median(large_journal) * 1e3,
        "load_journal_ms": statistics.median(load) * 1e3,
    }
    print(f"Step durability: whole checkpoint vs step journal, {args.steps} writes each")
    print(report(figures, TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
