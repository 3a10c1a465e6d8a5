"""A hostile model against the real runtime: it cannot write outside the project (by ``..`` or by a
symlink) and the commands it runs never see the runtime's secrets.
"""

from __future__ import annotations

import os
from pathlib import Path

from agent_runtime.scripted_gateway import ScriptedGateway
from tests.integration.runtime.harness import (
    Backend,
    Launch,
    open_session,
    result_text,
    tool_call,
    tool_results,
)

GATEWAY_TOKEN = "gw-token-never-shown-3f9a"


async def test_escapes_from_the_project_are_denied_and_commands_never_see_the_secrets(
    launch: Launch, backend: Backend, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, workspace / "link")
    script = [
        {
            "toolCalls": [
                tool_call("WriteFile", "call_dotdot", path=f"{workspace}/../escape.txt", content="x"),
                tool_call("WriteFile", "call_link", path=str(workspace / "link" / "x.txt"), content="x"),
                tool_call("RunCommand", "call_env", command="env"),
            ]
        },
        {"text": "I tried."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(
            launch, gateway.url, backend, workspace, extra={"LLM_GATEWAY_AUTH_TOKEN": GATEWAY_TOKEN}
        )
        await rt.start_task("Escape")
        asked = await rt.event("approval_requested")
        assert asked["payload"]["details"]["command"] == "env"
        await rt.approve(asked["payload"]["approvalId"])
        end = await rt.task_end("task_1")
        results = {block["tool_use_id"]: block for block in tool_results(gateway.requests[1].body)}
        sent = str([request.body for request in gateway.requests]) + str(
            [r.headers for r in gateway.requests]
        )

    assert end["eventType"] == "task_completed", end
    assert not (tmp_path / "escape.txt").exists()
    assert not (outside / "x.txt").exists()
    assert results["call_dotdot"].get("is_error") is True
    assert results["call_link"].get("is_error") is True
    statuses = {e["payload"]["toolCallId"]: e["payload"]["status"] for e in rt.find("tool_completed")}
    assert statuses["call_link"] in ("denied", "failed")
    assert statuses["call_env"] == "succeeded"
    environment = result_text(results["call_env"])
    assert "PATH=" in environment  # the command really ran and printed its environment
    for secret in (rt.rpc_secret, backend.token, GATEWAY_TOKEN):
        assert secret not in environment
        assert secret not in sent
