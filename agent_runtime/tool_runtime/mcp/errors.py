"""What can go wrong talking to an MCP server, as one small tree under the tool runtime's root.

::

    ToolRuntimeError
     └── McpError                    every MCP failure; str() is a sentence a user can read
          ├── McpInsecureUrl         http:// to a non-loopback host, or to loopback without the opt-in
          ├── McpTransportError      connection refused or reset, an unexpected status, a body we cannot read
          ├── McpProtocolError       the server answered with a JSON-RPC error (code, message, data)
          ├── McpUnsupportedVersion  the server speaks only a protocol revision this client does not
          ├── McpTimeout             no answer within the per-call timeout (seed 000 §7.4: 120 s)
          ├── McpResponseTooLarge    a response body over the cap (seed 003 §9.3: 10 MB), aborted
          └── McpAuthorizationError  401/403 that authorization could not fix

httpx and OS errors are translated once, where they leave the transport (``raise … from exc``).
"""

from __future__ import annotations

from agent_runtime.tool_runtime.errors import ToolRuntimeError

__all__ = [
    "McpAuthorizationError",
    "McpError",
    "McpInsecureUrl",
    "McpProtocolError",
    "McpResponseTooLarge",
    "McpTimeout",
    "McpTransportError",
    "McpUnsupportedVersion",
]


class McpError(ToolRuntimeError):
    """Root of every MCP client error."""


class McpInsecureUrl(McpError):
    """The endpoint is not https:// (plain http:// only to loopback, and only when configured so)."""


class McpTransportError(McpError):
    """The HTTP exchange failed: no connection, a status the protocol does not allow, an unreadable body."""


class McpProtocolError(McpError):
    """A JSON-RPC error the server answered with."""

    def __init__(self, code: int, message: str, data: object | None = None) -> None:
        super().__init__(f"The MCP server answered with an error: {message} (code {code})")
        self.code = code
        self.message = message
        self.data = data


class McpUnsupportedVersion(McpError):
    """The server answered ``initialize`` with a protocol revision outside the ones this client speaks."""

    def __init__(self, offered: str, answered: object, supported: tuple[str, ...]) -> None:
        super().__init__(
            f"The MCP server speaks protocol version {answered!r}; this client speaks "
            f"{', '.join(supported)} (it offered {offered})"
        )
        self.answered = answered


class McpTimeout(McpError):
    """No answer within the call's timeout; a cancellation was sent to the server."""

    def __init__(self, method: str, timeout_s: float) -> None:
        super().__init__(f"The MCP server did not answer {method} within {timeout_s:g} s")
        self.method = method
        self.timeout_s = timeout_s


class McpResponseTooLarge(McpError):
    """A response body went over the cap; reading stopped there and the connection was dropped."""

    def __init__(self, limit_bytes: int) -> None:
        super().__init__(f"The MCP server's response is larger than {_size(limit_bytes)}; it was aborted")
        self.limit_bytes = limit_bytes


class McpAuthorizationError(McpError):
    """The server refused our credentials (401/403) and authorization could not fix it."""

    def __init__(self, status: int, detail: str = "") -> None:
        what = "requires authorization" if status == 401 else "refused access"
        super().__init__(f"The MCP server {what} (HTTP {status}){': ' + detail if detail else ''}")
        self.status = status


def _size(limit: int) -> str:
    if limit >= 2**20 and limit % 2**20 == 0:
        return f"{limit // 2**20} MB"
    return f"{limit:,} bytes"
