"""Local backends whose policy an administrator changed (``default.toml`` in the config directory), for
the end-to-end tests of remote tools and upload policy: real ``cowork-backend serve`` processes."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tests.integration.runtime.harness import ALL_CAPABILITIES, Backend, start_backend

__all__ = ["CAPABILITIES", "UPLOAD_LIMIT", "governed_backend", "offered"]

CAPABILITIES = [*ALL_CAPABILITIES, "BackendTool.Invoke"]
"""What a client that routes remote tools declares (CreateSession's supportedCapabilities)."""

UPLOAD_LIMIT = 64 * 1024
"""The ``maxFileSizeBytes`` of the governed policy's ``Workspace.Upload``: a session history fits."""

LLM = {
    "allowedModels": ["*"],
    "maxInputTokens": 200_000,
    "maxOutputTokens": 16_384,
    "maxSessionTokens": 10**7,
}
WEB_FETCH_RULE = {
    "approvalRuleId": "web-fetch",
    "title": "Fetch a web page",
    "description": "The backend would fetch this page and show it to the agent.",
    "riskLevel": "medium",
    "toolNames": ["WebFetch"],
}


def policy(*, remote_tools: list[str], uploads: bool) -> dict[str, Any]:
    """Read and write the project; remote tools as listed; uploads (with a size limit) or none."""
    capabilities: list[dict[str, Any]] = [
        {"name": "File.Read", "allowedPaths": ["${workspace}"]},
        {"name": "File.Write", "allowedPaths": ["${workspace}"]},
        {"name": "LLM.Call"},
        {"name": "BackendTool.Invoke", "allowedToolNames": remote_tools},
    ]
    if uploads:
        capabilities.append({"name": "Workspace.Upload", "maxFileSizeBytes": UPLOAD_LIMIT})
    return {"capabilities": capabilities, "approvalRules": [WEB_FETCH_RULE], "llmPolicy": LLM}


def governed_backend(root: Path, document: Mapping[str, Any]) -> Iterator[Backend]:
    """A local backend with ``document`` as every tenant's policy; WebFetch may reach loopback pages
    (``[tools] webFetchAllowLoopback``, for tests only)."""
    config = root / "config"
    config.mkdir(parents=True)
    (config / "backend.toml").write_text("[tools]\nwebFetchAllowLoopback = true\n")
    (config / "default.json").write_text(json.dumps(document))
    with start_backend(root / "data", config_dir=config) as running:
        yield running


def offered(body: Mapping[str, Any]) -> set[str]:
    """The tool names one recorded LLM request offered (Anthropic dialect: ``tools[].name``)."""
    return {tool["name"] for tool in body.get("tools", [])}
