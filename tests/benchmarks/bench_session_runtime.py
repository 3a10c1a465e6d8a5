"""Benchmarks of the session runtime (seed 002), one section per part; ``main`` runs every section.

**Prompt cache** (:func:`measure_prefix_stability`): the real runtime against the real local backend
and the scripted gateway (whose model of the provider's prompt cache reports reads), a ``--steps``-step
scripted session — each step one ``ReadFile`` — split into two tasks, the second without network
access, so the tool set changes once, between them. From the runtime's ``llm_request_started`` events:
the share of LLM requests whose stable prefix hash equals the previous request's, counted between tool
changes (the target is 100 %), and the same share over every request; from the gateway: the share of
requests that read the prompt cache and the share of input tokens read from it.

**Snapshots** (:func:`measure_snapshots`): on a ``--messages``-message thread of realistic messages,
the ``session_runtime_v2`` checkpoint write the loop does after every step — capture every bucket,
encode (each message's JSON reused from the previous write), write, fsync, rename — each write two
messages longer than the last, as a step makes it (target ≤ 15 ms); and the restore of each source of
seed 002's order — find the source, read and check it, rebuild the thread (the real tokenizer counts
every message, but for a v2 source whose counts were made with the same encoding), and take the buckets
back — each with the same thread (target ≤ 50 ms).

Run: ``.venv/bin/python -m tests.benchmarks.bench_session_runtime`` (``--help`` for sizes). Prints a
table.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from agent_runtime.agent_host.session_runtime.machine import SessionMachine
from agent_runtime.agent_host.session_runtime.persist import save_snapshot
from agent_runtime.agent_host.session_runtime.restore import RestorePoint, find_restore_point
from agent_runtime.agent_host.session_runtime.runtime import SessionRuntime, Transcript
from agent_runtime.agent_host.state import CheckpointStore, serialize_checkpoint
from agent_runtime.agent_host.thread import ConversationThread, TiktokenTokenizer, TokenBudget
from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.enums import Role, SessionStatus, ToolStatus
from contracts.ipc import eventloop
from contracts.messages import ConversationMessage
from contracts.tools import ToolCall
from tests.agent_runtime.agent_host.state.samples import START, sample_checkpoint
from tests.benchmarks.figures import Targets, report
from tests.integration.runtime.harness import Runtime, runtime_environment, start_backend

TARGETS: Targets = {
    # ------------------------------------------------------------------ prompt cache
    "prefix_same_between_changes_pct": (
        "requests whose prefix hash equals the previous one's, between tool changes",
        "%",
        ">=",
        100.0,
    ),
    "prefix_same_all_pct": ("  the same over every request (tool changes included)", "%", None, None),
    "prefix_tool_changes": ("  tool-set changes in the session", "", None, None),
    "cache_read_requests_pct": ("requests that read the prompt cache (gateway's model)", "%", None, None),
    "cache_read_input_pct": ("input tokens read from the prompt cache", "%", None, None),
    # ------------------------------------------------------------------ snapshots
    "v2_write_p50_ms": ("checkpoint v2 write (fsync included), median", "ms", "<=", 15.0),
    "v2_write_kb": ("  checkpoint v2 file size", "KiB", None, None),
    "restore_checkpoint_p50_ms": ("restore: v2 checkpoint, median", "ms", "<=", 50.0),
    "restore_snapshot_event_p50_ms": ("restore: latest v2 snapshot event, median", "ms", "<=", 50.0),
    "restore_legacy_checkpoint_p50_ms": ("restore: legacy 1.0 checkpoint, median", "ms", "<=", 50.0),
    "restore_legacy_snapshot_event_p50_ms": ("restore: legacy snapshot event, median", "ms", "<=", 50.0),
    "restore_event_log_p50_ms": ("restore: rebuilt from the event log, median", "ms", "<=", 50.0),
}

SESSION = "sess_bench"
WORKSPACE = "ws_456"
RESTORE_SOURCES = ("checkpoint", "snapshot_event", "legacy_checkpoint", "legacy_snapshot_event", "event_log")


# ---------------------------------------------------------------------------------- prompt cache


def _reading_turns(target: Path, steps: int, tag: str) -> list[dict[str, Any]]:
    """``steps`` LLM turns: ``steps - 1`` ReadFile calls (each distinct, so the runaway guard lets
    them be), then a final answer."""
    turns: list[dict[str, Any]] = [
        {
            "toolCalls": [
                {"id": f"{tag}_{i}", "name": "ReadFile", "arguments": {"path": str(target), "limit": i + 1}}
            ]
        }
        for i in range(steps - 1)
    ]
    turns.append({"text": "Done."})
    return turns


async def measure_prefix_stability(steps: int) -> dict[str, float]:
    """See the module docstring, "Prompt cache"."""
    first_steps = max(2, steps // 2)
    second_steps = max(2, steps - first_steps)
    with tempfile.TemporaryDirectory(prefix="cowork-bench-") as scratch:
        root = Path(scratch).resolve()
        workspace = root / "project"
        workspace.mkdir()
        target = workspace / "small.txt"
        target.write_text("hello\n" * 10)
        script = _reading_turns(target, first_steps, "a") + _reading_turns(target, second_steps, "b")
        with start_backend(root / "backend") as backend:
            async with ScriptedGateway(script) as gateway:
                runtime = await Runtime.launch(runtime_environment(backend, gateway.url, root / "data"))
                try:
                    await runtime.create_session(backend, workspace)
                    for task_id, count, network in (
                        ("task_1", first_steps, True),
                        ("task_2", second_steps, False),
                    ):
                        await runtime.start_task(
                            "Read the file again and again",
                            task_id=task_id,
                            maxSteps=count * 2,
                            allowNetwork=network,
                        )
                        end = await runtime.task_end(task_id, timeout=120)
                        assert end["eventType"] == "task_completed", end
                    hashes = [
                        str(e["payload"]["stablePrefixHash"]) for e in runtime.find("llm_request_started")
                    ]
                    usage = [e["payload"] for e in runtime.find("llm_request_completed")]
                finally:
                    await runtime.aclose()
                gateway.assert_done()
    pairs = [before == after for before, after in itertools.pairwise(hashes)]
    # The pair that straddles the two tasks is the one tool change; every other pair lies between
    # tool changes and should keep the prefix.
    boundary = first_steps - 1
    between = [same for index, same in enumerate(pairs) if index != boundary]
    read = sum(int(p.get("cacheReadTokens") or 0) for p in usage)
    prompt = read + sum(int(p["inputTokens"]) + int(p.get("cacheWriteTokens") or 0) for p in usage)
    return {
        "prefix_same_between_changes_pct": 100.0 * sum(between) / max(1, len(between)),
        "prefix_same_all_pct": 100.0 * sum(pairs) / max(1, len(pairs)),
        "prefix_tool_changes": float(len(pairs) - sum(pairs)),
        "cache_read_requests_pct": 100.0
        * sum(1 for p in usage if (p.get("cacheReadTokens") or 0) > 0)
        / max(1, len(usage)),
        "cache_read_input_pct": 100.0 * read / max(1, prompt),
    }


# ---------------------------------------------------------------------------------- snapshots


def _thread(count: int) -> list[ConversationMessage]:
    """A user prompt, then steps of an assistant turn with a tool call and its result (each message
    ~300–2,000 characters, as in the checkpoint benchmark's threads)."""
    rng = random.Random(7)
    words = [
        *("the", "API", "client", "returns", "a", "response", "body", "with"),
        *("headers", "and", "a", "status", "line", "to", "parse"),
    ]

    def text() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(50, 330)))

    messages = [
        ConversationMessage(
            message_id="msg_0",
            session_id=SESSION,
            task_id="task_001",
            role=Role.USER,
            content=text(),
            timestamp=START,
        )
    ]
    step = 0
    while len(messages) < count:
        step += 1
        call = ToolCall(
            tool_call_id=f"call_{step}", tool_name="ReadFile", arguments={"path": f"src/f{step}.py"}
        )
        stamp = START + timedelta(seconds=step)
        step_id = f"step_{step:04d}"
        messages.append(
            ConversationMessage(
                message_id=f"msg_{step}a",
                session_id=SESSION,
                task_id="task_001",
                step_id=step_id,
                role=Role.ASSISTANT,
                content=text(),
                timestamp=stamp,
                tool_calls=[call],
            )
        )
        messages.append(
            ConversationMessage(
                message_id=f"msg_{step}t",
                session_id=SESSION,
                task_id="task_001",
                step_id=step_id,
                role=Role.TOOL,
                content=text(),
                timestamp=stamp,
                tool_call_id=call.tool_call_id,
                tool_name="ReadFile",
                tool_status=ToolStatus.SUCCEEDED,
            )
        )
    return messages


