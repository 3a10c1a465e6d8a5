"""The one retry helper: full jitter, a server's Retry-After (seconds or HTTP-date) honoured up to a
cap, and cancellation never swallowed."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NoReturn

import httpx
import pytest

from contracts.retry import RetryAfter, RetryPolicy, call_with_retries, parse_retry_after


class Refusals:
    """A real HTTP server on loopback that answers 503 with given ``Retry-After`` values, then 200."""

    def __init__(self, retry_afters: list[str | None]) -> None:
        self.retry_afters = list(retry_afters)
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests += 1
                if outer.retry_afters:
                    value = outer.retry_afters.pop(0)
                    self.send_response(503)
                    if value is not None:
                        self.send_header("Retry-After", value)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = b"done"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Refusals:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class Unavailable(Exception):
    def __init__(self, retry_after_s: float | None) -> None:
        super().__init__("503")
        self.retry_after_s = retry_after_s


class FakeClock:
    """The waits asked for, without waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


def retry_unavailable(error: Exception, _: int) -> RetryAfter | None:
    return RetryAfter(error.retry_after_s) if isinstance(error, Unavailable) else None


async def fetch_with_retries(url: str, policy: RetryPolicy, clock: FakeClock, now: float) -> str:
    async with httpx.AsyncClient() as http:

        async def attempt() -> str:
            response = await http.get(url)
            if response.status_code == 503:
                raise Unavailable(parse_retry_after(response.headers, lambda: now))
            return response.text

        return await call_with_retries(
            attempt, policy, retry_on=retry_unavailable, sleep=clock.sleep, random=lambda: 0.5
        )


async def test_retry_after_seconds_from_a_real_server_is_waited_for() -> None:
    clock = FakeClock()
    with Refusals(["2", "0"]) as server:
        assert await fetch_with_retries(server.url, RetryPolicy(), clock, time.time()) == "done"
    assert clock.waits == [2.0, 0.0]
    assert server.requests == 3


async def test_retry_after_as_an_http_date_is_the_time_until_then() -> None:
    now = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=7), usegmt=True)
    past = format_datetime(now - timedelta(seconds=30), usegmt=True)
    clock = FakeClock()
    with Refusals([later, past]) as server:
        assert await fetch_with_retries(server.url, RetryPolicy(), clock, now.timestamp()) == "done"
    assert clock.waits == [7.0, 0.0]


async def test_a_huge_retry_after_is_capped() -> None:
    clock = FakeClock()
    with Refusals(["86400"]) as server:
        await fetch_with_retries(server.url, RetryPolicy(retry_after_cap_s=30.0), clock, time.time())
    assert clock.waits == [30.0]


async def test_without_retry_after_the_wait_is_full_jitter_doubling_up_to_the_cap() -> None:
    clock = FakeClock()
    with Refusals([None, None, None, None]) as server:
        policy = RetryPolicy(max_retries=4, base_s=1.0, cap_s=5.0)
        await fetch_with_retries(server.url, policy, clock, time.time())
    assert clock.waits == [0.5, 1.0, 2.0, 2.5]  # random() = 0.5 of 1, 2, 4, then the cap of 5


def test_full_jitter_spans_zero_to_the_ceiling() -> None:
    policy = RetryPolicy(base_s=1.0, cap_s=30.0)
    assert policy.delay(3, lambda: 0.0) == 0.0
    assert policy.delay(3, lambda: 0.999) == pytest.approx(3.996)


async def test_when_retries_run_out_give_up_raises_the_final_error() -> None:
    clock = FakeClock()
    tried: list[int] = []

    async def always_unavailable() -> str:
        tried.append(len(tried) + 1)
        raise Unavailable(None)

    def give_up(error: Exception, attempts: int) -> NoReturn:
        raise RuntimeError(f"gave up after {attempts} attempts") from error

    with pytest.raises(RuntimeError, match="gave up after 3 attempts") as caught:
        await call_with_retries(
            always_unavailable,
            RetryPolicy(max_retries=2),
            retry_on=retry_unavailable,
            give_up=give_up,
            sleep=clock.sleep,
            random=lambda: 0.0,
        )
    assert isinstance(caught.value.__cause__, Unavailable)
    assert tried == [1, 2, 3]
    assert len(clock.waits) == 2


async def test_an_error_not_worth_retrying_propagates_at_once() -> None:
    clock = FakeClock()

    async def refused() -> str:
        raise PermissionError("401")

    with pytest.raises(PermissionError):
        await call_with_retries(refused, RetryPolicy(), retry_on=retry_unavailable, sleep=clock.sleep)
    assert clock.waits == []


async def test_callbacks_run_around_each_wait_in_order() -> None:
    clock = FakeClock()
    seen: list[str] = []
    outcomes: list[Exception | str] = [Unavailable(1.5), "ok"]

    async def attempt() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    async def before_wait(retry: int, delay: float, error: Exception) -> None:
        seen.append(f"before {retry} {delay} {error}")

    def after_wait() -> None:
        seen.append(f"after {clock.waits}")

    assert (
        await call_with_retries(
            attempt,
            RetryPolicy(),
            retry_on=retry_unavailable,
            before_wait=before_wait,
            after_wait=after_wait,
            sleep=clock.sleep,
        )
        == "ok"
    )
    assert seen == ["before 1 1.5 503", "after [1.5]"]


async def test_cancellation_during_the_wait_stops_it_at_once_and_is_not_swallowed() -> None:
    started = asyncio.Event()

    async def unavailable() -> str:
        started.set()
        raise Unavailable(None)

    # A real sleep of up to a minute: only cancellation can end it soon.
    task = asyncio.ensure_future(
        call_with_retries(
            unavailable, RetryPolicy(base_s=60.0, cap_s=60.0), retry_on=retry_unavailable, random=lambda: 1.0
        )
    )
    await started.wait()
    await asyncio.sleep(0.01)
    began = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - began < 1.0
    assert task.cancelled()


async def test_cancellation_of_an_attempt_is_not_retried() -> None:
    calls = 0

    async def cancelled() -> str:
        nonlocal calls
        calls += 1
        raise asyncio.CancelledError

    def retry_everything(error: Exception, _: int) -> RetryAfter:
        return RetryAfter()

    with pytest.raises(asyncio.CancelledError):
        await call_with_retries(cancelled, RetryPolicy(), retry_on=retry_everything, sleep=FakeClock().sleep)
    assert calls == 1


@pytest.mark.parametrize("value", ["soon", "-3", "nan", "inf", "", "Mon, 99 Foo 2026"])
def test_nonsense_retry_after_is_ignored(value: str) -> None:
    assert parse_retry_after({"retry-after": value}, lambda: 0.0) is None


def test_retry_after_ms_wins() -> None:
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}, lambda: 0.0) == 0.25


def test_a_negative_or_infinite_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="not negative"):
        RetryPolicy(max_retries=-1)
    with pytest.raises(ValueError, match="finite"):
        RetryPolicy(cap_s=float("inf"))
