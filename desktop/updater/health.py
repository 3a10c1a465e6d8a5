"""Health check of a newly installed runtime: it must start and answer on JSON-RPC within a limit.

The runtime is started as a session would start it headlessly (``--stdio``, ``ChildProcess.spawn``)
and sent ``Shutdown`` with no session: the runtime answers only once its handlers have loaded (the
whole agent host imported — the part of a frozen bundle most likely to be broken), then exits 0. It
runs with a throw-away data directory, so the check never touches real checkpoints, and without the
caller's secrets.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from contracts.ipc.client import ChildProcess, JsonRpcClient
from contracts.ipc.client_core import ConnectionClosed, RpcCallError
from desktop.updater.errors import HealthCheckFailed

__all__ = ["DEFAULT_HEALTH_TIMEOUT", "check_health"]

DEFAULT_HEALTH_TIMEOUT = 30.0
"""Generous: the first start of a new bundle reads it all from disk, and macOS scans new programs."""

_SECRETS = ("COWORK_RPC_SECRET", "COWORK_BACKEND_TOKEN", "LLM_GATEWAY_AUTH_TOKEN")
_STDERR_TAIL = 2000


async def check_health(
    executable: Path,
    *,
    timeout: float = DEFAULT_HEALTH_TIMEOUT,
    environ: Mapping[str, str] | None = None,
) -> float:
    """Start ``executable --stdio``, ask it to shut down, and wait for it to exit 0 — all within
    ``timeout`` seconds. Returns the seconds it took; raises :class:`HealthCheckFailed` otherwise."""
    base = dict(os.environ if environ is None else environ)
    stderr = bytearray()

    def keep_tail(data: bytes) -> None:
        stderr.extend(data)
        del stderr[:-_STDERR_TAIL]

    with tempfile.TemporaryDirectory(prefix="cowork-health-") as data_dir:
        env = {key: value for key, value in base.items() if key not in _SECRETS}
        env["COWORK_RUNTIME_DATA_DIR"] = data_dir
        started = time.perf_counter()
        try:
            client, child = await ChildProcess.spawn(
                [str(executable), "--stdio"], env=env, cwd=data_dir, on_stderr=keep_tail
            )
        except OSError as exc:
            raise HealthCheckFailed(
                "no_start", f"The runtime at {executable} could not start: {exc}"
            ) from exc
        try:
            await _shutdown_within(client, child, timeout, executable, stderr)
        finally:
            if not client.closed:
                client.shut("health check over")
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(child.wait(), 5)
        return time.perf_counter() - started


async def _shutdown_within(
    client: JsonRpcClient, child: ChildProcess, timeout: float, executable: Path, stderr: bytearray
) -> None:
    def said() -> str:
        text = stderr.decode("utf-8", "replace").strip()
        return f"; it said: {text[-500:]}" if text else ""

    try:
        async with asyncio.timeout(timeout):
            call = asyncio.ensure_future(client.call("Shutdown", {"reason": "health check"}, timeout=timeout))
            exit_ = asyncio.ensure_future(child.wait())
            try:
                # Watch the exit too: a runtime that dies at once may close its stdout before the
                # client is listening, and then only its exit tells.
                await asyncio.wait({call, exit_}, return_when=asyncio.FIRST_COMPLETED)
                if not call.done():
                    call.cancel()
                    raise HealthCheckFailed(
                        "bad_answer",
                        f"The runtime exited with status {exit_.result()} without answering{said()}",
                    )
                try:
                    answer = call.result()
                except (ConnectionClosed, RpcCallError) as exc:
                    raise HealthCheckFailed(
                        "bad_answer",
                        f"The runtime ended without answering ({exc}, exit status {await exit_}){said()}",
                    ) from exc
                if not isinstance(answer, dict) or answer.get("sessionStatus") != "SESSION_COMPLETED":
                    raise HealthCheckFailed("bad_answer", f"The runtime answered Shutdown with {answer!r}")
                status = await exit_
            finally:
                for task in (call, exit_):
                    task.cancel()
    except TimeoutError:
        raise HealthCheckFailed(
            "timeout", f"The runtime at {executable} did not start and answer within {timeout:g} s{said()}"
        ) from None
    if status != 0:
        raise HealthCheckFailed(
            "exit_status", f"The runtime exited with status {status} after Shutdown{said()}"
        )
