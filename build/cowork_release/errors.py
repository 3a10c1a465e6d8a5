"""The one error the release tooling raises for bad input: the CLI prints it as one line, exit 1."""

from __future__ import annotations

__all__ = ["ReleaseError"]


class ReleaseError(Exception):
    """Something the release engineer can fix: a missing file, a bad value, a refused change."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))
