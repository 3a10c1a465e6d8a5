"""Which remote tools a session offers the model (seed 000 §7.6, §5.2).

Asked once when the session starts (and again when a refreshed bundle first grants the capability):
``GET /tools`` lists what the Backend Tool Service offers this tenant; the session keeps those its own
bundle's ``BackendTool.Invoke`` grant allows — the bundle is what the runtime enforces, whatever the
service says. A tool whose name could be mistaken for another — a built-in's, a session tool's, an MCP
tool's ``server/tool`` form, or no valid tool name at all — is left out: a call of that name must
reach exactly one tool.

The question is bounded (:data:`DISCOVERY_TIMEOUT_S`): a service that is slow or down leaves the
session without remote tools rather than holding up its start.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection
from dataclasses import dataclass

from agent_runtime.agent_host.policy import PolicyEnforcer
from contracts.enums import Capability
from contracts.errors import CoworkError
from contracts.rest.tools import is_remote_tool_name
from contracts.tools import ToolDefinition

from .router import BackendToolClient

__all__ = ["DISCOVERY_TIMEOUT_S", "Discovery", "discover_backend_tools", "remote_tool_allowed"]

logger = logging.getLogger(__name__)

DISCOVERY_TIMEOUT_S = 5.0
"""The longest a session's start waits for ``GET /tools``."""


@dataclass(frozen=True, slots=True)
class Discovery:
    tools: list[ToolDefinition]
    problem: str | None = None
    """Why the service's list could not be had (the session then offers no remote tool)."""


def remote_tool_allowed(enforcer: PolicyEnforcer, tool_name: str) -> bool:
    """Whether the bundle's ``BackendTool.Invoke`` grant allows ``tool_name`` (no list: any)."""
    grant = enforcer.grant(Capability.BACKEND_TOOL_INVOKE)
    if grant is None:
        return False
    return grant.allowed_tool_names is None or tool_name in grant.allowed_tool_names


async def discover_backend_tools(
    client: BackendToolClient,
    enforcer: PolicyEnforcer,
    *,
    reserved: Collection[str],
    timeout_s: float = DISCOVERY_TIMEOUT_S,
) -> Discovery:
    """The remote tools to offer: the service's, allowed by the bundle, none named like ``reserved``
    (the tools the session has already). Never raises but for cancellation."""
    if enforcer.grant(Capability.BACKEND_TOOL_INVOKE) is None:
        return Discovery([])
    try:
        async with asyncio.timeout(timeout_s):
            offered = await client.list_backend_tools()
    except TimeoutError:
        return Discovery([], f"the Backend Tool Service did not answer within {timeout_s:g} seconds")
    except CoworkError as exc:
        return Discovery([], exc.shape.message)
    kept: list[ToolDefinition] = []
    seen: set[str] = set(reserved)
    for tool in offered:
        name = tool.tool_name
        if not is_remote_tool_name(name):
            logger.warning("leaving out the remote tool %r: not a usable tool name", name[:80])
        elif name in seen:
            logger.warning("leaving out the remote tool %s: another tool has that name", name)
        elif remote_tool_allowed(enforcer, name):
            seen.add(name)
            kept.append(tool)
    return Discovery(kept)
