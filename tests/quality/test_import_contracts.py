"""Every import-linter contract in pyproject.toml can fail: for each one we plant a single violating
import in a scratch tree shaped like ours and watch that contract, and only that one, break."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
CONTRACT_IDS = [contract["id"] for contract in CONFIG["contracts"]]

PACKAGES = [
    "contracts",
    "desktop",
    "desktop/headless",
    "desktop/launch",
    "desktop/ipc",
    "desktop/updater",
    "desktop/conversation",
    "desktop/app",
    "desktop/supervision",
    "backend",
    "agent_runtime",
    "agent_runtime/agent_host",
    "agent_runtime/agent_host/policy",
    "agent_runtime/agent_host/session",
    "agent_runtime/agent_host/loop",
    "agent_runtime/agent_host/session_runtime",
    "agent_runtime/tool_runtime",
    "agent_runtime/scripted_gateway",
    "cowork_release",
    *(
        f"backend/{part}"
        for part in (
            "cli",
            "operations",
            "apps",
            "local_mode",
            "storage",
            "storage/aws",
            "peers",
            "session",
            "policy",
            "workspace",
            "approval",
            "audit",
            "telemetry",
            "tools",
            "common",
        )
    ),
]

VIOLATIONS = {
    "parts-talk-over-the-wire": ("desktop/bad.py", "import agent_runtime\n"),
    "contracts-stand-alone": ("contracts/bad.py", "import backend\n"),
    "host-and-tools-apart": ("agent_runtime/agent_host/bad.py", "from agent_runtime import tool_runtime\n"),
    "qt-only-in-desktop": ("agent_runtime/bad.py", "from PySide6 import QtCore\n"),
    "boto3-only-in-backend": ("desktop/bad.py", "import boto3\n"),
    "headless-is-qt-free": ("desktop/headless/bad.py", "import desktop.ipc\n"),
    "gateway-stands-alone": ("agent_runtime/scripted_gateway/bad.py", "import agent_runtime.agent_host\n"),
    "runtime-ignores-the-gateway": (
        "agent_runtime/tool_runtime/bad.py",
        "from agent_runtime import scripted_gateway\n",
    ),
    "policy-is-pure": ("agent_runtime/agent_host/policy/bad.py", "import socket\n"),
    "backend-layers": ("backend/session/bad.py", "from backend import workspace\n"),
    "boto3-only-in-the-aws-store": ("backend/common/bad.py", "import boto3\n"),
    "release-tooling-stands-alone": ("cowork_release/bad.py", "import agent_runtime\n"),
    "updater-logic-is-qt-free": ("desktop/updater/bad.py", "from PySide6 import QtCore\n"),
    "session-runtime-below-the-loop": (
        "agent_runtime/agent_host/session_runtime/bad.py",
        "from agent_runtime.agent_host import loop\n",
    ),
    "conversation-logic-is-qt-free": ("desktop/conversation/bad.py", "import desktop.supervision\n"),
}


def _ini(config: dict[str, object]) -> str:
    """The same contracts in import-linter's INI format, for a scratch tree."""

    def value(item: object) -> str:
        if isinstance(item, list):
            return "".join(f"\n    {entry}" for entry in item)
        return str(item)

    lines = ["[importlinter]"]
    lines += [f"{key} = {value(item)}" for key, item in config.items() if key != "contracts"]
    for contract in config["contracts"]:  # type: ignore[attr-defined]
        lines.append(f"\n[importlinter:contract:{contract['id']}]")
        lines += [f"{key} = {value(item)}" for key, item in contract.items() if key != "id"]
    return "\n".join(lines) + "\n"


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(lint_imports), "--config", str(tree / ".importlinter"), "--no-cache"],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


ALLOWED = {
    # The one place boto3 belongs: a tree without it would leave that contract's exceptions unused.
    "backend/storage/aws/client.py": "import boto3\nimport botocore\n",
    # The updater's one Qt adapter.
    "desktop/updater/qt.py": "from PySide6 import QtCore\n",
}


def _scratch_tree(root: Path) -> Path:
    for package in PACKAGES:
        (root / package).mkdir(parents=True, exist_ok=True)
        (root / package / "__init__.py").write_text("")
    for module, source in ALLOWED.items():
        (root / module).write_text(source)
    (root / ".importlinter").write_text(_ini(CONFIG))
    return root


def test_every_contract_has_a_violation_that_proves_it() -> None:
    assert sorted(VIOLATIONS) == sorted(CONTRACT_IDS)


def test_a_tree_without_violations_keeps_every_contract(tmp_path: Path) -> None:
    result = _lint(_scratch_tree(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(CONTRACT_IDS)} kept, 0 broken" in result.stdout


@pytest.mark.parametrize("contract_id", CONTRACT_IDS)
def test_a_violating_import_breaks_exactly_its_contract(tmp_path: Path, contract_id: str) -> None:
    tree = _scratch_tree(tmp_path)
    module, source = VIOLATIONS[contract_id]
    (tree / module).write_text(source)
    result = _lint(tree)
    assert result.returncode == 1, result.stdout
    name = next(c["name"] for c in CONFIG["contracts"] if c["id"] == contract_id)
    assert f"{name} BROKEN" in result.stdout
    assert f"{len(CONTRACT_IDS) - 1} kept, 1 broken" in result.stdout
