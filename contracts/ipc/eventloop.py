"""The event loop the runtime and the asyncio tools run on, and how their programs end.

uvloop on macOS and Linux. Measured on this project's IPC benchmark (tests/benchmarks/bench_ipc.py),
a minimal no-op round trip between two processes over a Unix socket takes about 45 µs (p50) on uvloop
against about 115 µs on asyncio's own selector loop (Python 3.11–3.13 alike), which alone is past
the 100 µs budget. Windows keeps asyncio's proactor loop: it is the one that opens named pipes.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import Any, NoReturn, TypeVar

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


def exit_now(status: int) -> NoReturn:
    """End a program whose work is done without the interpreter's teardown.

    Python's own exit frees every module and object one by one: 30–100 ms for a process that has
    loaded pydantic's schemas, spent after the last useful thing it did (measured on ``cowork exec``
    and the runtime, issue 24). What an exit must still do is done first, in the interpreter's own
    order: threading's exit hooks (which tell idle thread pools to stop) and the join of non-daemon
    threads — ``threading._shutdown``, what ``Py_FinalizeEx`` calls — then the ``atexit`` handlers
    (logging's flush among them), then stdio flushed.
    """
    shutdown: Callable[[], None] | None = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    else:  # an interpreter without it: join what would be joined
        current = threading.current_thread()
        for thread in threading.enumerate():
            if thread is not current and not thread.daemon:
                thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass  # a closed or broken pipe: nothing more can reach it
    os._exit(status)
