"""The desktop's side of the desktop ⇄ runtime wire: the local server a runtime connects back to and
the Qt JSON-RPC client on that connection (framing, handshake and bookkeeping live in ``contracts.ipc``).
"""

from desktop.ipc.client import QtJsonRpcClient
from desktop.ipc.local_server import RuntimeServer

__all__ = ["QtJsonRpcClient", "RuntimeServer"]
