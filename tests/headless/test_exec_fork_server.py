"""``cowork exec`` with the runtime's fork server: the first run starts the server (and spawns its own
runtime), the next ones get a runtime forked from it — the same task, output, exit status and
environment as a spawned runtime; concurrent runs; a killed server replaced; Ctrl-C still cancels."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from contracts.ipc.fork_wire import ENABLE_VARIABLE, SOCKET_DIR_NAME, SOCKET_NAME
from tests.headless.support import Running, run_cowork, runtime_children, tool_call, wait_until

IDLE = ("--idle-timeout", "60")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; fork is POSIX")


@pytest.fixture
def fork_env(env: dict[str, str]) -> Iterator[dict[str, str]]:
    """``env`` with the fork server on, and a user data directory short enough for its socket's path
    (a test's own temporary folder is too deep for the 108 bytes a socket path may have)."""
    data = Path(tempfile.mkdtemp(prefix="cw"))
    forked = {**env, "XDG_DATA_HOME": str(data), "COWORK_RUNTIME_FORK_SERVER": "1"}
    try:
        yield forked
    finally:
        for server in fork_servers(forked):
            with contextlib.suppress(psutil.Error):
                server.kill()
                server.wait(timeout=10)
        shutil.rmtree(data, ignore_errors=True)


def fork_servers(env: dict[str, str]) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        command = process.info.get("cmdline") or []
        if "fork-server" in command and any(env["XDG_DATA_HOME"] in part for part in command):
            found.append(process)
    return found


def serving(env: dict[str, str]) -> psutil.Process:
    """The fork server of ``env``, once it accepts connections."""

    def accepting() -> bool:
        for path in (Path(env["XDG_DATA_HOME"]) / "Cowork" / SOCKET_DIR_NAME).glob(f"*/{SOCKET_NAME}"):
            with socket.socket(socket.AF_UNIX) as probe, contextlib.suppress(OSError):
                probe.connect(str(path))
                return len(fork_servers(env)) == 1
        return False

    wait_until(accepting, timeout=30, what="the fork server to listen")
    (server,) = fork_servers(env)
    return server


def environment_task(workspace: Path, name: str) -> list[dict[str, object]]:
    """A command that writes its environment and the runtime's parent (the command's grandparent)."""
    command = f"env | sort > {name}.env; awk '/^PPid/{{print $2}}' /proc/$PPID/status > {name}.parent"
    return [tool_call("RunCommand", "c1", command=command), {"text": "Written.", "chunkSize": 3}]


def exec_args(workspace: Path, url: str, prompt: str = "Write it") -> list[str]:
    return ["-C", str(workspace), "--endpoint", url, "--approve-all", prompt]


def test_a_forked_runtime_runs_the_task_as_a_spawned_one_with_the_clients_environment(
    fork_env: dict[str, str], workspace: Path
) -> None:
    spawned_env = {**fork_env, "COWORK_RUNTIME_FORK_SERVER": "0"}
    turns = [*environment_task(workspace, "spawned"), *environment_task(workspace, "forked")]
    with ScriptedGatewayThread({"turns": turns}) as gateway:
        spawned = run_cowork(exec_args(workspace, gateway.url), spawned_env)
        assert spawned.returncode == 0, spawned.stderr
        assert not fork_servers(fork_env)
        # The first run with the server on finds none: it starts one and spawns its own runtime.
        warmup = ScriptedGatewayThread({"turns": [{"text": "Warm."}]})
        with warmup:
            first = run_cowork(exec_args(workspace, warmup.url), fork_env)
        assert first.returncode == 0, first.stderr
        server = serving(fork_env)
        forked = run_cowork(exec_args(workspace, gateway.url), fork_env)
        gateway.assert_done()
    assert forked.returncode == spawned.returncode == 0, forked.stderr
    assert forked.stdout == spawned.stdout == "Written.\n"
    assert (workspace / "forked.parent").read_text().strip() == str(server.pid)
    assert (workspace / "spawned.parent").read_text().strip() != str(server.pid)
    # The same environment, variable for variable, as the spawned runtime had (but for the switch).
    assert _variables(workspace / "forked.env") == _variables(workspace / "spawned.env")


def test_a_secret_of_the_servers_environment_never_reaches_a_forked_runtime(
    fork_env: dict[str, str], workspace: Path
) -> None:
    directory = Path(fork_env["XDG_DATA_HOME"]) / "Cowork" / SOCKET_DIR_NAME
    with ScriptedGatewayThread({"turns": [{"text": "Warm."}]}) as warmup:
        assert run_cowork(exec_args(workspace, warmup.url), fork_env).returncode == 0
    serving(fork_env)
    # What the server was started with is an allowlist: no Cowork settings, no token.
    (server,) = fork_servers(fork_env)
    assert not [key for key in server.environ() if key.startswith(("COWORK_", "LLM_GATEWAY_"))]
    # A server started by hand with a secret in its environment: the client's environment replaces it.
    server.kill()
    server.wait(timeout=10)
    (folder,) = directory.iterdir()
    hand_started = psutil.Popen(
        [sys.executable, "-P", "-m", "agent_runtime", "fork-server", "--socket-dir", str(folder), *IDLE],
        env={**os.environ, "SERVER_ONLY_SECRET": "hunter2"},
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        serving(fork_env)
        with ScriptedGatewayThread({"turns": environment_task(workspace, "child")}) as gateway:
            result = run_cowork(exec_args(workspace, gateway.url), {**fork_env, "CLIENT_ONLY": "yes"})
        assert result.returncode == 0, result.stderr
        assert (workspace / "child.parent").read_text().strip() == str(hand_started.pid)
        variables = (workspace / "child.env").read_text()
        assert "CLIENT_ONLY=yes\n" in variables
        assert "SERVER_ONLY_SECRET" not in variables
    finally:
        hand_started.kill()
        hand_started.wait(timeout=10)


def test_two_concurrent_runs_each_get_their_own_forked_runtime(
    fork_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    with ScriptedGatewayThread({"turns": [{"text": "Warm."}]}) as warmup:
        assert run_cowork(exec_args(workspace, warmup.url), fork_env).returncode == 0
    server = serving(fork_env)
    second_workspace = tmp_path / "second"
    second_workspace.mkdir()
    with (
        ScriptedGatewayThread({"turns": environment_task(workspace, "one")}) as one,
        ScriptedGatewayThread({"turns": environment_task(second_workspace, "two")}) as two,
        Running(exec_args(workspace, one.url), fork_env) as first,
        Running(exec_args(second_workspace, two.url), fork_env) as second,
    ):
        codes = (first.wait(timeout=60), second.wait(timeout=60))
    assert codes == (0, 0), (first.stderr, second.stderr)
    assert (workspace / "one.parent").read_text().strip() == str(server.pid)
    assert (second_workspace / "two.parent").read_text().strip() == str(server.pid)
    assert f"PWD={workspace}\n" in (workspace / "one.env").read_text()
    assert f"PWD={second_workspace}\n" in (second_workspace / "two.env").read_text()


def test_a_killed_fork_server_is_replaced(fork_env: dict[str, str], workspace: Path) -> None:
    with ScriptedGatewayThread({"turns": [{"text": "Warm."}]}) as warmup:
        assert run_cowork(exec_args(workspace, warmup.url), fork_env).returncode == 0
    killed = serving(fork_env)
    killed.kill()
    killed.wait(timeout=10)
    # Its socket is left behind: the next run finds nobody there, spawns, and starts a new server.
    turns = [{"text": "Spawned."}, *environment_task(workspace, "again")]
    with ScriptedGatewayThread({"turns": turns}) as gateway:
        spawned = run_cowork(exec_args(workspace, gateway.url), fork_env)
        assert spawned.returncode == 0, spawned.stderr
        assert spawned.stdout == "Spawned.\n"
        replacement = serving(fork_env)
        assert replacement.pid != killed.pid
        forked = run_cowork(exec_args(workspace, gateway.url), fork_env)
    assert forked.returncode == 0, forked.stderr
    assert (workspace / "again.parent").read_text().strip() == str(replacement.pid)


def test_ctrl_c_cancels_a_task_in_a_forked_runtime_and_leaves_no_runtime(
    fork_env: dict[str, str], workspace: Path
) -> None:
    with ScriptedGatewayThread({"turns": [{"text": "Warm."}]}) as warmup:
        assert run_cowork(exec_args(workspace, warmup.url), fork_env).returncode == 0
    server = serving(fork_env)
    turns = [{"text": "The first words, then a long pause", "chunkSize": 10, "holdAfterChunks": 1}]
    with ScriptedGatewayThread({"turns": turns}) as gateway:
        try:
            with Running(exec_args(workspace, gateway.url, "Tell a story"), fork_env) as run:
                gateway.wait_for(lambda: bool(gateway.requests) and gateway.requests[0].chunks_sent > 0, 30)
                assert runtime_children(run.pid) == []
                (runtime,) = server.children()
                run.interrupt()
                code = run.wait(timeout=30)
        finally:
            gateway.release()
    assert code == 130, run.stderr
    assert "task cancelled" in run.stderr
    assert "Traceback" not in run.stderr
    wait_until(lambda: not _alive(runtime), timeout=10, what="the forked runtime to end")
    assert server.is_running()


def test_a_socket_folder_open_to_other_users_is_not_used(fork_env: dict[str, str], workspace: Path) -> None:
    with ScriptedGatewayThread({"turns": [{"text": "Warm."}]}) as warmup:
        assert run_cowork(exec_args(workspace, warmup.url), fork_env).returncode == 0
    server = serving(fork_env)
    (folder,) = (Path(fork_env["XDG_DATA_HOME"]) / "Cowork" / SOCKET_DIR_NAME).iterdir()
    folder.chmod(0o755)
    with ScriptedGatewayThread({"turns": environment_task(workspace, "open")}) as gateway:
        result = run_cowork(exec_args(workspace, gateway.url), fork_env)
    assert result.returncode == 0, result.stderr
    # Spawned instead: the runtime is not the server's child.
    assert (workspace / "open.parent").read_text().strip() != str(server.pid)


def _variables(path: Path) -> list[str]:
    """The variables but the switch itself and the command's run id (random, one per command)."""
    lines = path.read_text().splitlines()
    return [line for line in lines if not line.startswith((ENABLE_VARIABLE, "COWORK_TOOL_RUN_ID="))]


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
