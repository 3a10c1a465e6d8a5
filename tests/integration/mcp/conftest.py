"""Fixtures of the MCP integration tests: the organisation's MCP server (named in the policy bundle) and
a local backend whose policy grants ``Mcp.Invoke`` for some tools, asks about one of them, and allows
local servers; a project's own server (``docs``, named in its ``.cowork/mcp.json``); a launcher of real
runtime processes, killed at the end with their output printed."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.integration.mcp.servers import DocsLog, LoopbackServer, docs_server
from tests.integration.runtime.harness import Backend, Launch, Runtime, runtime_environment, start_backend

ALLOWED_TOOLS = [
    *(f"docs/{name}" for name in ("search", "count", "delete_page", "ask_name", "grow", "extra", "hold")),
    "docs/progress",
    "org/*",
    "local/*",
    "sudoer/*",
]
CAPABILITIES = [
    "File.Read",
    "File.Write",
    "File.Delete",
    "Shell.Exec",
    "Network.Http",
    "Workspace.Upload",
    "LLM.Call",
    "Mcp.Invoke",
]


def mcp_policy(org_url: str) -> dict[str, Any]:
    """A policy file (backend config ``default.json``): the usual tools, and MCP."""
    return {
        "capabilities": [
            {"name": "File.Read", "allowedPaths": ["${workspace}"]},
            {"name": "File.Write", "allowedPaths": ["${workspace}"]},
            {"name": "File.Delete", "allowedPaths": ["${workspace}"], "requiresApproval": True},
            {"name": "Shell.Exec", "blockedCommands": ["sudo"], "approvalRuleId": "shell-exec"},
            {"name": "Network.Http"},
            {"name": "LLM.Call"},
            {"name": "Workspace.Upload"},
            {"name": "Mcp.Invoke", "allowedToolNames": ALLOWED_TOOLS},
        ],
        "approvalRules": [
            {"approvalRuleId": "shell-exec", "title": "Run a command"},
            {
                "approvalRuleId": "docs-delete",
                "title": "Delete a documentation page",
                "description": "The page is removed for every reader.",
                "riskLevel": "high",
                "toolNames": ["docs/delete_page"],
            },
        ],
        "mcpServers": [{"name": "org", "url": org_url, "allowInsecureLoopback": True}],
        "allowLocalMcpServers": True,
    }


@dataclass
class Org:
    server: LoopbackServer
    log: DocsLog


@pytest.fixture(scope="module")
def org() -> Iterator[Org]:
    app, log = docs_server()
    with LoopbackServer(app.streamable_http_app, log=log) as running:
        yield Org(running, log)


@pytest.fixture(scope="module")
def mcp_backend(tmp_path_factory: pytest.TempPathFactory, org: Org) -> Iterator[Backend]:
    config = tmp_path_factory.mktemp("mcp-backend-config")
    (config / "default.json").write_text(json.dumps(mcp_policy(org.server.url)))
    with start_backend(tmp_path_factory.mktemp("mcp-backend"), config_dir=config) as running:
        yield running


@dataclass
class Docs:
    server: LoopbackServer
    log: DocsLog


@pytest.fixture
def docs() -> Iterator[Docs]:
    app, log = docs_server()
    with LoopbackServer(app.streamable_http_app, log=log) as running:
        yield Docs(running, log)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    project = (tmp_path / "project").resolve()
    project.mkdir()
    return project


def write_mcp_json(workspace: Path, *servers: dict[str, Any]) -> Path:
    path = workspace / ".cowork" / "mcp.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"servers": list(servers)}))
    return path


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return (tmp_path / "runtime-data").resolve()


@pytest.fixture
async def launch(mcp_backend: Backend, data_dir: Path) -> AsyncIterator[Launch]:
    """``await launch(gateway.url)`` → a connected :class:`Runtime`; all of them killed at the end."""
    started: list[Runtime] = []

    async def _launch(
        gateway_url: str,
        *,
        backend: Backend = mcp_backend,
        data_dir: Path = data_dir,
        approval_timeout_s: float = 60,
        extra: dict[str, str] | None = None,
        label: str | None = None,
    ) -> Runtime:
        env = runtime_environment(
            backend,
            gateway_url,
            data_dir,
            approval_timeout_s=approval_timeout_s,
            extra={"COWORK_MCP_BACKOFF_S": "0.5", **(extra or {})},
        )
        runtime = await Runtime.launch(env, label=label or f"runtime #{len(started) + 1}")
        started.append(runtime)
        return runtime

    yield _launch
    invalid: list[str] = []
    for runtime in started:
        await runtime.aclose()
        print(f"----- {runtime.label} (exit {runtime.process.returncode}) events: {runtime.types()}")
        print(runtime.output_text()[-20_000:])
        invalid += [f"{runtime.label}: {problem}" for problem in runtime.id_chain_problems()]
    assert not invalid, "SessionEvents that break the contract or the ID chain:\n" + "\n".join(invalid)
