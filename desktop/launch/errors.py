"""The one error type of the launch modules: a problem the user fixes in their configuration."""

from __future__ import annotations

__all__ = ["LaunchError"]


class LaunchError(Exception):
    """Something needed to run a session is missing or unreachable; ``str()`` says what to do."""
