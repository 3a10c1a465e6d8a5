"""Running the real ``cowork exec`` program as a subprocess, as a user or a CI job would."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import psutil

from tests.support.backend import Backend, start_backend
from tests.support.peers import REPO_ROOT

__all__ = [
    "Backend",
    "Running",
    "base_environment",
    "cowork_command",
    "local_backend_dir",
    "local_backends",
    "run_cowork",
    "runtime_children",
    "start_backend",
    "stop_local_backends",
    "tool_call",
    "wait_until",
]

T = TypeVar("T")


def cowork_command() -> list[str]:
    """The installed console script, or the module when the package is not installed."""
    script = Path(sys.executable).with_name("cowork")
    if script.exists():
        return [str(script), "exec"]
    return [sys.executable, "-m", "desktop", "exec"]


def base_environment(root: Path, backend: Backend | None, **extra: str) -> dict[str, str]:
    """This process's environment without any Cowork or gateway settings of the developer's shell;
    platformdirs' folders and the runtime's data under ``root``; the backend, if given, configured."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COWORK_", "LLM_GATEWAY_"))}
    env.update(
        {
            "XDG_DATA_HOME": str(root / "xdg-data"),
            "XDG_CONFIG_HOME": str(root / "xdg-config"),
            "COWORK_RUNTIME_DATA_DIR": str(root / "runtime-data"),
            "COWORK_APPROVAL_TIMEOUT_S": "30",
            "COWORK_LLM_RETRY_BASE_S": "0.01",
            "LLM_GATEWAY_MODEL": "demo-model",
            "PYTHONUNBUFFERED": "1",
            # The developer's OS keychain stays out of it (the gateway token is looked up there).
            "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
            # An embedded backend a run leaves behind stops within a minute, whatever the test does.
            "COWORK_BACKEND_IDLE_TIMEOUT": "60",
            # The runtime is exec's own child, as these tests look for it there; the fork server's
            # tests turn it on (tests/headless/test_exec_fork_server.py).
            "COWORK_RUNTIME_FORK_SERVER": "0",
        }
    )
    if backend is not None:
        env["COWORK_BACKEND_URL"] = backend.url
        env["COWORK_BACKEND_TOKEN"] = backend.token
        env["COWORK_POLICY_KEYS"] = json.dumps(backend.policy_keys)
    env.update(extra)
    return env


def local_backend_dir(env: Mapping[str, str]) -> Path:
    """Where the embedded backend of ``env``'s user data directory keeps its state file."""
    return Path(env["XDG_DATA_HOME"]) / "Cowork" / "backend"


def local_backends(env: Mapping[str, str]) -> list[psutil.Process]:
    """The embedded backend processes serving ``env``'s user data directory (zombies left out)."""
    directory = str(local_backend_dir(env))
    found = []
    for process in psutil.process_iter(["cmdline"]):
        command = process.info.get("cmdline") or []
        try:
            if "serve" in command and directory in command and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except psutil.Error:
            continue
    return found


def stop_local_backends(env: Mapping[str, str]) -> None:
    """Stop what ``cowork exec`` left running for its next run (SIGTERM, waited for)."""
    running = local_backends(env)
    for process in running:
        with contextlib.suppress(psutil.Error):
            process.terminate()
    psutil.wait_procs(running, timeout=15)


def run_cowork(
    args: Sequence[str],
    env: Mapping[str, str],
    *,
    cwd: Path | None = None,
    timeout: float = 60,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``cowork exec ARGS`` to its end, stdin not a terminal (``input`` or nothing)."""
    return subprocess.run(
        [*cowork_command(), *args],
        env=dict(env),
        cwd=cwd or REPO_ROOT,
        input=input,
        stdin=subprocess.DEVNULL if input is None else None,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def runtime_children(pid: int) -> list[psutil.Process]:
    """The agent runtime processes among ``pid``'s children."""
    found = []
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    for child in children:
        try:
            if "agent_runtime" in child.cmdline() and child.status() != psutil.STATUS_ZOMBIE:
                found.append(child)
        except psutil.Error:
            continue
    return found


def wait_until(check: Callable[[], T | None], *, timeout: float, what: str) -> T:
    """``check()``'s first truthy value, polled; bounded."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} within {timeout:g} s")
        time.sleep(0.02)


def tool_call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
    return {"toolCalls": [{"id": call_id, "name": name, "arguments": arguments}]}


class Running:
    """``cowork exec ARGS`` running in the background, its output collected line by line as it comes."""

    def __init__(self, args: Sequence[str], env: Mapping[str, str], *, cwd: Path | None = None) -> None:
        self.process = subprocess.Popen(
            [*cowork_command(), *args],
            env=dict(env),
            cwd=cwd or REPO_ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stdout_lines: list[str] = []
        self.stderr_lines: list[str] = []
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        self._readers = [
            threading.Thread(target=_collect, args=(self.process.stdout, self.stdout_lines), daemon=True),
            threading.Thread(target=_collect, args=(self.process.stderr, self.stderr_lines), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def stdout(self) -> str:
        return "".join(self.stdout_lines)

    @property
    def stderr(self) -> str:
        return "".join(self.stderr_lines)

    def wait_for_stderr(self, text: str, *, timeout: float = 30) -> None:
        def seen() -> bool:
            if text in self.stderr:
                return True
            if self.process.poll() is not None:
                raise AssertionError(f"cowork exec ended ({self.process.returncode}):\n{self.stderr}")
            return False

        wait_until(seen, timeout=timeout, what=f"{text!r} on stderr")

    def interrupt(self) -> None:
        """SIGINT to the cowork process alone, as a terminal's Ctrl-C (the runtime has its own group)."""
        self.process.send_signal(signal.SIGINT)

    def wait(self, timeout: float = 30) -> int:
        code = self.process.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout=10)
        return code

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> Running:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _collect(stream: Any, into: list[str]) -> None:
    for line in stream:
        into.append(line)
