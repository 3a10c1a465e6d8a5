"""How a client starts the agent runtime: its command line and the environment it is given.

From source the runtime is ``python -P -m agent_runtime``; the frozen app runs the updater's active
installation (``desktop.updater.active``); ``COWORK_RUNTIME_EXECUTABLE`` overrides both. The
environment carries the backend and gateway settings (seed 000 §3.2) and never the caller's stale
ones for either; the embedded backend may be named by its state file, so the runtime can start
before that backend is up.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from contracts.local_backend import STATE_FILE_VARIABLE
from desktop.launch.backend import BackendAccess, SessionBackend, runtime_variables_of
from desktop.launch.errors import LaunchError
from desktop.launch.gateway import GATEWAY_VARIABLES, GatewaySettings

__all__ = [
    "RUNTIME_EXECUTABLE_VARIABLE",
    "SUPPORTED_CAPABILITIES",
    "runtime_command",
    "runtime_environment",
]

RUNTIME_EXECUTABLE_VARIABLE = "COWORK_RUNTIME_EXECUTABLE"

# What a Cowork client carries out for the runtime (CreateSession's supportedCapabilities): the local
# tools, uploads, model calls, MCP tools (seed 003 §9) and the Backend Tool Service's remote tools,
# which the runtime routes through the same policy checks and approvals (seed 000 §7.6).
SUPPORTED_CAPABILITIES = (
    "File.Read",
    "File.Write",
    "File.Delete",
    "Shell.Exec",
    "Network.Http",
    "Workspace.Upload",
    "BackendTool.Invoke",
    "LLM.Call",
    "Mcp.Invoke",
)

# Set here from the resolved settings, so a value left in the caller's environment never leaks through.
_REPLACED = (
    "COWORK_BACKEND_URL",
    "COWORK_BACKEND_TOKEN",
    "COWORK_POLICY_KEYS",
    STATE_FILE_VARIABLE,
    "COWORK_RPC_SECRET",
    *GATEWAY_VARIABLES,
)


def runtime_command(environ: Mapping[str, str]) -> list[str]:
    """The runtime program, without its mode argument (``--stdio`` or ``--connect NAME``):
    ``COWORK_RUNTIME_EXECUTABLE`` if set; in the frozen app, the updater's active installation (or
    the runtime bundled with the app); from source, ``python -P -m agent_runtime``."""
    executable = environ.get(RUNTIME_EXECUTABLE_VARIABLE, "").strip()
    if executable:
        return [executable]
    if getattr(sys, "frozen", False):
        # Imported only here: from source, cowork exec never pays for the updater's imports.
        from desktop.updater.active import NoRuntimeAvailable, active_runtime

        try:
            return active_runtime().command()
        except NoRuntimeAvailable as exc:
            raise LaunchError(str(exc)) from None
    # -P: the runtime runs in the project folder, whose files must not stand in for its modules (a
    # folder named contracts/ or a typing.py would otherwise be imported in their place).
    return [sys.executable, "-P", "-m", "agent_runtime"]


def runtime_environment(
    environ: Mapping[str, str], backend: BackendAccess | SessionBackend, gateway: GatewaySettings
) -> dict[str, str]:
    """``backend``: one known now, or one still being found or started (the runtime then reads the
    embedded backend's state file when it first calls it; ``contracts.local_backend``)."""
    env = {key: value for key, value in environ.items() if key not in _REPLACED}
    env.update(runtime_variables_of(backend))
    env.update(gateway.environment())
    env["PYTHONUNBUFFERED"] = "1"
    return env
