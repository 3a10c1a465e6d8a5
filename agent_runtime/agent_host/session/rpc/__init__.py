"""The runtime's JSON-RPC 2.0 server (seed 000 §3.1): dispatcher, connection, transports."""

from .connection import RpcConnection, connect_to_desktop, open_stdio
from .dispatcher import Dispatcher, InvalidParams

__all__ = ["Dispatcher", "InvalidParams", "RpcConnection", "connect_to_desktop", "open_stdio"]
