"""Nothing MCP loads on the runtime's start path: the package is empty, the probe is imported on demand."""

from __future__ import annotations

import subprocess
import sys

from tests.support.peers import REPO_ROOT

HEAVY = ("mcp", "mcp.", "mcp_types", "jsonschema", "httpx2", "agent_runtime.tool_runtime.mcp.")

CHECK = f"""
import sys
{{imports}}
print(",".join(sorted(m for m in sys.modules if m == "mcp" or m.startswith({HEAVY[1:]!r}))))
"""


def _loaded_after(*modules: str) -> list[str]:
    script = CHECK.replace("{imports}", "\n".join(f"import {module}" for module in modules))
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    return [name for name in done.stdout.strip().split(",") if name]


def test_the_entry_point_and_the_package_load_no_mcp_module() -> None:
    assert _loaded_after("agent_runtime.main", "agent_runtime.tool_runtime.mcp") == []


def test_the_session_does_not_load_the_sdk() -> None:
    loaded = _loaded_after("agent_runtime.tool_runtime.mcp.session")
    assert not [name for name in loaded if name == "mcp" or name.startswith(("mcp.", "mcp_types", "httpx2"))]