def _runtime(messages: list[ConversationMessage], tokenizer: TiktokenTokenizer) -> SessionRuntime:
    thread = ConversationThread.restore(
        messages, session_id=SESSION, tokenizer=tokenizer, budget=TokenBudget(10_000_000)
    )
    return SessionRuntime(
        session_id=SESSION,
        workspace_id=WORKSPACE,
        tenant_id="tenant_abc",
        user_id="user_123",
        workspace_paths=("/work/project",),
        machine=SessionMachine(SessionStatus.SESSION_RUNNING),
        transcript=Transcript(thread),
    )


def _event(kind: str, payload: dict[str, Any], step: int | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {
        "eventId": f"evt_{kind}_{step}",
        "eventType": kind,
        "timestamp": (START + timedelta(seconds=step or 0)).isoformat().replace("+00:00", "Z"),
        "workspaceId": WORKSPACE,
        "sessionId": SESSION,
        "taskId": "task_001",
        "payload": payload,
    }
    if step is not None:
        event["stepId"] = f"step_{step:04d}"
    return event


def _event_log(messages: list[ConversationMessage]) -> list[dict[str, Any]]:
    """The events a session of ``messages`` leaves: per step its text chunks, tool outcomes and end."""
    started = {"maxSteps": 10_000, "approvalMode": "on_risky_actions", "prompt": "Go"}
    events = [_event("task_started", started)]
    step = 0
    for message in messages:
        if message.role is Role.ASSISTANT:
            step += 1
            events.append(_event("llm_request_started", {"model": "m", "estimatedInputTokens": 1}, step))
            events.append(_event("text_chunk", {"text": message.content}, step))
        elif message.role is Role.TOOL:
            outcome = {"toolName": "ReadFile", "status": "succeeded", "outputPreview": message.content[:200]}
            events.append(_event("tool_completed", outcome, step))
            events.append(_event("step_completed", {"stepId": f"step_{step:04d}", "stepCount": step}, step))
    return events


def _place(
    directory: Path, source: str, runtime: SessionRuntime, messages: list[ConversationMessage]
) -> None:
    """Only ``source`` exists for the session under ``directory``."""
    logs = directory / "logs"
    logs.mkdir(parents=True)
    store = CheckpointStore(directory / "checkpoints")
    snapshot = runtime.snapshot(now=START, policy_bundle_version="2026-02-21.1")
    if source == "checkpoint":
        store.write(snapshot)
    elif source == "legacy_checkpoint":
        legacy = sample_checkpoint(SESSION)
        store.write(legacy.model_copy(update={"thread": messages, "workspace_id": WORKSPACE}))
    lines = [json.dumps(event) for event in _event_log(messages)]
    if source == "snapshot_event":
        event = _event("conversation_snapshot", {"schema": "session_runtime_v2"})
        event["payload"] = json.loads(serialize_checkpoint(snapshot))
        lines.append(json.dumps(event))
    elif source == "legacy_snapshot_event":
        history = [message.to_wire() for message in messages]
        lines.append(json.dumps(_event("conversation_snapshot", {"conversationHistory": history})))
    if source in ("snapshot_event", "legacy_snapshot_event", "event_log"):
        (logs / f"{SESSION}.events.jsonl").write_text("\n".join(lines) + "\n")


def _restore(directory: Path, tokenizer: TiktokenTokenizer) -> SessionRuntime:
    """What ``ResumeSession`` does with the files (the backend's part aside)."""
    point = find_restore_point(
        CheckpointStore(directory / "checkpoints"), directory / "logs" / f"{SESSION}.events.jsonl", SESSION
    )
    assert isinstance(point, RestorePoint)
    snapshot = point.complete(
        tenant_id="tenant_abc",
        workspace_id=WORKSPACE,
        user_id="user_123",
        policy_bundle_version="v1",
        now=START,
    )
    messages = snapshot.transcript.messages
    thread = ConversationThread.restore(
        messages,
        session_id=SESSION,
        tokenizer=tokenizer,
        budget=TokenBudget(10_000_000, used=snapshot.transcript.session_tokens_used),
        messages_session_id=frozenset({SESSION, *(m.session_id for m in messages)}),
        counted_with=snapshot.transcript.counted_with,
    )
    runtime = _runtime([], tokenizer)
    runtime.transcript = Transcript(thread)
    runtime.take_buckets(snapshot)
    return runtime


def measure_snapshots(messages: int, writes: int, runs: int) -> dict[str, float]:
    """See the module docstring, "Snapshots"."""
    tokenizer = TiktokenTokenizer()
    tokenizer.start_loading()
    thread = _thread(messages + 2 * writes)
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="cowork-bench-") as scratch:
        root = Path(scratch)
        runtime = _runtime(thread[:messages], tokenizer)
        store = CheckpointStore(root / "write" / "checkpoints")
        save_snapshot(runtime, store, None, now=START, policy_bundle_version="v1")
        samples = []
        for index in range(writes):
            # A step's two new messages, added as the loop adds them (already counted).
            for message in thread[messages + 2 * index : messages + 2 * index + 2]:
                runtime.thread._append(message, 10)
            started = time.perf_counter()
            save_snapshot(runtime, store, None, now=START, policy_bundle_version="v1")
            samples.append(time.perf_counter() - started)
        figures["v2_write_p50_ms"] = statistics.median(samples) * 1e3
        figures["v2_write_kb"] = store.path_for(SESSION).stat().st_size / 1024
        base = _runtime(thread[:messages], tokenizer)
        for source in RESTORE_SOURCES:
            directory = root / source
            _place(directory, source, base, thread[:messages])
            restored = _restore(directory, tokenizer)
            assert len(restored.thread) >= messages // 2, (source, len(restored.thread))
            timings = []
            for _ in range(runs):
                started = time.perf_counter()
                _restore(directory, tokenizer)
                timings.append(time.perf_counter() - started)
            figures[f"restore_{source}_p50_ms"] = statistics.median(timings) * 1e3
    return figures


# ---------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=50, help="LLM steps of the prompt-cache session")
    parser.add_argument("--messages", type=int, default=1_000, help="messages in the snapshots' thread")
    parser.add_argument("--writes", type=int, default=50, help="checkpoint writes measured")
    parser.add_argument("--runs", type=int, default=10, help="restores measured per source")
    args = parser.parse_args(argv)
    print(
        f"Cowork session runtime benchmark: a {args.steps}-step scripted session;"
        f" snapshots of a {args.messages}-message thread"
    )
    figures = eventloop.run(measure_prefix_stability(args.steps))
    figures |= measure_snapshots(args.messages, args.writes, args.runs)
    print(report(figures, TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
