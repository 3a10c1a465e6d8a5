"""The session's local event log: one JSON object per line, append-only (seed 000 §12, Phase 1–2).

Written with ``os.write`` on an ``O_APPEND`` descriptor: no user-space buffer, so every batch is in
the kernel when ``write_lines`` returns and a crash of the runtime loses nothing already written; a
restarted runtime for the same session appends to the same file.
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

__all__ = ["EventLogFile"]

logger = logging.getLogger(__name__)

_OPEN_APPEND = (
    os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)


class EventLogFile:
    """Appends lines to ``path`` (created 0600, its directory 0700 when created).

    Failures never propagate: the first is logged, later ones only counted, and every batch tries
    again, so a disk that fills up and frees again loses only the events in between.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self.failures = 0

    def write_lines(self, lines: list[bytes]) -> bool:
        """Append ``lines`` (each ending in a newline) in one write; False if they could not be."""
        data = b"".join(lines)
        try:
            fd = self._open()
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except OSError as exc:
            self.failures += 1
            if self.failures == 1:
                logger.error(
                    "cannot write the event log %s (%s); events still reach the desktop",
                    self.path,
                    exc.strerror or type(exc).__name__,
                )
            self.close()
            return False
        return True

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                os.close(fd)

    def _open(self) -> int:
        if self._fd is None:
            directory = self.path.parent
            if not directory.is_dir():
                directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._fd = os.open(self.path, _OPEN_APPEND, 0o600)
        return self._fd
