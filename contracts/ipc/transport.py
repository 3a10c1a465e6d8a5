"""Opening the byte stream to a desktop's local server by the name it handed out.

The name is the server's *full* name: a Unix socket path on macOS and Linux, ``\\\\.\\pipe\\NAME`` on
Windows (``QLocalServer.fullServerName()`` gives exactly this). Unix socket paths are limited to 104
bytes on macOS, so servers use short random names.
"""

from __future__ import annotations

import asyncio
import sys

from contracts.ipc.framing import READ_CHUNK_BYTES

WINDOWS_PIPE_PREFIX = "\\\\.\\pipe\\"
MAX_UNIX_SOCKET_PATH_BYTES = 104


def is_windows_pipe(name: str) -> bool:
    return name.startswith(WINDOWS_PIPE_PREFIX)


def check_server_name(name: str) -> None:
    """Refuse names no platform could connect to, with a message that says why."""
    if not name or "\0" in name:
        raise ValueError("server name is empty or contains a NUL byte")
    if is_windows_pipe(name):
        if sys.platform != "win32":
            raise ValueError(f"{name!r} is a Windows named pipe; this is {sys.platform}")
        return
    if len(name.encode()) >= MAX_UNIX_SOCKET_PATH_BYTES:
        raise ValueError(f"socket path {name!r} is longer than {MAX_UNIX_SOCKET_PATH_BYTES - 1} bytes")


async def open_stream(name: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Connect to a local server by its full name."""
    check_server_name(name)
    if not is_windows_pipe(name):
        return await asyncio.open_unix_connection(name, limit=READ_CHUNK_BYTES)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_CHUNK_BYTES, loop=loop)
    protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
    # Only the proactor loop (the default on Windows) can open named pipes.
    transport, _ = await loop.create_pipe_connection(lambda: protocol, name)  # type: ignore[attr-defined]
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    return reader, writer
