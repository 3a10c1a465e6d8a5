"""The runtime's JSON-RPC 2.0 server (seed 000 §3.1): dispatcher, connection, transports.

Names load on first use: the connection and transports are light, the dispatcher needs the wire models
(pydantic), and the program connects to the desktop before it pays for those.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .connection import DeferredDispatcher, FrameHandler, RpcConnection, connect_to_desktop, open_stdio
    from .dispatcher import Dispatcher, InvalidParams, StateConflict
    from .eager import in_own_task

_HOMES = {
    "DeferredDispatcher": ".connection",
    "FrameHandler": ".connection",
    "RpcConnection": ".connection",
    "connect_to_desktop": ".connection",
    "open_stdio": ".connection",
    "Dispatcher": ".dispatcher",
    "InvalidParams": ".dispatcher",
    "StateConflict": ".dispatcher",
    "in_own_task": ".eager",
}

__all__ = [
    "DeferredDispatcher",
    "Dispatcher",
    "FrameHandler",
    "InvalidParams",
    "RpcConnection",
    "StateConflict",
    "connect_to_desktop",
    "in_own_task",
    "open_stdio",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home, __name__), name)
