"""How a client starts the agent runtime: its command line and the environment it is given.

From source the runtime is ``python -m agent_runtime``; an installed app runs the updater's active
installation, whose executable it names in ``COWORK_RUNTIME_EXECUTABLE``. The environment carries the
backend and gateway settings (seed 000 §3.2) and never the caller's stale ones for either.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping

from desktop.launch.backend import BackendAccess
from desktop.launch.gateway import GatewaySettings

__all__ = ["RUNTIME_EXECUTABLE_VARIABLE", "runtime_command", "runtime_environment"]

RUNTIME_EXECUTABLE_VARIABLE = "COWORK_RUNTIME_EXECUTABLE"

# Set here from the resolved settings, so a value left in the caller's environment never leaks through.
_REPLACED = (
    "COWORK_BACKEND_URL",
    "COWORK_BACKEND_TOKEN",
    "COWORK_POLICY_KEYS",
    "COWORK_RPC_SECRET",
    "LLM_GATEWAY_ENDPOINT",
    "LLM_GATEWAY_API",
    "LLM_GATEWAY_MODEL",
    "LLM_GATEWAY_AUTH_TOKEN",
)


def runtime_command(environ: Mapping[str, str]) -> list[str]:
    """The runtime program, without its mode argument (``--stdio`` or ``--connect NAME``)."""
    executable = environ.get(RUNTIME_EXECUTABLE_VARIABLE, "").strip()
    if executable:
        return [executable]
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
