"""Writing a file so that a crash leaves either the old content or the new, never a torn file
(:func:`contracts.atomic.write_atomically`); the backend's files are owner-only."""

from __future__ import annotations

from pathlib import Path

from contracts.atomic import write_atomically as _write_atomically

__all__ = ["write_atomically"]


def write_atomically(path: Path, data: bytes, *, temp_prefix: str | None = None) -> None:
    """Replace ``path`` with ``data`` durably (mode 0600 from the first byte); ``temp_prefix`` starts
    the temp file's name where a sweep looks for leftovers."""
    _write_atomically(path, data, mode=0o600, prefix=temp_prefix)
