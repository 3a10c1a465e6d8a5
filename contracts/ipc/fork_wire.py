"""What the runtime's fork server and its clients share: where it listens, its frames, the peer check.

The server is ``agent_runtime.fork_server``; the client is ``desktop.launch.forked``. They meet on a
Unix socket in a folder of the user data directory that only its owner may enter (0700). Every frame
is a 4-byte big-endian length and a JSON object. The client's first frame carries the request
(``argv``, ``env``, ``cwd``) and, as ``SCM_RIGHTS``, the three descriptors that become the runtime's
stdin, stdout and stderr; the server answers ``{"pid": N}`` once it has forked, then
``{"exit": STATUS}`` when that process has ended (``STATUS`` as ``subprocess`` reports it: negative
for a signal), and closes the connection. ``{"refused": REASON}`` instead of a pid: the client
starts the runtime the ordinary way.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import struct
import sys
from pathlib import Path
from typing import Any

__all__ = [
    "ENABLE_VARIABLE",
    "FRAME_HEADER",
    "MAX_FRAME_BYTES",
    "SOCKET_DIR_NAME",
    "SOCKET_NAME",
    "PeerRefused",
    "check_peer",
    "decode_frame_length",
    "encode_frame",
    "peer_uid",
    "private_dir_problem",
]

ENABLE_VARIABLE = "COWORK_RUNTIME_FORK_SERVER"
"""``0`` turns the fork server off: every run spawns its runtime."""

SOCKET_DIR_NAME = "runtime-fork"
SOCKET_NAME = "s"
"""Short on purpose: a Unix socket's path must fit in about 104 bytes, and user data folders are long."""

FRAME_HEADER = struct.Struct(">I")
MAX_FRAME_BYTES = 4 * 1024 * 1024
"""An environment of a few hundred variables is tens of kilobytes: anything near this is not a client."""


class PeerRefused(Exception):
    """The process at the other end of the socket is not run by this user (or cannot be told)."""


def encode_frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":")).encode()
    return FRAME_HEADER.pack(len(body)) + body


def decode_frame_length(header: bytes) -> int:
    (length,) = FRAME_HEADER.unpack(header)
    if length > MAX_FRAME_BYTES:
        raise ValueError(f"a fork-server frame of {length} bytes")
    return int(length)


def peer_uid(sock: socket.socket) -> int:
    """The user id of the process at the other end of a connected Unix socket.

    Linux: ``SO_PEERCRED`` (pid, uid, gid). macOS: ``LOCAL_PEERCRED``, a ``struct xucred`` whose second
    field is the uid. ``PeerRefused`` where neither exists: no way to tell is a refusal, never a pass.
    """
    so_peercred = getattr(socket, "SO_PEERCRED", None)
    if so_peercred is not None:
        creds = sock.getsockopt(socket.SOL_SOCKET, so_peercred, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
        return int(uid)
    local_peercred = getattr(socket, "LOCAL_PEERCRED", None)
    if local_peercred is not None:
        sol_local = 0  # <sys/un.h>: SOL_LOCAL
        creds = sock.getsockopt(sol_local, local_peercred, struct.calcsize("Ii"))
        _version, uid = struct.unpack_from("Ii", creds)
        return int(uid)
    raise PeerRefused(f"no way to ask a socket peer's user on {sys.platform}")


def check_peer(uid: int, own_uid: int | None = None) -> None:
    """``PeerRefused`` unless ``uid`` is this process's user: another user's process gets nothing."""
    expected = os.getuid() if own_uid is None else own_uid
    if uid != expected:
        raise PeerRefused(f"a process of user {uid} is not user {expected}")


def private_dir_problem(path: Path) -> str | None:
    """Why ``path`` is not a folder only this user can enter (``None``: it is).

    Both sides check: the server before it listens there, the client before it trusts what answers
    there, so neither hands a descriptor or an environment to a socket another user could have put in
    place.
    """
    try:
        info = os.lstat(path)
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    if not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a folder"
    if info.st_uid != os.getuid():
        return f"{path} belongs to user {info.st_uid}"
    if info.st_mode & 0o077:
        return f"{path} is open to other users (mode {stat.S_IMODE(info.st_mode):o})"
    return None
