"""Every bash script in the repository — the README's commands, CI's entry, the packaging and signing
scripts — is strict bash that parses, passes shellcheck, is executable in git, and never traces its
commands (the signing scripts handle passwords)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.installer.fakes import is_tracked_executable, shellcheck
from tests.support.peers import REPO_ROOT

SCRIPTS = sorted(
    path
    for folder in ("scripts", ".ci", "installer")
    for path in (REPO_ROOT / folder).rglob("*")
    if path.is_file() and path.read_bytes().startswith(b"#!/usr/bin/env bash\n")
)


def test_the_packaging_scripts_are_among_them() -> None:
    names = {str(path.relative_to(REPO_ROOT)) for path in SCRIPTS}
    assert {"scripts/test", ".ci/run", "installer/macos/sign", "installer/windows/sign"} <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_script_is_strict_executable_bash_that_parses(script: Path) -> None:
    text = script.read_text(encoding="utf-8")
    # .ci/run reads pytest's exit status itself, so only it may go on after a failing command.
    strict = "set -uo pipefail" if script == REPO_ROOT / ".ci" / "run" else "set -euo pipefail"
    assert re.search(f"^{strict}$", text, re.M), f"{strict} is missing"
    tracing = re.search(r"^\s*set\s+-[a-z]*x|^\s*set\s+-o\s+xtrace", text, re.M)
    assert tracing is None, "tracing would print the secrets the signing scripts handle"
    if os.name != "nt":  # Windows has no execute bits: git's mode, below, is what a checkout gets
        assert script.stat().st_mode & 0o111 == 0o111
    assert is_tracked_executable(script) in (True, None)
    # From PATH (Git Bash's on Windows, where a bare "bash" would first find System32's WSL launcher).
    subprocess.run([shutil.which("bash") or "bash", "-n", str(script)], check=True)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_script_passes_shellcheck(script: Path) -> None:
    program = shellcheck()
    if program is None:
        pytest.skip("shellcheck is not installed")
    result = subprocess.run([program, str(script)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout
