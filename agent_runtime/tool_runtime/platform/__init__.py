"""OS abstraction for the tools (seed 003 §6): path handling, shell resolution, encodings.

``current_platform()`` picks the adapter of the OS this process runs on; tests construct any adapter
directly, with an injected environment and symlink resolution.
"""

from __future__ import annotations

import sys

from agent_runtime.tool_runtime.platform.base import Platform, ShellCommand
from agent_runtime.tool_runtime.platform.posix import LinuxPlatform, MacOSPlatform, PosixPlatform
from agent_runtime.tool_runtime.platform.windows import WindowsPlatform

__all__ = [
    "LinuxPlatform",
    "MacOSPlatform",
    "Platform",
    "PosixPlatform",
    "ShellCommand",
    "WindowsPlatform",
    "current_platform",
]


def current_platform() -> Platform:
    """The adapter for this OS, reading this process's environment."""
    if sys.platform == "win32":
        return WindowsPlatform()
    if sys.platform == "darwin":
        return MacOSPlatform()
    return LinuxPlatform()
