"""Fixtures of the MCP window tests that run real processes: a local backend whose policy allows the
``tickets`` server's tools, the official SDK's MCP server on loopback named in a project's
``.cowork/mcp.json``, and platform folders of the test's own for the whole-app tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.policy.config import builtin_policy
from tests.desktop.mcp.requests import SERVER
from tests.support.backend import Backend, start_backend
from tests.support.mcp_servers import ServerThread, sdk_server


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """A local backend whose policy lets sessions use every tool of the ``tickets`` MCP server."""
    root = tmp_path_factory.mktemp("mcp-backend")
    (root / "config").mkdir()
    capabilities = [
        *builtin_policy().template["capabilities"],
        {"name": "Mcp.Invoke", "allowedToolNames": [f"{SERVER}/*"]},
    ]
    (root / "config" / "default.json").write_text(json.dumps({"capabilities": capabilities}))
    with start_backend(root / "data", config_dir=root / "config") as running:
        yield running


@pytest.fixture
def mcp_server() -> Iterator[str]:
    app, _log = sdk_server()
    with ServerThread(app) as server:
        yield server.url


@pytest.fixture
def workspace(tmp_path: Path, mcp_server: str) -> Path:
    project = (tmp_path / "project").resolve()
    (project / ".cowork").mkdir(parents=True)
    config = {"servers": [{"name": SERVER, "url": mcp_server, "allowInsecureLoopback": True}]}
    (project / ".cowork" / "mcp.json").write_text(json.dumps(config))
    return project


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """platformdirs' folders under the test's own: settings, logs and data never touch the user's."""
    root = tmp_path / "home"
    for variable, folder in (
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CACHE_HOME", "cache"),
    ):
        (root / folder).mkdir(parents=True)
        monkeypatch.setenv(variable, str(root / folder))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    for name in (
        "COWORK_BACKEND_URL",
        "COWORK_BACKEND_TOKEN",
        "COWORK_POLICY_KEYS",
        "COWORK_RUNTIME_EXECUTABLE",
        "LLM_GATEWAY_ENDPOINT",
        "LLM_GATEWAY_API",
        "LLM_GATEWAY_MODEL",
        "LLM_GATEWAY_AUTH_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)
    return root
