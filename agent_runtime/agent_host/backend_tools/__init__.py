"""Remote tools: the Backend Tool Service's tools, routed like local ones (seed 000 §7.2, §7.6).

:func:`discover_backend_tools` asks the service which tools it offers (``GET /tools``) when the bundle
grants ``BackendTool.Invoke`` and keeps those the grant's ``allowedToolNames`` allow;
:class:`BackendToolRouter` is their ``ToolRouter``: each call goes to ``POST /tools/{toolName}/invoke``
after the policy check and approvals the loop applies to every tool.
"""

from .discovery import DISCOVERY_TIMEOUT_S, discover_backend_tools, remote_tool_allowed
from .router import BackendToolClient, BackendToolRouter

__all__ = [
    "DISCOVERY_TIMEOUT_S",
    "BackendToolClient",
    "BackendToolRouter",
    "discover_backend_tools",
    "remote_tool_allowed",
]
