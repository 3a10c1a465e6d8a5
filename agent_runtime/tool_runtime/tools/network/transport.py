"""HttpRequest's connections: the shared SSRF-guarded transport (:mod:`contracts.egress`, seed 003
§8.3) speaking the tool runtime's errors — a refused destination is ``DestinationRefused``
(INVALID_REQUEST) and a host that does not resolve TOOL_EXECUTION_FAILED, as the seed's codes ask.
"""

from __future__ import annotations

from agent_runtime.tool_runtime.errors import DestinationRefused, ToolFailure
from contracts import egress
from contracts.egress import GuardedTransport
from contracts.errors import ErrorCode

__all__ = ["GuardedNetworkBackend", "GuardedTransport"]


class GuardedNetworkBackend(egress.GuardedNetworkBackend):
    def refused(self, message: str) -> Exception:
        return DestinationRefused(message)

    def not_found(self, message: str) -> Exception:
        return ToolFailure(ErrorCode.TOOL_EXECUTION_FAILED, message)
