"""Peer authentication between the desktop (listener) and the runtime (connector).

The desktop creates a one-time 256-bit secret and hands it to the runtime in its environment
(``COWORK_RPC_SECRET``), never on the command line where other users could read it. Neither side
ever sends the secret itself; each proves it knows it with an HMAC over a fresh nonce, so a process
that squats the socket name learns nothing it could reuse:

1. runtime → desktop, first frame::

       {"jsonrpc": "2.0", "method": "cowork.hello",
        "params": {"protocol": "cowork-ipc/1", "nonce": N, "proof": HMAC(secret, "cowork-ipc/1|runtime|" N)}}

2. the desktop compares the proof in constant time. A wrong, late (over 5 s), oversized (over 4 KiB)
   or malformed first frame closes the connection before anything else is read from it;
3. desktop → runtime::

       {"jsonrpc": "2.0", "method": "cowork.welcome",
        "params": {"proof": HMAC(secret, "cowork-ipc/1|desktop|" N)}}

4. the runtime checks the welcome the same way and only then serves JSON-RPC. A runtime that cannot
   authenticate its desktop exits instead of taking orders from an impostor.

A listener accepts exactly one authenticated runtime per server name.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import secrets
from collections.abc import MutableMapping

from contracts.ipc.framing import FrameTooLarge, decode, encode

SECRET_ENV = "COWORK_RPC_SECRET"
PROTOCOL = "cowork-ipc/1"
HELLO_METHOD = "cowork.hello"
WELCOME_METHOD = "cowork.welcome"
HANDSHAKE_TIMEOUT_SECONDS = 5.0
HANDSHAKE_MAX_FRAME_BYTES = 4096

_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX32 = re.compile(r"[0-9a-f]{32}")


class HandshakeError(Exception):
    """The peer did not prove it holds the session secret (or spoke out of turn)."""


def new_secret() -> str:
    return secrets.token_hex(32)


def take_secret(environ: MutableMapping[str, str]) -> str:
    """Remove the secret from ``environ`` and return it.

    Removing it keeps it out of every process the runtime starts later (``RunCommand``).
    """
    secret = environ.pop(SECRET_ENV, "")
    if not _HEX64.fullmatch(secret):
        raise HandshakeError(f"{SECRET_ENV} must hold the 64 hex digits the desktop generated")
    return secret


def _proof(secret: str, role: str, nonce: str) -> str:
    message = f"{PROTOCOL}|{role}|{nonce}".encode()
    return hmac.new(bytes.fromhex(secret), message, hashlib.sha256).hexdigest()


def hello_frame(secret: str) -> tuple[bytes, str]:
    """The runtime's first frame and the nonce it used."""
    nonce = secrets.token_hex(16)
    params = {"protocol": PROTOCOL, "nonce": nonce, "proof": _proof(secret, "runtime", nonce)}
    return encode({"jsonrpc": "2.0", "method": HELLO_METHOD, "params": params}), nonce


def _params_of(frame: bytes, method: str) -> dict[str, object]:
    try:
        message = decode(frame)
    except ValueError as exc:
        raise HandshakeError("handshake frame is not JSON") from exc
    if (
        not isinstance(message, dict)
        or message.get("jsonrpc") != "2.0"
        or message.get("method") != method
        or "id" in message
        or not isinstance(message.get("params"), dict)
    ):
        raise HandshakeError(f"expected a {method} notification")
    params: dict[str, object] = message["params"]
    return params


def verify_hello(secret: str, frame: bytes) -> str:
    """Check the runtime's hello; returns its nonce or raises :class:`HandshakeError`."""
    params = _params_of(frame, HELLO_METHOD)
    nonce, proof = params.get("nonce"), params.get("proof")
    if params.get("protocol") != PROTOCOL:
        raise HandshakeError(f"unsupported protocol {params.get('protocol')!r}; expected {PROTOCOL}")
    if not isinstance(nonce, str) or not _HEX32.fullmatch(nonce) or not isinstance(proof, str):
        raise HandshakeError("hello is missing its nonce or proof")
    if not hmac.compare_digest(proof, _proof(secret, "runtime", nonce)):
        raise HandshakeError("the runtime's proof does not match the session secret")
    return nonce


def welcome_frame(secret: str, nonce: str) -> bytes:
    params = {"proof": _proof(secret, "desktop", nonce)}
    return encode({"jsonrpc": "2.0", "method": WELCOME_METHOD, "params": params})


def verify_welcome(secret: str, nonce: str, frame: bytes) -> None:
    proof = _params_of(frame, WELCOME_METHOD).get("proof")
    if not isinstance(proof, str) or not hmac.compare_digest(proof, _proof(secret, "desktop", nonce)):
        raise HandshakeError("the desktop's proof does not match the session secret")


async def read_first_frame(
    reader: asyncio.StreamReader,
    *,
    max_bytes: int = HANDSHAKE_MAX_FRAME_BYTES,
    timeout: float = HANDSHAKE_TIMEOUT_SECONDS,
) -> tuple[bytes, bytes]:
    """Read one small frame within ``timeout``; returns it and any bytes that followed it.

    Reads at most ``max_bytes + 1`` bytes before giving up, so an unauthenticated peer cannot make
    us buffer more than that.
    """
    buffer = b""
    async with asyncio.timeout(timeout):
        while b"\n" not in buffer:
            chunk = await reader.read(max_bytes + 1 - len(buffer))
            if not chunk:
                raise HandshakeError("peer closed the connection during the handshake")
            buffer += chunk
            if b"\n" not in buffer and len(buffer) > max_bytes:
                raise FrameTooLarge(max_bytes)
    frame, _, rest = buffer.partition(b"\n")
    if len(frame) > max_bytes:
        raise FrameTooLarge(max_bytes)
    return frame, rest
