"""Prompt caching through the real runtime (seed 002 "Prompt Cache State"): the stable prefix stays the
same across follow-ups and across ``kill -9`` and resume — the scripted gateway, which models the
provider's cache, reports reads for it — and it changes, with the reason logged, when the tool set or
the model changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.session_runtime import SessionRuntimeSnapshot
from tests.integration.runtime.harness import Backend, Launch, Runtime, open_session, tool_call

LOGS = {"COWORK_LOG_LEVEL": "INFO"}


def prefix_hashes(rt: Runtime) -> list[str]:
    return [str(e["payload"]["stablePrefixHash"]) for e in rt.find("llm_request_started")]


def log_lines(rt: Runtime, event: str) -> list[dict[str, Any]]:
    """The runtime's JSON log lines of one structured ``event``."""
    found = []
    for line in rt.output_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("event") == event:
            found.append(record)
    return found


def invalidations(rt: Runtime) -> list[dict[str, Any]]:
    return log_lines(rt, "prompt_cache_invalidated")


def saved(data_dir: Path, session_id: str) -> SessionRuntimeSnapshot:
    return SessionRuntimeSnapshot.model_validate_json(
        (data_dir / "checkpoints" / f"{session_id}.json").read_bytes()
    )


async def test_the_prefix_survives_follow_ups_and_a_kill_9_and_is_read_from_the_cache(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path
) -> None:
    (workspace / "notes.txt").write_text("alpha\n")
    script = [
        {"toolCalls": [tool_call("ReadFile", "r1", path=str(workspace / "notes.txt"))]},
        {"text": "It says alpha."},
        {"text": "Thinking about", "holdAfterChunks": 1},  # task_2's first answer: the crash hits here
        {"text": "Done after the restart."},
    ]
    async with ScriptedGateway(script) as gateway:
        first = await open_session(launch, gateway.url, backend, workspace, extra=LOGS, label="before")
        session_id = first.session_id or ""
        assert (await first.run_task("What does notes.txt say?"))["eventType"] == "task_completed"
        await first.start_task("And again?", task_id="task_2")
        await gateway.wait_for(lambda: len(gateway.requests) == 3 and gateway.requests[2].chunks_sent == 1)
        await first.kill()
        before_crash = saved(data_dir, session_id)

        second = await launch(gateway.url, extra=LOGS, label="after")
        await second.resume(session_id)
        end = await second.task_end("task_2", timeout=30)
        gateway.assert_done()
        requests = gateway.requests
        after_resume = saved(data_dir, session_id)

    assert end["eventType"] == "task_completed", end
    hashes = prefix_hashes(first) + prefix_hashes(second)
    assert len(hashes) == 4
    assert len(set(hashes)) == 1, hashes
    assert before_crash.prompt_cache is not None
    assert before_crash.prompt_cache["stablePrefixHash"] == hashes[0]
    assert after_resume.prompt_cache is not None
    assert after_resume.prompt_cache["stablePrefixHash"] == hashes[0]
    assert after_resume.prompt_cache["invalidationReason"] is None
    assert invalidations(first) == invalidations(second) == []
    assert len(log_lines(second, "llm_output_budget")) == 1  # the log is on: silence means no change
    # The provider's cache (modelled by the gateway) is read by every request after the first,
    # including the first one the new process sends.
    assert requests[0].cache_read_tokens == 0
    assert all(request.cache_read_tokens > 0 for request in requests[1:])
    completed = second.find("llm_request_completed")
    assert completed[-1]["payload"]["cacheReadTokens"] == requests[-1].cache_read_tokens
    # Tokens by kind are kept across the restart and go on adding up.
    assert after_resume.usage is not None
    assert after_resume.usage["cacheReadTokens"] >= sum(r.cache_read_tokens for r in requests[:2])
    assert after_resume.usage["requests"] == 3  # two before the crash, one after (the held one died)


async def test_a_changed_tool_set_changes_the_prefix_and_the_reason_is_logged(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path
) -> None:
    script = [{"text": "First."}, {"text": "Second."}]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace, extra=LOGS)
        assert (await rt.run_task("Hello"))["eventType"] == "task_completed"
        # A task without network access is not offered HttpRequest: another tool set.
        end = await rt.run_task("Offline now", task_id="task_2", allowNetwork=False)
        requests = gateway.requests
        checkpoint = saved(data_dir, rt.session_id or "")

    assert end["eventType"] == "task_completed"
    first_hash, second_hash = prefix_hashes(rt)
    assert first_hash != second_hash
    (logged,) = invalidations(rt)
    assert logged["reason"] == "tool_set_changed"
    assert logged["stablePrefixHash"] == second_hash
    assert checkpoint.prompt_cache is not None
    assert checkpoint.prompt_cache["invalidationReason"] == "tool_set_changed"
    assert requests[1].cache_read_tokens == 0  # the tools come first: nothing of the old prefix is reused


async def test_a_changed_model_after_a_restart_changes_the_prefix_and_the_reason_is_logged(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    async with ScriptedGateway([{"text": "On the first model."}, {"text": "On the second."}]) as gateway:
        first = await open_session(launch, gateway.url, backend, workspace, extra=LOGS)
        assert (await first.run_task("Hello"))["eventType"] == "task_completed"
        await first.kill()
        second = await launch(gateway.url, extra={**LOGS, "LLM_GATEWAY_MODEL": "another-model"})
        await second.resume(first.session_id or "")
        end = await second.run_task("Hello again", task_id="task_2")
        models = [request.body["model"] for request in gateway.requests]

    assert end["eventType"] == "task_completed"
    assert models == ["demo-model", "another-model"]
    assert prefix_hashes(first) != prefix_hashes(second)
    assert invalidations(first) == []
    (logged,) = invalidations(second)
    assert logged["reason"] == "model_changed"
    assert logged["model"] == "another-model"
