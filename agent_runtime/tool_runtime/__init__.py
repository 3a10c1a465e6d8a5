"""The Local Tool Runtime (seed 003): the built-in tools behind the host's ``ToolRouter`` protocol.

``LocalToolRouter`` is the entry point; one composition root hands it to the agent host, which knows
it only as a ``ToolRouter`` (the two packages never import each other).

Layout (seed 003 §2): ``router/`` dispatch and registry; ``tools/file``, ``tools/shell``,
``tools/network`` the tools; ``platform/`` the OS adapters; ``output/`` truncation and artifacts.
"""

from __future__ import annotations

from agent_runtime.tool_runtime.errors import DestinationRefused, ToolFailure, ToolRuntimeError
from agent_runtime.tool_runtime.platform import (
    LinuxPlatform,
    MacOSPlatform,
    Platform,
    PosixPlatform,
    WindowsPlatform,
    current_platform,
)
from agent_runtime.tool_runtime.router import LocalToolRouter
from agent_runtime.tool_runtime.tools.network import Resolver, SystemResolver

__all__ = [
    "DestinationRefused",
    "LinuxPlatform",
    "LocalToolRouter",
    "MacOSPlatform",
    "Platform",
    "PosixPlatform",
    "Resolver",
    "SystemResolver",
    "ToolFailure",
    "ToolRuntimeError",
    "WindowsPlatform",
    "current_platform",
]
