"""Bounded capture of an unbounded byte stream: what a result shows, and the artifact behind it.

Kept in memory: only the head and tail that §7.1 truncation can use (``HeadTail``). With a spool, a
stream that passes the 10 KB artifact threshold (seed 003 §7.2) is also written to a spooled file,
capped at the artifact limit — so a command printing gigabytes or a large HTTP body never sits whole
in RAM.
"""

from __future__ import annotations

from agent_runtime.tool_runtime.output.artifacts import (
    ARTIFACT_THRESHOLD_BYTES,
    MAX_ARTIFACT_BYTES,
    Spool,
    SpoolFile,
)
from agent_runtime.tool_runtime.output.truncate import HeadTail
from contracts.enums import ArtifactType
from contracts.tools import ToolArtifact

__all__ = ["Capture"]


class Capture:
    """Head, tail and total of a stream; with a ``spool``, the stream itself past 10 KB in a file.

    Fed from one thread or task at a time and read after feeding ended: no locking.
    """

    def __init__(
        self,
        max_output_bytes: int,
        *,
        spool: Spool | None = None,
        name: str = "output",
        suffix: str = ".txt",
        artifact_cap: int = MAX_ARTIFACT_BYTES,
    ) -> None:
        self.kept = HeadTail(max_output_bytes)
        self.name = name
        self._suffix = suffix
        self._spool = spool
        self._artifact_cap = artifact_cap
        self._pending = bytearray()  # the first bytes, until the stream proves large enough to spool
        self._file: SpoolFile | None = None
        self.closed = False

    @property
    def total(self) -> int:
        return self.kept.total

    @property
    def head(self) -> bytes:
        """The first bytes of the stream (up to 80 % of the output budget)."""
        return self.kept.head

    def feed(self, data: bytes) -> None:
        if not data or self.closed:
            return
        self.kept.feed(data)
        if self._spool is None:
            return
        if self._file is not None:
            self._file.write(data)
            return
        self._pending += data
        if len(self._pending) > ARTIFACT_THRESHOLD_BYTES:
            self._file = SpoolFile(self._spool, self.name, self._suffix, cap=self._artifact_cap)
            self._file.write(bytes(self._pending))
            self._pending = bytearray()

    def close(self) -> None:
        """Feeding is over: finish the spool file (a cut one ends with a line saying so)."""
        if self.closed:
            return
        self.closed = True
        self._pending = bytearray()
        if self._file is not None:
            self._file.finish(self.total)

    def discard(self) -> None:
        """Close and delete the spooled file: the result will not reference it."""
        self.close()
        if self._file is not None:
            self._file.discard()
            self._file = None

    def artifact(self, artifact_type: ArtifactType, content_type: str) -> ToolArtifact | None:
        """The artifact when the stream passed the 10 KB threshold, else None."""
        if self._file is None:
            return None
        name = f"{self.name}{self._suffix}"
        if self._file.cut:
            name = f"{self.name} (first {self._artifact_cap} of {self.total} bytes){self._suffix}"
        return self._file.artifact(artifact_type, name, content_type)
