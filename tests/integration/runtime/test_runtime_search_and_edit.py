"""A real task through the runtime and the scripted gateway: Grep to find the code, ReadFile, then an
EditFile the user approves seeing its diff, with the change in the patch preview. The default policy
of the local backend applies, so a symlink out of the project is never searched."""

from __future__ import annotations

from pathlib import Path

from agent_runtime.scripted_gateway import ScriptedGateway
from tests.integration.runtime.harness import (
    Backend,
    Launch,
    all_tool_results,
    open_session,
    result_text,
    tool_call,
)


async def test_a_task_finds_code_with_grep_and_changes_it_with_an_approved_edit(
    launch: Launch, backend: Backend, workspace: Path, tmp_path: Path
) -> None:
    app = workspace / "app.py"
    app.write_text(
        "def greet(name):\n    return 'Hello, ' + name\n\n\ndef main():\n    print(greet('you'))\n"
    )
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.py").write_text("def greet_secretly():\n    return 'private'\n")
    (workspace / "linked.py").symlink_to(outside / "private.py")
    script = [
        {"toolCalls": [tool_call("Grep", "call_grep", pattern=r"def greet\w*")]},
        {"toolCalls": [tool_call("ReadFile", "call_read", path="app.py")]},
        {
            "toolCalls": [
                tool_call("EditFile", "call_edit", path="app.py", oldString="'Hello, '", newString="'Hi, '")
            ]
        },
        {"text": "Changed the greeting."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        await rt.start_task("Make the greeting shorter", approvalMode="always")
        asked = await rt.event("approval_requested", timeout=20)
        details = asked["payload"]["details"]
        assert details["toolName"] == "EditFile"
        assert "-    return 'Hello, ' + name\n+    return 'Hi, ' + name\n" in details["diff"]
        assert app.read_text().count("Hello") == 1  # nothing written before the answer
        assert (await rt.approve(asked["payload"]["approvalId"]))["accepted"] is True
        end = await rt.task_end("task_1")
        preview = await rt.call("GetPatchPreview", {"sessionId": rt.session_id})
        results = {block["tool_use_id"]: block for block in all_tool_results(gateway.requests[-1].body)}
        # Only the edit asked: reading and searching inside the project need no approval.
        assert len(rt.find("approval_requested")) == 1

    assert end["eventType"] == "task_completed", end
    assert app.read_text().startswith("def greet(name):\n    return 'Hi, ' + name\n")
    grep = result_text(results["call_grep"])
    assert f"{app}:1:def greet(name):" in grep
    assert "greet_secretly" not in grep
    assert "private" not in grep
    assert "policy does not allow" in grep
    assert "Edited" in result_text(results["call_edit"])
    (patch,) = preview["files"]
    assert patch["path"] == str(app)
    assert "+    return 'Hi, ' + name" in patch["diff"]
