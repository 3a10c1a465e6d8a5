"""Where a session's MCP servers come from (seed 003 §9.2 step 1): the policy bundle, then each project
folder's ``.cowork/mcp.json`` (``{"servers": [...]}``, :class:`contracts.mcp.WorkspaceMcpConfig`).

The project's file is read leniently and reported exactly: a file that is not JSON or not the expected
object is skipped as a whole, an entry that does not validate is skipped alone — each with a warning
naming the file and the field — and the session goes on with what is usable. A project entry never
replaces a bundle server of the same name (the organisation's server keeps its name), nor an earlier
entry of its own.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from contracts.mcp import MAX_MCP_SERVERS, McpServerConfig, McpServerSource
from contracts.validation import invalid_request, validate_json_value

__all__ = ["MAX_CONFIG_BYTES", "WORKSPACE_CONFIG", "ConfigProblem", "ConfiguredServer", "load_servers"]

logger = logging.getLogger(__name__)

WORKSPACE_CONFIG = os.path.join(".cowork", "mcp.json")
MAX_CONFIG_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ConfiguredServer:
    config: McpServerConfig
    source: McpServerSource
    path: str | None = None
    """The project file it came from."""


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """Something in the configuration that was not used; the message says what and why."""

    message: str
    source: McpServerSource
    path: str | None = None
    server_name: str | None = None


def load_servers(
    bundle_servers: Sequence[McpServerConfig], workspace_paths: Sequence[str]
) -> tuple[list[ConfiguredServer], list[ConfigProblem]]:
    """The servers to use, in order (bundle first), and the problems found on the way."""
    servers = [ConfiguredServer(config, McpServerSource.POLICY) for config in bundle_servers]
    problems: list[ConfigProblem] = []
    names = {server.config.name: server for server in servers}
    for root in workspace_paths:
        path = os.path.join(root, WORKSPACE_CONFIG)
        if not os.path.isfile(path):
            continue
        entries, file_problems = _read_file(path)
        problems += file_problems
        for config in entries:
            taken = names.get(config.name)
            if taken is not None:
                where = "the policy" if taken.source is McpServerSource.POLICY else taken.path
                problems.append(
                    ConfigProblem(
                        f"{path}: the server {config.name} is not used: {where} already names a server"
                        f" {config.name}",
                        McpServerSource.WORKSPACE,
                        path,
                        config.name,
                    )
                )
                continue
            server = ConfiguredServer(config, McpServerSource.WORKSPACE, path)
            names[config.name] = server
            servers.append(server)
    for problem in problems:
        logger.warning("MCP configuration: %s", problem.message)
    return servers, problems


def _read_file(path: str) -> tuple[list[McpServerConfig], list[ConfigProblem]]:
    def problem(message: str, server_name: str | None = None) -> ConfigProblem:
        return ConfigProblem(f"{path}: {message}", McpServerSource.WORKSPACE, path, server_name)

    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        return [], [problem(f"cannot be read ({exc.strerror or exc}); its MCP servers are not used")]
    if len(data) > MAX_CONFIG_BYTES:
        return [], [problem(f"is larger than {MAX_CONFIG_BYTES // 1024} KB; its MCP servers are not used")]
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        return [], [problem("is not UTF-8 text; its MCP servers are not used")]
    except json.JSONDecodeError as exc:
        return [], [
            problem(
                f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); its MCP servers are"
                " not used"
            )
        ]
    if not isinstance(document, dict) or set(document) - {"servers"} or "servers" not in document:
        return [], [problem('must be a JSON object {"servers": [...]}; its MCP servers are not used')]
    entries = document["servers"]
    if not isinstance(entries, list):
        return [], [problem("servers must be a list; its MCP servers are not used")]
    configs: list[McpServerConfig] = []
    problems: list[ConfigProblem] = []
    for index, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else None
        label = name if isinstance(name, str) else None
        if index >= MAX_MCP_SERVERS:
            problems.append(problem(f"servers[{index}] and later are not used: at most {MAX_MCP_SERVERS}"))
            break
        try:
            config = validate_json_value(McpServerConfig, entry)
        except ValidationError as exc:
            shape = invalid_request(exc, prefix=f"servers[{index}]")
            problems.append(problem(f"{shape.message}; this server is not used", label))
            continue
        if any(config.name == other.name for other in configs):
            problems.append(problem(f"servers[{index}]: the name {config.name} is used twice", config.name))
            continue
        configs.append(config)
    return configs, problems
