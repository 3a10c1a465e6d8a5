"""Ctrl-C in ``cowork exec``: the first cancels the task (exit 130), a second stops the runtime at once;
either way no runtime process, nor a command it ran, outlives the run."""

from __future__ import annotations

import re
from pathlib import Path

import psutil

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from tests.headless.support import Running, runtime_children, tool_call, wait_until


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_ctrl_c_while_the_model_streams_cancels_the_task_and_leaves_no_runtime(
    env: dict[str, str], workspace: Path
) -> None:
    turns = [{"text": "The first words, then a long pause", "chunkSize": 10, "holdAfterChunks": 1}]
    with ScriptedGatewayThread({"turns": turns}) as gateway:
        try:
            with Running(["-C", str(workspace), "--endpoint", gateway.url, "Tell a story"], env) as run:
                gateway.wait_for(lambda: bool(gateway.requests) and gateway.requests[0].chunks_sent > 0, 30)
                runtimes = runtime_children(run.pid)
                assert len(runtimes) == 1, runtimes
                run.interrupt()
                code = run.wait(timeout=30)
        finally:
            gateway.release()
    assert code == 130, run.stderr
    assert "cancelling the task (Ctrl-C again to stop at once)" in run.stderr
    assert "task cancelled" in run.stderr
    assert "Traceback" not in run.stderr
    assert not _alive(runtimes[0]), "the runtime outlived cowork exec"


def test_a_second_ctrl_c_stops_a_long_command_at_once(
    env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    started = tmp_path / "command-started"
    turns = [
        tool_call("RunCommand", "c1", command=f"touch {started}; sleep 30"),
        {"text": "Not reached."},
    ]
    with (
        ScriptedGatewayThread({"turns": turns}) as gateway,
        Running(["-C", str(workspace), "--endpoint", gateway.url, "--approve-all", "Wait"], env) as run,
    ):
        wait_until(started.exists, timeout=30, what="the command to start")
        (runtime,) = runtime_children(run.pid)
        command = [p for p in runtime.children(recursive=True) if "sleep" in " ".join(p.cmdline())]
        assert command, runtime.children(recursive=True)
        run.interrupt()
        # The first Ctrl-C asks the task to cancel: a running tool finishes first — it would take 30 s.
        run.wait_for_stderr("cancelling the task")
        run.interrupt()
        code = run.wait(timeout=15)
    assert code == 130, run.stderr
    session = re.search(r"^session (sess_\w+)$", run.stderr, re.MULTILINE)
    assert session, run.stderr
    assert f"stopping; continue with: cowork exec --resume {session[1]}" in run.stderr
    assert "Traceback" not in run.stderr
    assert "Not reached." not in run.stdout
    for process in [runtime, *command]:
        assert not _alive(process), f"{process} outlived cowork exec"
