"""Starting the test peer (real runtime server code, separate process) behind a real listener."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contracts.ipc.client import JsonRpcClient
from contracts.ipc.framing import FrameDecoder, decode, encode
from contracts.ipc.listener import RuntimeListener

REPO_ROOT = Path(__file__).resolve().parents[2]


async def spawn_peer(*args: str, env: dict[str, str] | None = None) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.support.rpc_peer",
        *args,
        cwd=REPO_ROOT,
        env={**os.environ, **(env or {})},
        stdin=asyncio.subprocess.PIPE if "--stdio" in args else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE if "--stdio" in args else asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )


async def stop(process: asyncio.subprocess.Process, timeout: float = 5.0) -> int:
    try:
        async with asyncio.timeout(timeout):
            return await process.wait()
    except TimeoutError:
        process.kill()
        return await process.wait()


@dataclass
class RawPeer:
    """The bare byte stream to an authenticated peer, for exchanges the spec defines byte by byte."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    process: asyncio.subprocess.Process
    pending: list[bytes] = field(default_factory=list)
    decoder: FrameDecoder = field(default_factory=FrameDecoder)

    async def send(self, data: bytes | str) -> None:
        self.writer.write(data.encode() if isinstance(data, str) else data)
        await self.writer.drain()

    async def send_json(self, message: Any) -> None:
        await self.send(encode(message))

    async def receive(self, timeout: float = 5.0) -> Any:
        async with asyncio.timeout(timeout):
            while not self.pending:
                data = await self.reader.read(65536)
                if not data:
                    raise ConnectionError("peer closed the connection")
                self.pending.extend(self.decoder.feed(data))
        return decode(self.pending.pop(0))

    async def at_eof(self, timeout: float = 5.0) -> bool:
        """True when the peer closes the stream (after any replies it still had to send)."""
        async with asyncio.timeout(timeout):
            while await self.reader.read(65536):
                pass
        return True


async def start_connected_peer(**accept: Any) -> tuple[JsonRpcClient, asyncio.subprocess.Process]:
    """A test peer connected over the real socket, as a client; ``accept`` goes to ``accept()``."""
    listener = await RuntimeListener.open()
    async with listener:
        process = await spawn_peer("--connect", listener.name, env=listener.child_environment())
        client = await listener.accept(timeout=15, **accept)
    return client, process


@contextlib.asynccontextmanager
async def raw_peer() -> AsyncIterator[RawPeer]:
    listener = await RuntimeListener.open()
    async with listener:
        process = await spawn_peer("--connect", listener.name, env=listener.child_environment())
        reader, writer = await listener.accept_stream(timeout=15)
    peer = RawPeer(reader, writer, process)
    try:
        yield peer
    finally:
        writer.close()
        await stop(process)
