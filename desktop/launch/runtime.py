"""How a client starts the agent runtime: its command line and the environment it is given.

From source the runtime is ``python -m agent_runtime``; the frozen app runs the updater's active
installation (``desktop.updater.active``); ``COWORK_RUNTIME_EXECUTABLE`` overrides both. The
environment carries the backend and gateway settings (seed 000 §3.2) and never the caller's stale
ones for either.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping

from desktop.launch.backend import BackendAccess
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
# tools, uploads and model calls, but no backend-side tools.
SUPPORTED_CAPABILITIES = (
    "File.Read",
    "File.Write",
    "File.Delete",
    "Shell.Exec",
    "Network.Http",
    "Workspace.Upload",
    "LLM.Call",
)

# Set here from the resolved settings, so a value left in the caller's environment never leaks through.
_REPLACED = (
    "COWORK_BACKEND_URL",
    "COWORK_BACKEND_TOKEN",
    "COWORK_POLICY_KEYS",
    "COWORK_RPC_SECRET",
    *GATEWAY_VARIABLES,
)


def runtime_command(environ: Mapping[str, str]) -> list[str]:
    """The runtime program, without its mode argument (``--stdio`` or ``--connect NAME``):
    ``COWORK_RUNTIME_EXECUTABLE`` if set; in the frozen app, the updater's active installation (or
    the runtime bundled with the app); from source, ``python -m agent_runtime``."""
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
    return [sys.executable, "-m", "agent_runtime"]


def runtime_environment(
    environ: Mapping[str, str], backend: BackendAccess, gateway: GatewaySettings
) -> dict[str, str]:
    env = {key: value for key, value in environ.items() if key not in _REPLACED}
    env["COWORK_BACKEND_URL"] = backend.url
    env["COWORK_BACKEND_TOKEN"] = backend.token
    if backend.policy_keys is not None:
        env["COWORK_POLICY_KEYS"] = json.dumps(backend.policy_keys)
    env.update(gateway.environment())
    env["PYTHONUNBUFFERED"] = "1"
    return env
