"""Framing: newline-delimited JSON, one JSON-RPC message (or batch) per line.

* Each message is UTF-8 JSON followed by ``\\n``. Encoders never emit a raw newline inside a message
  (JSON escapes control characters in strings), exactly as MCP's stdio transport does.
* A message may be at most ``max_frame_bytes`` long (16 MiB unless an end says otherwise). A peer that
  sends a longer one gets one clear error and the connection is closed: an endless line must not be
  buffered without bound.
* Blank lines are ignored; a trailing ``\\r`` is tolerated.
"""

from __future__ import annotations

import json
from typing import Any

DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024
READ_CHUNK_BYTES = 256 * 1024


class FrameTooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"message larger than {limit} bytes")
        self.limit = limit


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# Built once: json.dumps/json.loads with options build a new encoder/decoder on every call, which
# costs more than encoding a small message.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def encode(message: Any) -> bytes:
    """One frame: compact JSON, no NaN/Infinity (not JSON), terminated by a newline."""
    return _ENCODER.encode(message).encode() + b"\n"


def decode(frame: bytes) -> Any:
    """Parse one frame strictly: UTF-8 only, standard JSON only.

    Raises ``ValueError`` for anything that is not a JSON text (bad UTF-8, NaN, nesting so deep the
    parser would overflow, integers with thousands of digits).
    """
    try:
        return _DECODER.decode(frame.decode("utf-8"))
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


class FrameDecoder:
    """Splits a byte stream into frames, holding at most one partial frame of bounded size."""

    __slots__ = ("_buffer", "_max")

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self._buffer = b""
        self._max = max_frame_bytes

    @property
    def pending_bytes(self) -> int:
        """Bytes of an unfinished frame (non-zero at end of stream means a truncated message)."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[bytes]:
        if b"\n" not in data:
            self._buffer += data
            if len(self._buffer) > self._max:
                raise FrameTooLarge(self._max)
            return []
        *frames, rest = (self._buffer + data).split(b"\n")
        self._buffer = rest
        if len(rest) > self._max or any(len(frame) > self._max for frame in frames):
            raise FrameTooLarge(self._max)
        return [frame for frame in frames if frame.strip()]
