"""Running this package's helper modules as real child processes from the repository root."""

from __future__ import annotations

import subprocess
import sys

from tests.support.peers import REPO_ROOT

PACKAGE = "tests.agent_runtime.agent_host.state"


def run_module(name: str, *args: str, timeout: float = 60) -> str:
    """Run ``PACKAGE.name`` to completion; its stdout."""
    result = subprocess.run(
        [sys.executable, "-m", f"{PACKAGE}.{name}", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    return result.stdout


def start_module(name: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", f"{PACKAGE}.{name}", *args],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
