"""The shell tool (seed 003 §4.4, §6.2): RunCommand."""

from __future__ import annotations

from agent_runtime.tool_runtime.tools.shell.process import SECRET_ENVIRONMENT
from agent_runtime.tool_runtime.tools.shell.run_command import RunCommand, RunCommandArguments

__all__ = ["SECRET_ENVIRONMENT", "RunCommand", "RunCommandArguments"]
