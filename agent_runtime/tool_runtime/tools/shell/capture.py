"""One output stream of a command (seed 003 §4.4, §6.2): CRLF → LF, then bounded capture.

CRLF becomes LF also when ``\\r`` and ``\\n`` arrive in different reads; a lone ``\\r`` (progress bars)
is kept.
"""

from __future__ import annotations

from agent_runtime.tool_runtime.output.artifacts import MAX_ARTIFACT_BYTES, Spool
from agent_runtime.tool_runtime.output.capture import Capture
from agent_runtime.tool_runtime.output.truncate import HeadTail
from contracts.enums import ArtifactType
from contracts.tools import ToolArtifact

__all__ = ["StreamCapture", "split_budget_between"]


class StreamCapture:
    """A command's stdout or stderr; with a ``spool``, a ``tool_output`` artifact past 10 KB."""

    def __init__(
        self,
        max_output_bytes: int,
        *,
        spool: Spool | None = None,
        name: str = "stdout",
        artifact_cap: int = MAX_ARTIFACT_BYTES,
    ) -> None:
        self._capture = Capture(max_output_bytes, spool=spool, name=name, artifact_cap=artifact_cap)
        self._carriage_return = False

    @property
    def kept(self) -> HeadTail:
        return self._capture.kept

    @property
    def total(self) -> int:
        return self._capture.total

    def feed(self, chunk: bytes) -> None:
        if self._carriage_return:
            chunk = b"\r" + chunk
            self._carriage_return = False
        if chunk.endswith(b"\r"):
            # It may be the first half of a CRLF split across reads: decide with the next chunk.
            chunk = chunk[:-1]
            self._carriage_return = True
        self._capture.feed(chunk.replace(b"\r\n", b"\n"))

    def close(self) -> None:
        """The stream ended (or reading stopped): keep a held ``\\r`` and finish the spool file."""
        if self._carriage_return:
            self._carriage_return = False
            self._capture.feed(b"\r")
        self._capture.close()

    def discard(self) -> None:
        self._capture.discard()

    def artifact(self) -> ToolArtifact | None:
        """The ``tool_output`` artifact when the stream passed 10 KB (seed 003 §7.2)."""
        return self._capture.artifact(ArtifactType.TOOL_OUTPUT, "text/plain")


def split_budget_between(max_bytes: int, first: int, second: int) -> tuple[int, int]:
    """Share ``max_bytes`` of output between two streams of ``first`` and ``second`` bytes.

    Both whole when they fit together; otherwise each gets half, and a stream needing less than
    half gives the rest to the other.
    """
    if first + second <= max_bytes:
        return first, second
    half = max_bytes // 2
    if first <= half:
        return first, max_bytes - first
    if second <= half:
        return max_bytes - second, second
    return max_bytes - half, half
