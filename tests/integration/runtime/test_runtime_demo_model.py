"""The offline demo model's tour through the real runtime and the local backend's default policy: it
reads the file the user names, writes its own demo file and edits one line of it (the approval shows
the diff, the patch preview has it), runs a harmless command, and labels every reply."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_runtime.scripted_gateway import DEMO_LABEL, ScriptedGateway
from tests.integration.runtime.harness import Backend, Launch, Runtime, open_session


async def approve_all(rt: Runtime, task_id: str, count: int) -> list[dict[str, Any]]:
    """Approve the task's first ``count`` approval requests as they come; their payloads."""
    asked = []
    for number in range(1, count + 1):
        event = await rt.event(
            "approval_requested", where=lambda e: e.get("taskId") == task_id, count=number, timeout=20
        )
        asked.append(event["payload"])
        await rt.approve(event["payload"]["approvalId"])
    return asked


def assistant_texts(body: dict[str, Any]) -> list[str]:
    texts = []
    for message in body["messages"]:
        if message["role"] == "assistant":
            content = message["content"]
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            texts += [block["text"] for block in blocks if block.get("type") == "text"]
    return texts


async def test_the_demo_reads_edits_its_own_file_with_a_diff_and_runs_a_harmless_command(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("Remember the milk.\n")
    demo_file = workspace / "cowork-demo.md"
    async with ScriptedGateway.demo() as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        await rt.start_task("What does notes.txt say?", approvalMode="always")
        write, edit, command = await approve_all(rt, "task_1", 3)
        end = await rt.task_end("task_1")
        preview = await rt.call("GetPatchPreview", {"sessionId": rt.session_id})
        first_task = gateway.requests[-1].body
        # A second task of the conversation finds the file made: it reads it and edits it back.
        await rt.start_task("And notes.txt again?", task_id="task_2")
        (again,) = await approve_all(rt, "task_2", 1)  # only the command asks in this mode
        second_end = await rt.task_end("task_2")
        second_task = gateway.requests[-1].body

    assert end["eventType"] == "task_completed", end
    assert [a["details"]["toolName"] for a in (write, edit, command)] == [
        "WriteFile",
        "EditFile",
        "RunCommand",
    ]
    diff = edit["details"]["diff"]
    assert "-Status: draft\n+Status: edited by the demo\n" in diff
    assert command["details"]["command"] == "echo Hello from the Cowork demo"
    assert "cowork-demo.md" in str(preview)
    assert "+Status: edited by the demo" in str(preview)
    texts = assistant_texts(first_task)
    assert len(texts) == 4  # read, write, edit, command (the fifth reply ends the turn)
    assert all(text.startswith(DEMO_LABEL) for text in texts)
    assert "Remember the milk." in texts[1]
    assert second_end["eventType"] == "task_completed", second_end
    assert again["details"]["toolName"] == "RunCommand"
    assert demo_file.read_text().endswith("Status: draft\n")
    messages = second_task["messages"]
    asked_again = max(i for i, m in enumerate(messages) if "And notes.txt again?" in str(m["content"]))
    tools_of_task_2 = [
        block["name"]
        for message in messages[asked_again:]
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_use"
    ]
    assert tools_of_task_2 == ["ReadFile", "ReadFile", "EditFile", "RunCommand"]
