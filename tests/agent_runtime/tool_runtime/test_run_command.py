"""RunCommand (seed 003 §4.4, §6.2, §8.2) with real subprocesses."""

from __future__ import annotations

import asyncio
import os
import re
import threading
from pathlib import Path

import psutil
import pytest

from agent_runtime.tool_runtime import LocalToolRouter
from agent_runtime.tool_runtime.tools.shell import SECRET_ENVIRONMENT
from contracts.enums import ArtifactType
from contracts.errors import ErrorCode
from contracts.tools import ToolScope
from tests.agent_runtime.tool_runtime.support import call, failed_with, ok, wait_gone


async def run(router: LocalToolRouter, command: str, **arguments: object) -> str:
    return ok(await router.execute(call("RunCommand", command=command, **arguments)))


async def test_stdout_stderr_and_exit_code_come_back_separately(router: LocalToolRouter) -> None:
    text = await run(router, "echo out; echo err >&2; exit 3")
    assert text == "Exit code: 3\n--- stdout ---\nout\n--- stderr ---\nerr"


async def test_the_command_runs_in_the_workspace_root_by_default(
    router: LocalToolRouter, workspace: Path
) -> None:
    assert await run(router, "pwd") == f"Exit code: 0\n--- stdout ---\n{workspace}\n--- stderr ---\n"


async def test_cwd_chooses_the_working_directory(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    assert f"\n{workspace / 'sub'}\n" in await run(router, "pwd", cwd=str(workspace / "sub"))


@pytest.mark.parametrize(
    ("cwd", "problem"),
    [("relative", "must be an absolute path"), ("/no/such/dir", "is not an existing directory")],
)
async def test_a_bad_cwd_is_invalid_request(router: LocalToolRouter, cwd: str, problem: str) -> None:
    result = await router.execute(call("RunCommand", command="pwd", cwd=cwd))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert result.error.message.startswith("arguments.cwd")
    assert problem in result.error.message


async def test_stdin_is_piped_to_the_command(router: LocalToolRouter) -> None:
    assert "\n3\n" in await run(router, "wc -l", stdin="a\nb\nc\n")


async def test_without_stdin_the_command_reads_end_of_file(router: LocalToolRouter) -> None:
    assert "--- stdout ---\n0\n" in await run(router, "wc -c")


async def test_a_large_stdin_is_fed_while_output_is_read(router: LocalToolRouter) -> None:
    data = "x" * (4 * 1024 * 1024)
    assert f"\n{len(data)}\n" in await run(router, "cat | wc -c", stdin=data)


async def test_crlf_becomes_lf_and_lone_cr_is_kept(router: LocalToolRouter) -> None:
    text = await run(router, r"printf 'a\r\nb\r\n50%%\r100%%\n'")
    assert "--- stdout ---\na\nb\n50%\r100%\n--- stderr" in text


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("   ", "must not be empty"),
        ("echo a\x00b", "must not contain NUL bytes"),
        ("x" * 200_000, "the shell accepts at most"),
    ],
)
async def test_bad_commands_are_invalid_request(router: LocalToolRouter, command: str, problem: str) -> None:
    result = await router.execute(call("RunCommand", command=command))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert result.error.message.startswith("arguments.command")
    assert problem in result.error.message


async def test_a_timeout_is_tool_execution_timeout_with_the_output_so_far(router: LocalToolRouter) -> None:
    result = await router.execute(call("RunCommand", command="echo started; exec sleep 60", timeout=1))
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_TIMEOUT)
    assert result.error is not None
    assert result.error.message == "Command timed out after 1 second"
    assert result.output_text is not None
    assert "--- stdout ---\nstarted\n" in result.output_text


async def test_a_timeout_kills_the_whole_tree_including_setsid_and_term_ignoring_grandchildren(
    router: LocalToolRouter,
) -> None:
    command = (
        "sleep 300 & echo $!; "
        "setsid sleep 300 & echo $!; "
        "sh -c 'trap \"\" TERM; sleep 300 & echo $!; wait' & "
        "sh -c 'setsid sh -c \"sleep 300 & echo \\$!; wait\" & wait' & "
        "wait"
    )
    result = await router.execute(call("RunCommand", command=command, timeout=2))
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_TIMEOUT)
    assert result.output_text is not None
    pids = [int(pid) for pid in re.findall(r"^\d+$", result.output_text, re.MULTILINE)]
    assert len(pids) == 4
    assert wait_gone(pids, timeout=5) == []


async def test_cancelling_the_call_kills_the_tree_before_the_cancellation_propagates(
    router: LocalToolRouter, workspace: Path
) -> None:
    fifo = workspace / "started"
    os.mkfifo(fifo)
    task = asyncio.ensure_future(
        router.execute(call("RunCommand", command=f"setsid sleep 300 & echo $! > {fifo}; wait"))
    )
    pid = int(await asyncio.wait_for(asyncio.to_thread(fifo.read_text), 10))
    assert psutil.pid_exists(pid)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert wait_gone([pid], timeout=0.5) == []


