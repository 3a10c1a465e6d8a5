"""An administrator's commands reach a running session within seconds (issue 22 "Policy revocation and
server push"): the real backend (``cowork-backend serve``), the real runtime over its socket, the
scripted gateway, and the administrator's commands run as ``cowork-backend`` processes.

* ``policy revoke`` mid-task pauses the session (``policy_revoked``, then ``session_paused`` with
  reason ``policy_revoked``) within 5 s — while the model answers (the stream is abandoned) and, once
  it finishes, while a tool runs (tools are never cut off); a resume is refused until ``policy set``
  installs a valid policy, then the task goes on.
* ``policy set`` mid-task swaps the new bundle in between steps: a tool allowed in one step is denied
  in the next, and the step running when the change came finishes under the old policy.
* With WebSockets off at the server the runtime polls and still pauses.
* ``session stop`` and ``POST /sessions/{id}/stop`` cancel the task and end the session.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.errors import ErrorCode
from contracts.ipc.client_core import RpcCallError
from tests.integration.runtime.harness import (
    Backend,
    Launch,
    Runtime,
    eventually,
    held_command,
    result_text,
    start_backend,
    start_held_command,
    tool_call,
    tool_results,
)
from tests.support.peers import REPO_ROOT

PAUSE_WITHIN_S = 5.0
SLOW_ANSWER_MS = 20_000
"""A model answer slower than any test waits: the administrator's command always comes first."""

POLICY_HEAD = """\
# The built-in policy's grants but File.Write (approval rules come from the built-in policy).
[[capabilities]]
name = "File.Read"
allowedPaths = ["${workspace}"]

[[capabilities]]
name = "File.Delete"
allowedPaths = ["${workspace}"]
requiresApproval = true
approvalRuleId = "file-delete"

[[capabilities]]
name = "Shell.Exec"
approvalRuleId = "shell-exec"

[[capabilities]]
name = "Network.Http"
approvalRuleId = "network-http"

[[capabilities]]
name = "LLM.Call"

[[capabilities]]
name = "Workspace.Upload"
"""
NO_FILE_WRITE = POLICY_HEAD
WITH_FILE_WRITE = POLICY_HEAD + '\n[[capabilities]]\nname = "File.Write"\nallowedPaths = ["${workspace}"]\n'


