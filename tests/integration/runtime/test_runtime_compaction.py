"""Compaction end to end (seed 000 §5.4 Phase 2): a scripted session outgrows a small input window;
the runtime summarises the oldest turns with one extra model call and sends the summary in their
place — or, when that call fails, drops them behind the Phase 1 marker.

The backend's policy has a small ``maxInputTokens`` (its ``default.toml``); each ReadFile result is
about a thousand tokens, so the fourth step's request no longer fits.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.scripted_gateway import ScriptedGateway
from tests.integration.runtime.harness import Backend, Launch, open_session, start_backend, tool_call

SUMMARY_MARK = "You compact a conversation"
SUMMARY_TEXT = "SUMMARY-OF-OLD-TURNS: the user wants the four notes read; note 1 says fact-one."
TRUNCATION = "[Earlier conversation truncated"


def note(n: int) -> str:
    return f"fact-{n} " + " ".join(f"word{n}x{i}" for i in range(450)) + "\n"


@pytest.fixture(scope="module")
def small_window_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    config = tmp_path_factory.mktemp("small-window")
    (config / "default.toml").write_text(
        "[llmPolicy]\n"
        'allowedModels = ["*"]\n'
        "maxInputTokens = 9000\n"
        "maxOutputTokens = 4000\n"
        "maxSessionTokens = 10000000\n"
    )
    with start_backend(tmp_path_factory.mktemp("small-window-backend"), config_dir=config) as running:
        yield running


def is_summary_request(body: dict[str, Any]) -> bool:
    return SUMMARY_MARK in json.dumps(body.get("system", ""))


class Responder:
    """Four ReadFile steps and a final answer; the summary request (told by its system prompt) gets
    ``summary`` — a turn — whenever it comes."""

    def __init__(self, workspace: Path, summary: dict[str, Any]) -> None:
        self.turns = [
            {"toolCalls": [tool_call("ReadFile", f"call_read_{n}", path=str(workspace / f"note{n}.txt"))]}
            for n in range(1, 5)
        ] + [{"text": "All four notes read."}]
        self.summary = summary

    def __call__(self, dialect: Any, body: dict[str, Any]) -> dict[str, Any] | None:
        if is_summary_request(body):
            return self.summary
        return self.turns.pop(0) if self.turns else None


def texts(body: dict[str, Any]) -> str:
    return json.dumps(body.get("messages", []), ensure_ascii=False)


async def run_session(
    launch: Launch, backend: Backend, workspace: Path, summary: dict[str, Any]
) -> tuple[Any, list[dict[str, Any]], dict[str, Any]]:
    for n in range(1, 5):
        (workspace / f"note{n}.txt").write_text(note(n))
    async with ScriptedGateway(None, responder=Responder(workspace, summary)) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        end = await rt.run_task("Read my four notes", maxSteps=10)
        bodies = [request.body for request in gateway.requests]
    return rt, bodies, end


async def test_a_session_past_the_window_is_summarised_and_goes_on_with_the_summary(
    launch: Launch, small_window_backend: Backend, workspace: Path
) -> None:
    rt, bodies, end = await run_session(launch, small_window_backend, workspace, {"text": SUMMARY_TEXT})
    assert end["eventType"] == "task_completed", end

    summaries = [i for i, body in enumerate(bodies) if is_summary_request(body)]
    assert summaries, "no summary request reached the gateway"
    first = summaries[0]
    request = bodies[first]
    # The summary request: the fixed instruction, no tools, the oldest turns as text — the user's
    # prompt and the first ReadFile call with its result.
    assert not request.get("tools")
    asked = texts(request)
    assert "Read my four notes" in asked
    assert "[tool call ReadFile call_read_1]" in asked
    assert "[tool result ReadFile call_read_1 (succeeded)]" in asked
    assert "fact-1" in asked
    assert "fact-4" not in asked

    # The request right after: the summary block in place of the summarised turns.
    resumed = texts(bodies[first + 1])
    assert SUMMARY_TEXT in resumed
    assert "[Summary of the earlier conversation" in resumed
    assert "fact-1" not in resumed  # the old turn itself is no longer sent
    assert "call_read_1" not in resumed  # its call went with its result
    assert TRUNCATION not in resumed
    assert "fact-3" in resumed  # the recent turns are still there

    # The marker the user sees, and the count.
    compacted = rt.find("context_compacted")
    assert compacted, rt.types()
    assert compacted[0]["payload"]["mode"] == "summarized"
    assert compacted[0]["payload"]["compactionCount"] == 1
    assert compacted[0]["payload"]["messages"] >= 3
    assert rt.types().index("context_compacted") < len(rt.types())
    assert all(not is_summary_request(b) or not b.get("tools") for b in bodies)


async def test_when_the_summary_call_fails_the_oldest_turns_are_dropped_behind_the_marker(
    launch: Launch, small_window_backend: Backend, workspace: Path
) -> None:
    rt, bodies, end = await run_session(
        launch,
        small_window_backend,
        workspace,
        {"kind": "error", "status": 400, "message": "summaries are not served here"},
    )
    assert end["eventType"] == "task_completed", end
    summaries = [i for i, body in enumerate(bodies) if is_summary_request(body)]
    assert len(summaries) == 1  # not tried again in the same task
    after = texts(bodies[summaries[0] + 1])
    assert TRUNCATION in after
    assert "fact-1" not in after
    assert "fact-3" in after

    compacted = rt.find("context_compacted")
    assert [event["payload"]["mode"] for event in compacted] == ["truncated"]
    assert "summary call failed" in compacted[0]["payload"]["reason"]
    assert compacted[0]["payload"]["compactionCount"] == 0
