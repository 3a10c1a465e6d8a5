"""Where service calls run: in a worker thread (stores that block on I/O) or on the event loop.

Service logic is synchronous. DynamoDB/S3 calls take milliseconds and must stay off the event loop;
the memory store answers in microseconds, where a thread hop would cost more than the work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

from starlette.concurrency import run_in_threadpool

__all__ = ["Runner"]

P = ParamSpec("P")
R = TypeVar("R")


class Runner:
    def __init__(self, *, inline: bool) -> None:
        self.inline = inline

    async def __call__(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        if self.inline:
            return fn(*args, **kwargs)
        return await run_in_threadpool(fn, *args, **kwargs)
