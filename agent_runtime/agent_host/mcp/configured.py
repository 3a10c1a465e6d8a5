"""Whether a session has MCP servers to connect to: cheap enough for every session's start."""

from __future__ import annotations

import os
from collections.abc import Sequence

from contracts.policy import PolicyBundle

__all__ = ["WORKSPACE_CONFIG", "mcp_configured", "workspace_config_paths"]

WORKSPACE_CONFIG = os.path.join(".cowork", "mcp.json")
"""The project's MCP servers, relative to each project folder (docs/user-guide/mcp.md: the format)."""


def workspace_config_paths(workspace_paths: Sequence[str]) -> list[str]:
    """The project folders' ``.cowork/mcp.json`` files that exist, in folder order."""
    found = []
    for root in workspace_paths:
        path = os.path.join(root, WORKSPACE_CONFIG)
        if os.path.isfile(path):
            found.append(path)
    return found


def mcp_configured(bundle: PolicyBundle, workspace_paths: Sequence[str]) -> bool:
    """True when the bundle or a project folder names MCP servers (even ones that end up unusable:
    the user is then told why)."""
    return bool(bundle.mcp_servers) or bool(workspace_config_paths(workspace_paths))
