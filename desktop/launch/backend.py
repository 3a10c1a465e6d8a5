"""The backend a session talks to: the configured one, or the embedded local one (DESIGN.md).

Configured: ``COWORK_BACKEND_URL`` and ``COWORK_BACKEND_TOKEN`` (tenant and user are the token's
``tid`` and ``sub`` claims; the server verifies the token, we only read it), ``COWORK_POLICY_KEYS``
optional. Otherwise the embedded default: the local backend whose state file says it is running is
reused, else one is started (``backend.cli serve --store local --port 0``, through
``desktop.launch.child`` in the installed app) and stopped on exit.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil
from platformdirs import user_data_dir

from desktop.launch.child import creation_flags, module_command
from desktop.launch.errors import LaunchError

__all__ = [
    "BackendAccess",
    "backend_for_session",
    "configured_backend",
    "default_backend_dir",
    "reachable",
]

START_TIMEOUT_S = 60.0
STATE_FILE = "backend.json"


@dataclass(frozen=True)
class BackendAccess:
    url: str
    token: str
    tenant_id: str
    user_id: str
    policy_keys: list[dict[str, Any]] | None = None
    """Trusted policy keys to hand the runtime; ``None``: it fetches ``/policy/keys``."""


def default_backend_dir() -> Path:
    return Path(user_data_dir("Cowork", appauthor=False)) / "backend"


def configured_backend(environ: Mapping[str, str]) -> BackendAccess | None:
    """The backend the environment names, or ``None`` for the embedded default."""
    url = environ.get("COWORK_BACKEND_URL", "").strip()
    if not url:
        return None
    token = environ.get("COWORK_BACKEND_TOKEN", "").strip()
    if not token:
        raise LaunchError("COWORK_BACKEND_URL is set but COWORK_BACKEND_TOKEN is not")
    claims = _claims(token)
    tenant, user = claims.get("tid"), claims.get("sub")
    if not isinstance(tenant, str) or not isinstance(user, str) or not tenant or not user:
        raise LaunchError("COWORK_BACKEND_TOKEN names no tenant (tid) and user (sub)")
    keys = environ.get("COWORK_POLICY_KEYS")
    try:
        policy_keys = json.loads(keys) if keys else None
    except ValueError as exc:
        raise LaunchError("COWORK_POLICY_KEYS is not JSON") from exc
    return BackendAccess(url.rstrip("/"), token, tenant, user, policy_keys)


def _claims(token: str) -> dict[str, Any]:
    parts = token.split(".")
    if len(parts) != 3:
        raise LaunchError("COWORK_BACKEND_TOKEN is not a JWT")
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, binascii.Error) as exc:
        raise LaunchError("COWORK_BACKEND_TOKEN is not a JWT") from exc
    if not isinstance(payload, dict):
        raise LaunchError("COWORK_BACKEND_TOKEN is not a JWT")
    return payload


@contextlib.asynccontextmanager
async def backend_for_session(
    environ: Mapping[str, str], *, data_dir: Path | None = None
) -> AsyncIterator[BackendAccess]:
    """The configured backend (checked reachable), or the embedded one, for the duration of a run."""
    configured = configured_backend(environ)
    if configured is not None:
        await _check_reachable(configured)
        yield configured
        return
    directory = data_dir or default_backend_dir()
    running = await _running_local(directory)
    if running is not None:
        yield running
        return
    async with _embedded(directory) as started:
        yield started


async def _check_reachable(access: BackendAccess) -> None:
    try:
        async with asyncio.timeout(5):
            await reachable(access.url)
    except (OSError, TimeoutError, ValueError) as exc:
        raise LaunchError(
            f"The backend at {access.url} cannot be reached ({exc or type(exc).__name__})"
        ) from exc


async def reachable(url: str) -> None:
    """Open a TCP connection to the URL's host and port; ``OSError`` if nothing listens there.

    A connection is all a client needs to know before it starts a session; an HTTP client (and its
    import, a tenth of a second) is not.
    """
    parsed = urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ValueError(f"not an http(s) URL: {url[:200]}")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    _, writer = await asyncio.open_connection(parsed.hostname, port)
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()


async def _running_local(directory: Path) -> BackendAccess | None:
    """The local backend already serving from ``directory`` (another Cowork window or run), if any."""
    try:
        state = json.loads((directory / STATE_FILE).read_text(encoding="utf-8"))
        access = _from_state(state)
        if not psutil.pid_exists(int(state["pid"])):
            return None  # a stale file outlives a killed server
        async with asyncio.timeout(2):
            await reachable(access.url)
    except (OSError, ValueError, KeyError, TypeError, TimeoutError):
        return None
    return access


def _from_state(state: dict[str, Any]) -> BackendAccess:
    return BackendAccess(
        url=str(state["url"]),
        token=str(state["token"]),
        tenant_id=str(state["tenantId"]),
        user_id=str(state["userId"]),
        policy_keys=list(state["policyKeys"]),
    )


@contextlib.asynccontextmanager
async def _embedded(directory: Path) -> AsyncIterator[BackendAccess]:
    command = [*module_command("backend.cli"), "serve", "--store", "local", "--port", "0"]
    command += ["--data-dir", str(directory), "--log-level", "warning"]
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)  # noqa: ASYNC240 - once, before anything runs
    log_path = directory / "backend.log"
    # Its log goes to a file: a pipe nobody reads during a long run would fill and stall the server.
    with log_path.open("ab") as log:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            creationflags=creation_flags(),
        )
    try:
        assert process.stdout is not None
        try:
            async with asyncio.timeout(START_TIMEOUT_S):
                line = await process.stdout.readline()
            ready = json.loads(line)
            state = json.loads(Path(ready["stateFile"]).read_text(encoding="utf-8"))  # noqa: ASYNC240
            access = _from_state(state)
        except (TimeoutError, ValueError, KeyError, TypeError, OSError) as exc:
            lines = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            detail = lines[-1] if lines else type(exc).__name__
            raise LaunchError(f"The local backend did not start: {detail} (log: {log_path})") from exc
        yield access
    finally:
        await _stop(process)


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.terminate()
        try:
            async with asyncio.timeout(15):
                await process.wait()
        except TimeoutError:
            process.kill()
            await process.wait()
