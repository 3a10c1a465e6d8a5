"""The session runtime (seed 002) through the real runtime: sessions saved by the released runtime —
and by this one — resume from each source of seed 002's restore order and are written back as
``session_runtime_v2``; the terminal state is persisted before it is announced; the task projection
reaches ``GetSessionState`` and the uploaded history; a task that keeps repeating itself is warned,
then stopped.

The golden files are described in tests/agent_runtime/agent_host/session_runtime/test_restore_golden.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.session_runtime import SessionRuntimeSnapshot
from tests.integration.runtime.harness import Backend, Launch, open_session, tool_call

GOLDEN = Path(__file__).parents[2] / "agent_runtime" / "agent_host" / "session_runtime" / "golden"
LEGACY = (
    "sess_f4be0c10ceb44ea7a44e0921ba7c382b",
    "ws_c00aa735bf2751532b34d8bd59d6f08d",
    "/tmp/tmp89x8njo7/project",
)
V2 = ("sess_90b99e63922248c7ae7e5293a21cf0ec", "/tmp/tmp5rpcmeo4/project")

# source → (the golden checkpoint, the golden event log) put in place of the session's own
SOURCES: dict[str, tuple[str | None, str | None]] = {
    "checkpoint": ("v2_checkpoint.json", None),
    "snapshot_event": (None, "v2_events.jsonl"),
    "legacy_checkpoint": ("legacy_checkpoint_v1.json", None),
    "legacy_snapshot_event": (None, "legacy_snapshot_events.jsonl"),
    "event_log": (None, "legacy_events.jsonl"),
}


def golden_ids(name: str) -> tuple[str, str, str]:
    if name.startswith("v2"):
        workspace_id = json.loads((GOLDEN / "v2_checkpoint.json").read_bytes())["workspaceId"]
        return V2[0], workspace_id, V2[1]
    return LEGACY


def adopt(name: str, session_id: str, workspace_id: str, workspace: Path, fresh: dict[str, Any]) -> str:
    """The golden file as if written for the session the backend holds now."""
    text = (GOLDEN / name).read_text()
    old_session, old_workspace, old_path = golden_ids(name)
    text = text.replace(old_session, session_id).replace(old_workspace, workspace_id)
    text = text.replace(old_path, str(workspace))
    for key in ("tenantId", "userId"):
        text = text.replace(f'"{key}":"local"', f'"{key}":"{fresh[key]}"')
        text = text.replace(f'"{key}":"root"', f'"{key}":"{fresh[key]}"')
    return text


@pytest.mark.parametrize("source", list(SOURCES))
async def test_a_saved_session_resumes_from_each_source_and_is_written_back_as_v2(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path, source: str
) -> None:
    checkpoint_name, log_name = SOURCES[source]
    async with ScriptedGateway([{"text": "Next done."}]) as gateway:
        first = await open_session(launch, gateway.url, backend, workspace, label="the session")
        session_id, workspace_id = first.session_id or "", first.workspace_id or ""
        await first.kill()
        checkpoint = data_dir / "checkpoints" / f"{session_id}.json"
        log = data_dir / "logs" / f"{session_id}.events.jsonl"
        fresh = json.loads(checkpoint.read_bytes())
        checkpoint.unlink()
        log.unlink()
        if checkpoint_name is not None:
            checkpoint.write_text(adopt(checkpoint_name, session_id, workspace_id, workspace, fresh))
        if log_name is not None:
            log.write_text(adopt(log_name, session_id, workspace_id, workspace, fresh))

        second = await launch(gateway.url, label=f"resumed from the {source}")
        resumed = await second.resume(session_id)
        written_back = SessionRuntimeSnapshot.model_validate_json(checkpoint.read_bytes())
        end = await second.run_task("And now the next thing", task_id="task_2")
        gateway.assert_done()
        sent = json.dumps(gateway.requests[0].body)
        after = SessionRuntimeSnapshot.model_validate_json(checkpoint.read_bytes())

    assert resumed["sessionStatus"] == "SESSION_RUNNING"
    # The finished task is shown as it ended; it is not reopened.
    assert resumed["task"]["taskId"] == "task_1"
    assert resumed["task"]["status"] == "TASK_COMPLETED"
    assert second.find("step_started", where=lambda event: event.get("taskId") == "task_1") == []
    # Written back as session_runtime_v2 at once, whatever it was read from.
    assert written_back.snapshot_schema == "session_runtime_v2"
    assert [m.content for m in written_back.transcript.messages][-1] == "Wrote a.txt."
    # The earlier conversation goes on: the model sees it.
    assert "Wrote a.txt." in sent
    assert end["eventType"] == "task_completed", end
    assert after.loop.task_count == 2
    assert after.loop.task is not None
    assert after.loop.task.task_id == "task_2"


async def test_the_terminal_state_is_persisted_before_the_terminal_event(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path
) -> None:
    script = [
        {"toolCalls": [tool_call("WriteFile", "w1", path=str(workspace / "a.txt"), content="a")]},
        {"text": "Wrote a."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        await rt.run_task("Write a")
        state = await rt.state()
        history = await backend.session_history(rt.workspace_id or "", rt.session_id or "")
        await rt.shutdown()
        log = (data_dir / "logs" / f"{rt.session_id}.events.jsonl").read_text()
        lines = [json.loads(line) for line in log.splitlines()]

    kinds = [line["eventType"] for line in lines]
    ended = kinds.index("task_completed")
    snapshots = [i for i, kind in enumerate(kinds) if kind == "conversation_snapshot"]
    last_before = max(i for i in snapshots if i < ended)
    saved = SessionRuntimeSnapshot.model_validate_json(json.dumps(lines[last_before]["payload"]))
    assert saved.loop.task is not None
    assert saved.loop.task.status.value == "completed"
    # Never sent to the desktop: the log only.
    assert rt.find("conversation_snapshot") == []
    projection = state["projection"]
    assert projection["lifetimeTurns"] == 2
    assert projection["continuationCount"] == 0
    assert projection["compactionCount"] == 0
    assert projection["noProgressStreak"] == 0
    assert isinstance(projection["lastLoopFingerprint"], str)
    assert projection["sessionTokensUsed"] == state["sessionTokensUsed"]
    assert history is not None
    assert history.projection is not None
    assert history.projection.lifetime_turns == 2


async def test_a_task_that_repeats_itself_is_warned_then_stopped(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path
) -> None:
    (workspace / "a.txt").write_text("a")
    (workspace / "b.txt").write_text("b")
    # A, B, A, B…: never the same call twice in a row, so the runaway guard does not see it.
    script = [
        {
            "toolCalls": [
                tool_call("ReadFile", f"r{i}", path=str(workspace / ("a.txt" if i % 2 == 0 else "b.txt")))
            ]
        }
        for i in range(8)
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        end = await rt.run_task("Look around", maxSteps=20)
        state = await rt.state()
        bodies = [json.dumps(request.body) for request in gateway.requests]

    assert end["eventType"] == "task_failed", end
    assert end["payload"]["reason"] == "no_progress"
    assert end["payload"]["stepCount"] == 8
    # Steps 1–2 new, 3–8 repeat them: the model is told after the third repeat (step 5), in step 6.
    assert all("repeated earlier steps" not in body for body in bodies[:5])
    assert "repeated earlier steps" in bodies[5]
    assert state["projection"]["noProgressStreak"] == 6
