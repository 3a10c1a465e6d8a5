"""``installer/entry.py``, the installed app's entry point, run from source: ``--cowork-child`` runs an
allowlisted helper's ``main`` and refuses anything else; any other arguments are ``cowork``'s.
(The frozen programs are exercised by test_linux_package.)"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.peers import REPO_ROOT

ENTRY = REPO_ROOT / "installer" / "entry.py"


def entry(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ENTRY), *args],
        cwd=REPO_ROOT,
        env=dict(os.environ, QT_QPA_PLATFORM="offscreen"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    "module", ["os", "agent_runtime", "agent_runtime.main", "desktop.cli", "backend.cli.evil", "../x"]
)
def test_a_module_off_the_allowlist_is_refused_with_exit_2(module: str) -> None:
    result = entry("--cowork-child", module, "-c", "print('ran')")
    assert result.returncode == 2
    assert "ran" not in result.stdout
    assert result.stderr.strip() == (
        f"cowork: --cowork-child {module!r} is not one of the app's helper programs "
        "(backend.cli, agent_runtime.scripted_gateway)"
    )


def test_the_option_without_a_module_is_a_usage_error() -> None:
    result = entry("--cowork-child")
    assert (result.returncode, result.stderr.strip()) == (2, "cowork: --cowork-child needs a module name")


def test_an_allowlisted_helper_gets_its_arguments() -> None:
    result = entry("--cowork-child", "backend.cli", "token", "--help")
    assert result.returncode == 0, result.stderr
    assert "--tenant" in result.stdout


def test_other_arguments_are_cowork_s_own() -> None:
    result = entry("exec", "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: cowork exec")
