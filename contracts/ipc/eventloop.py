"""The event loop the runtime and the asyncio tools run on.

uvloop on macOS and Linux. Measured on this project's IPC benchmark (tests/benchmarks/bench_ipc.py),
a minimal no-op round trip between two processes over a Unix socket takes about 45 µs (p50) on uvloop
against about 115 µs on asyncio's own selector loop (Python 3.11–3.13 alike), which alone is past
the 100 µs budget. Windows keeps asyncio's proactor loop: it is the one that opens named pipes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop where it is installed; ``None`` means asyncio's default."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on the fastest loop this platform has."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