def backend_cli(*args: str) -> dict[str, Any]:
    """``cowork-backend ARGS…`` as a process; its one JSON line."""
    done = subprocess.run(
        [sys.executable, "-m", "backend.cli", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"cowork-backend {' '.join(args)}: {done.returncode}\n{done.stderr}"
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def mint_admin_token(backend: Backend) -> str:
    """``cowork-backend token --admin`` for the backend's tenant: an administrator, not the session's user."""
    done = subprocess.run(
        [
            *(sys.executable, "-m", "backend.cli", "token", "--tenant", backend.tenant_id, "--admin"),
            *("--user", "admin@example.com", "--data-dir", str(backend.data_dir)),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    config = tmp_path / "config"
    config.mkdir()
    return config


@pytest.fixture
def governed(tmp_path: Path, config_dir: Path) -> Iterator[Backend]:
    """A backend of its own (a revocation is the whole tenant's) that checks for changes often."""
    with start_backend(
        tmp_path / "backend", config_dir=config_dir, extra_args=["--push-interval", "0.25"]
    ) as running:
        yield running


@pytest.fixture
def polled(tmp_path: Path, config_dir: Path) -> Iterator[Backend]:
    """A backend that serves no WebSockets (as behind a proxy that does not pass them)."""
    with start_backend(
        tmp_path / "backend", config_dir=config_dir, extra_args=["--no-websockets"]
    ) as running:
        yield running


async def revoke(config_dir: Path, reason: str) -> float:
    """``policy revoke`` as a process; the monotonic time just before it started."""
    started = time.monotonic()
    await asyncio.to_thread(
        backend_cli, "policy", "revoke", "local", "--reason", reason, "--config-dir", str(config_dir)
    )
    return started


async def set_policy(config_dir: Path, text: str) -> dict[str, Any]:
    source = config_dir.parent / f"policy-{time.monotonic_ns()}.toml"
    source.write_text(text)
    return await asyncio.to_thread(
        backend_cli, "policy", "set", "local", str(source), "--config-dir", str(config_dir)
    )


async def open_governed(
    launch: Launch, gateway: ScriptedGateway, backend: Backend, workspace: Path
) -> Runtime:
    rt = await launch(gateway.url, backend=backend, extra={"COWORK_PUSH_POLL_S": "0.25"})
    await rt.create_session(backend, workspace)
    return rt


async def test_a_policy_revoked_while_the_model_answers_pauses_within_5_s_and_resumes_under_a_new_policy(
    launch: Launch, governed: Backend, config_dir: Path, workspace: Path
) -> None:
    script = [{"delayMs": SLOW_ANSWER_MS, "text": "Too late."}, {"text": "Resumed and done."}]
    async with ScriptedGateway(script) as gateway:
        rt = await open_governed(launch, gateway, governed, workspace)
        await rt.start_task("Think for a while")
        await rt.event("llm_request_started")
        started = await revoke(config_dir, "key compromise")
        paused = await rt.event("session_paused", timeout=PAUSE_WITHIN_S + 10)
        took = time.monotonic() - started
        revoked = rt.find("policy_revoked")
        state = await rt.state()
        with pytest.raises(RpcCallError) as refused:
            await rt.resume(rt.session_id or "")
        assert (await rt.state())["sessionStatus"] == "SESSION_PAUSED"

        mark = rt.mark()
        await set_policy(config_dir, WITH_FILE_WRITE)
        updated = await rt.event("policy_updated", after=mark, timeout=10)
        resumed = await rt.resume(rt.session_id or "")
        end = await rt.task_end("task_1", timeout=20)

    assert took < PAUSE_WITHIN_S, f"paused {took:.2f} s after the revocation"
    assert [event["payload"]["reason"] for event in revoked] == ["key compromise"]
    assert paused["payload"]["reason"] == "policy_revoked"
    assert paused["payload"]["error"]["code"] == "POLICY_EXPIRED"
    assert "key compromise" in paused["payload"]["error"]["message"]
    assert state["sessionStatus"] == "SESSION_PAUSED"
    assert rt.find("task_failed") == []
    assert rt.find("policy_expired") == []
    assert refused.value.error_code is ErrorCode.POLICY_EXPIRED
    assert updated["payload"]["policyVersion"] == 2
    assert resumed["sessionStatus"] == "SESSION_RUNNING"
    assert end["eventType"] == "task_completed", end
    # The abandoned answer never reached the thread: the model was simply asked again.
    assert len(gateway.requests) == 2


async def test_a_policy_revoked_while_a_tool_runs_lets_it_finish_then_pauses_before_the_next_step(
    launch: Launch, governed: Backend, config_dir: Path, workspace: Path
) -> None:
    started, go, done = workspace / "started", workspace / "go", workspace / "done.txt"
    command = held_command(started, go, f"echo finished > {done}")
    script = [
        {"toolCalls": [tool_call("RunCommand", "call_1", command=command)]},
        {"toolCalls": [tool_call("WriteFile", "call_2", path=str(workspace / "next.txt"), content="x")]},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_governed(launch, gateway, governed, workspace)
        await start_held_command(rt, "Run it", started)
        await revoke(config_dir, "audit")
        await rt.event("policy_revoked", timeout=PAUSE_WITHIN_S + 10)
        running = await rt.state()
        released = time.monotonic()
        go.touch()
        paused = await rt.event("session_paused", timeout=PAUSE_WITHIN_S + 10)
        took = time.monotonic() - released
        completed = rt.find("tool_completed")
        requests = len(gateway.requests)

    # The tool was not cut off: it ran to its end while the revocation waited for it.
    assert running["sessionStatus"] == "SESSION_RUNNING"
    assert done.read_text() == "finished\n"
    assert [event["payload"]["status"] for event in completed] == ["succeeded"]
    assert paused["payload"]["reason"] == "policy_revoked"
    assert took < PAUSE_WITHIN_S
    # Nothing after the tool ran: the model was not asked for the next step.
    assert requests == 1
    assert not (workspace / "next.txt").exists()


async def test_a_changed_policy_is_swapped_in_between_steps(
    launch: Launch, governed: Backend, config_dir: Path, workspace: Path
) -> None:
    started, go = workspace / "started", workspace / "go"
    first, second = workspace / "first.txt", workspace / "second.txt"
    script = [
        {
            "toolCalls": [
                tool_call("RunCommand", "call_hold", command=held_command(started, go, "true")),
                tool_call("WriteFile", "call_first", path=str(first), content="allowed"),
            ]
        },
        {"toolCalls": [tool_call("WriteFile", "call_second", path=str(second), content="denied")]},
        {"text": "Done."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_governed(launch, gateway, governed, workspace)
        await start_held_command(rt, "Write twice", started)
        installed = await set_policy(config_dir, NO_FILE_WRITE)

        async def pushed() -> bool:
            status = await governed.get_json(f"/sessions/{rt.session_id}/policy-status")
            return bool(status["heldPolicyVersion"] == installed["version"])

        # The new bundle reached the runtime while step 1's command still runs.
        await eventually(pushed, timeout=15, what="the new policy pushed to the session")
        assert rt.find("policy_updated") == []
        go.touch()
        end = await rt.task_end("task_1", timeout=30)
        steps = [
            e for e in rt.events if e["eventType"] in ("step_completed", "step_started", "policy_updated")
        ]
        (denied,) = tool_results(gateway.requests[2].body)
        tools_before = {tool["name"] for tool in gateway.requests[0].body["tools"]}
        tools_after = {tool["name"] for tool in gateway.requests[1].body["tools"]}

    assert end["eventType"] == "task_completed", end
    # Step 1 began under the old policy and ended under it: its write happened.
    assert first.read_text() == "allowed"
    # The swap came at the boundary: after step 1 completed, before step 2 started.
    kinds = [e["eventType"] for e in steps]
    assert kinds[:4] == ["step_started", "step_completed", "policy_updated", "step_started"], kinds
    updated = steps[2]["payload"]
    assert updated["removed"] == ["File.Write"]
    assert updated["added"] == []
    assert updated["policyVersion"] == installed["version"]
    # Step 2 runs under the new one: the write is no longer offered, and refused when asked for.
    assert "WriteFile" in tools_before
    assert "WriteFile" not in tools_after
    assert denied["tool_use_id"] == "call_second"
    assert denied.get("is_error") is True
    assert "File.Write" in result_text(denied)
    assert not second.exists()


async def test_without_websockets_the_runtime_polls_and_a_revocation_still_pauses_it(
    launch: Launch, polled: Backend, config_dir: Path, workspace: Path
) -> None:
    script = [{"delayMs": SLOW_ANSWER_MS, "text": "Too late."}]
    async with ScriptedGateway(script) as gateway:
        rt = await open_governed(launch, gateway, polled, workspace)
        await rt.start_task("Think for a while")
        await rt.event("llm_request_started")
        started = await revoke(config_dir, "polled")
        paused = await rt.event("session_paused", timeout=PAUSE_WITHIN_S + 10)
        took = time.monotonic() - started

    assert paused["payload"]["reason"] == "policy_revoked"
    assert took < PAUSE_WITHIN_S
    assert "polling" in rt.output_text()


async def test_an_administrator_stops_a_session_over_rest_and_the_runtime_cancels_and_ends_it(
    launch: Launch, governed: Backend, workspace: Path
) -> None:
    admin = await asyncio.to_thread(mint_admin_token, governed)
    script = [{"delayMs": SLOW_ANSWER_MS, "text": "Too late."}]
    async with ScriptedGateway(script) as gateway:
        rt = await open_governed(launch, gateway, governed, workspace)
        await rt.start_task("Think for a while")
        await rt.event("llm_request_started")
        async with governed.http() as http:
            # The session's own user is no administrator: refused.
            refused = await http.post(f"/sessions/{rt.session_id}/stop", json={"reason": "mine"})
            http.headers["authorization"] = f"Bearer {admin}"
            stopped = await http.post(f"/sessions/{rt.session_id}/stop", json={"reason": "end of contract"})
        cancelled = await rt.event("session_cancelled", timeout=PAUSE_WITHIN_S + 10)
        exit_code = await rt.wait_exit(timeout=15)
        held = await governed.get_json(f"/sessions/{rt.session_id}")

    assert refused.status_code == 403
    assert refused.json()["code"] == "PERMISSION_DENIED"
    assert stopped.status_code == 200, stopped.text
    assert stopped.json()["status"] == "SESSION_CANCELLED"
    kinds = rt.types()
    assert (
        kinds.index("session_stop_requested")
        < kinds.index("task_cancelled")
        < kinds.index("session_cancelled")
    )
    assert "end of contract" in cancelled["payload"]["reason"]
    assert exit_code == 0
    assert held["status"] == "SESSION_CANCELLED"
    assert held["resumable"] is False
    assert "end of contract" in held["endReason"]


async def test_session_stop_from_the_command_line_ends_an_idle_session(
    launch: Launch, governed: Backend, workspace: Path
) -> None:
    async with ScriptedGateway([{"text": "Hello."}]) as gateway:
        rt = await open_governed(launch, gateway, governed, workspace)
        await rt.run_task("Say hello")
        answer = await asyncio.to_thread(
            backend_cli,
            "session",
            "stop",
            rt.session_id or "",
            "--reason",
            "maintenance",
            "--data-dir",
            str(governed.data_dir),
        )
        cancelled = await rt.event("session_cancelled", timeout=PAUSE_WITHIN_S + 10)
        exit_code = await rt.wait_exit(timeout=15)

    assert answer["status"] == "SESSION_CANCELLED"
    assert answer["stoppedBy"].startswith("operator:")
    assert cancelled["payload"]["reason"] == "Stopped by an administrator: maintenance"
    assert rt.find("task_cancelled") == []  # no task was running
    assert exit_code == 0


async def test_a_policy_revoked_while_an_approval_waits_withdraws_it_and_nothing_runs(
    launch: Launch, governed: Backend, config_dir: Path, workspace: Path
) -> None:
    ran = workspace / "ran"
    script = [{"toolCalls": [tool_call("RunCommand", "call_1", command=f"touch {ran}")]}]
    async with ScriptedGateway(script) as gateway:
        rt = await open_governed(launch, gateway, governed, workspace)
        await rt.start_task("Run it")
        asked = await rt.event("approval_requested")
        await revoke(config_dir, "freeze")
        resolved = await rt.event("approval_resolved", timeout=PAUSE_WITHIN_S + 10)
        paused = await rt.event("session_paused", timeout=PAUSE_WITHIN_S + 10)
        (completed,) = rt.find("tool_completed")
        # Approving now is too late: the request was withdrawn.
        late = await rt.approve(asked["payload"]["approvalId"])

    assert resolved["payload"]["approvalId"] == asked["payload"]["approvalId"]
    assert resolved["payload"]["decision"] == "denied"
    assert completed["payload"]["status"] == "denied"
    assert paused["payload"]["reason"] == "policy_revoked"
    assert late["accepted"] is False
    assert not ran.exists()
    assert len(gateway.requests) == 1
