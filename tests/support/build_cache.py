"""What the tests' caches of frozen builds share (``tests/build/bundle.py``, ``tests/installer/package.py``):
a lock that makes concurrent test sessions build once, and pruning of older builds."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["locked", "prune"]


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (created if missing) for the ``with`` block."""
    import fcntl  # imported here: the builds run on Linux, and the modules are imported everywhere

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def prune(cache: Path, keep: Path, count: int) -> None:
    """Remove the builds in ``cache`` but ``keep`` and the newest others, ``count`` in all; hidden
    scratch directories of builds in progress are left alone."""
    others = [d for d in cache.iterdir() if d.is_dir() and d != keep and not d.name.startswith(".")]
    others.sort(key=lambda d: d.stat().st_mtime, reverse=True)
    for old in others[count - 1 :]:
        shutil.rmtree(old, ignore_errors=True)
        old.with_suffix(".lock").unlink(missing_ok=True)