async def test_background_processes_holding_the_output_are_stopped_when_the_command_ends(
    router: LocalToolRouter,
) -> None:
    text = await run(router, "setsid sleep 300 & echo $!")
    pid = int(text.split("--- stdout ---\n")[1].split("\n")[0])
    assert "[background processes that kept the output open were stopped]" in text
    assert wait_gone([pid]) == []


async def test_a_detached_daemon_with_its_own_output_is_left_running(router: LocalToolRouter) -> None:
    text = await run(router, "setsid sleep 300 >/dev/null 2>&1 </dev/null & echo $!")
    pid = int(text.split("--- stdout ---\n")[1].split("\n")[0])
    try:
        assert psutil.pid_exists(pid)
        assert "background processes" not in text
    finally:
        psutil.Process(pid).kill()


async def test_the_runtimes_secrets_are_not_in_the_commands_environment(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in SECRET_ENVIRONMENT:
        monkeypatch.setenv(name, "super-secret-value")
    monkeypatch.setenv("ORDINARY_SETTING", "visible")
    tools = LocalToolRouter(workspace_root=workspace)
    try:
        text = ok(await tools.execute(call("RunCommand", command="env")))
    finally:
        await tools.aclose()
    assert "super-secret-value" not in text
    assert "ORDINARY_SETTING=visible" in text
    assert set(SECRET_ENVIRONMENT) == {"COWORK_RPC_SECRET", "LLM_GATEWAY_AUTH_TOKEN", "COWORK_BACKEND_TOKEN"}


async def test_stdout_over_10kb_becomes_a_tool_output_artifact(router: LocalToolRouter) -> None:
    result = await router.execute(call("RunCommand", command="seq 1 5000"))
    (artifact,) = result.artifacts
    assert artifact.artifact_type is ArtifactType.TOOL_OUTPUT
    assert artifact.data_path is not None
    expected = "".join(f"{n}\n" for n in range(1, 5001))
    assert Path(artifact.data_path).read_text() == expected
    assert artifact.size_bytes == len(expected)


async def test_small_output_has_no_artifact(router: LocalToolRouter) -> None:
    result = await router.execute(call("RunCommand", command="seq 1 100"))
    assert result.artifacts == []


async def test_output_past_the_limit_keeps_head_and_tail_of_each_stream(router: LocalToolRouter) -> None:
    result = await router.execute(
        call("RunCommand", scope=ToolScope(max_output_bytes=1000), command="seq 1 100000; seq 1 1000 >&2")
    )
    text = ok(result)
    stdout, stderr = text.split("--- stdout ---\n")[1].split("\n--- stderr ---\n")
    assert stdout.startswith("1\n2\n3\n")
    assert stdout.endswith("99999\n100000")
    assert "[... truncated " in stdout
    assert stderr.startswith("1\n2\n")
    assert stderr.endswith("999\n1000")
    assert len(stdout.encode()) + len(stderr.encode()) < 1000 + 2 * 60


async def test_a_command_printing_1_gb_is_captured_in_bounded_memory(router: LocalToolRouter) -> None:
    process = psutil.Process()
    baseline = process.memory_info().rss
    peak = baseline
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.01):
            peak = max(peak, process.memory_info().rss)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        result = await router.execute(call("RunCommand", command="yes 0123456789abcdef | head -c 1073741824"))
    finally:
        done.set()
        sampler.join(5)
    text = ok(result)
    assert peak - baseline < 100 * 1024 * 1024
    kept = 100 * 1024
    assert f"[... truncated {1024**3 - kept} bytes ...]" in text
    (artifact,) = result.artifacts
    assert artifact.artifact_name == f"stdout (first {32 * 1024 * 1024} of {1024**3} bytes).txt"
    assert artifact.data_path is not None
    spooled = Path(artifact.data_path)
    assert spooled.stat().st_size < 32 * 1024 * 1024 + 200
    assert b"artifact cut at" in spooled.read_bytes()[32 * 1024 * 1024 :]


async def test_a_missing_program_is_reported_by_the_shell(router: LocalToolRouter) -> None:
    text = await run(router, "definitely-not-a-program-xyz")
    assert text.startswith("Exit code: 127\n")


async def test_concurrent_commands_do_not_mix_output(router: LocalToolRouter) -> None:
    results = await asyncio.gather(
        *(router.execute(call("RunCommand", command=f"seq {n} {n + 2000}")) for n in range(5))
    )
    for n, result in enumerate(results):
        assert f"--- stdout ---\n{n}\n{n + 1}\n" in ok(result)
