"""Name resolution for HttpRequest, injectable so that tests can play DNS (rebinding, private answers)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

__all__ = ["Resolver", "SystemResolver"]


@runtime_checkable
class Resolver(Protocol):
    async def resolve(self, host: str, port: int) -> Sequence[str]:
        """Every address ``host`` resolves to, as IP strings; raise ``OSError`` when it does not."""
        ...


class SystemResolver:
    """The OS resolver (``getaddrinfo``), run by the event loop off its thread."""

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        loop = asyncio.get_running_loop()
        answers = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
        addresses: list[str] = []
        for _family, _type, _proto, _name, sockaddr in answers:
            address = str(sockaddr[0])
            if address not in addresses:
                addresses.append(address)
        return addresses
