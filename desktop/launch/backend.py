"""The backend a session talks to: the configured one, or the embedded local one
(docs/architecture/index.md, "The embedded default").

Configured: ``COWORK_BACKEND_URL`` and ``COWORK_BACKEND_TOKEN`` (tenant and user are the token's
``tid`` and ``sub`` claims; the server verifies the token, we only read it), ``COWORK_POLICY_KEYS``
optional. Otherwise the embedded default, shared by every client of the user data directory
(:mod:`contracts.local_backend`): with a lease taken first and under the start lock, the local backend
whose state file says it is running is reused, else one is started (``backend.cli serve --store local
--port 0 --idle-timeout …``, through ``desktop.launch.child`` in the installed app) in a session of its
own, so it outlives the client and stops by itself once no client has needed it for
``COWORK_BACKEND_IDLE_TIMEOUT`` seconds (default 600).

:func:`open_backend` chooses the backend at once and finds or starts it in the background, so a
client can start the runtime meanwhile (:meth:`SessionBackend.runtime_variables`).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from platformdirs import user_data_dir

from contracts.local_backend import (
    LOCK_FILE,
    STATE_FILE,
    STATE_FILE_VARIABLE,
    ClientLease,
    LocalBackendState,
    idle_timeout_from,
    live_leases,
    read_state,
    try_lock,
)
from desktop.i18n import translate
from desktop.launch.child import creation_flags, module_command
from desktop.launch.errors import LaunchError

__all__ = [
    "BackendAccess",
    "SessionBackend",
    "backend_for_session",
    "configured_backend",
    "default_backend_dir",
    "open_backend",
    "reachable",
]

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 15.0
_LOCK_POLL_S = 0.01
_PROBE_LIMIT = 64 * 1024

_outliving: list[subprocess.Popen[bytes]] = []
"""Backends this process started and left running on purpose: held here so that no finalizer warns
of a child still running, and polled at the next start so that one that has stopped is reaped."""


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


class SessionBackend:
    """The backend of one client's sessions, chosen but perhaps not found or started yet."""

    def __init__(
        self,
        finding: asyncio.Future[BackendAccess],
        *,
        configured: BackendAccess | None,
        directory: Path | None,
    ) -> None:
        self._finding = finding
        self.configured = configured
        self.directory = directory
        """The embedded backend's data directory; ``None`` for a configured backend."""

    def runtime_variables(self) -> dict[str, str]:
        """What a runtime started now is told of the backend: a configured one's URL, token and
        keys; for the embedded one its state file, read when the runtime first calls it."""
        if self.configured is not None:
            return _access_variables(self.configured)
        assert self.directory is not None
        return {STATE_FILE_VARIABLE: str(self.directory / STATE_FILE)}

    async def access(self) -> BackendAccess:
        """The backend, once it is known to be up (reachable, or started and ready); ``LaunchError``
        if it cannot be reached or started."""
        return await asyncio.shield(self._finding)


def runtime_variables_of(backend: BackendAccess | SessionBackend) -> dict[str, str]:
    """The runtime's backend variables for a backend known now or being found (see above)."""
    if isinstance(backend, SessionBackend):
        return backend.runtime_variables()
    return _access_variables(backend)


def _access_variables(access: BackendAccess) -> dict[str, str]:
    env = {"COWORK_BACKEND_URL": access.url, "COWORK_BACKEND_TOKEN": access.token}
    if access.policy_keys is not None:
        env["COWORK_POLICY_KEYS"] = json.dumps(access.policy_keys)
    return env


@contextlib.asynccontextmanager
async def open_backend(
    environ: Mapping[str, str], *, data_dir: Path | None = None, stop_started: bool = False
) -> AsyncIterator[SessionBackend]:
    """The backend for the ``async with`` block, found or started in the background from its start.

    The embedded one is used under a lease for the block; one started here is left running for the
    next client (it stops after its idle timeout) unless ``stop_started``, which stops it at the end
    if no other client holds a lease on it then.
    """
    configured = configured_backend(environ)
    if configured is not None:
        checking = asyncio.ensure_future(_check_reachable(configured))
        try:
            yield SessionBackend(checking, configured=configured, directory=None)
        finally:
            await _settle(checking)
        return
    directory = data_dir or default_backend_dir()
    try:
        idle_timeout = idle_timeout_from(environ)
    except ValueError as exc:
        raise LaunchError(str(exc)) from None
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    # Before looking: from now on a backend found here does not stop for idleness under this client.
    with ClientLease(directory) as lease:
        local = _Embedded(directory, idle_timeout)
        finding = asyncio.ensure_future(local.find_or_start())
        # One turn of the loop: a backend that has to be started is spawned now, before whatever
        # the caller starts next, rather than when the caller first waits.
        await asyncio.sleep(0)
        try:
            yield SessionBackend(finding, configured=None, directory=directory)
        finally:
            await _settle(finding)
            if stop_started and local.started is not None:
                await local.stop_unless_shared(lease)


@contextlib.asynccontextmanager
async def backend_for_session(
    environ: Mapping[str, str], *, data_dir: Path | None = None, stop_started: bool = False
) -> AsyncIterator[BackendAccess]:
    """The configured backend (checked reachable), or the embedded one, for the duration of a run."""
    async with open_backend(environ, data_dir=data_dir, stop_started=stop_started) as backend:
        yield await backend.access()


async def _settle(future: asyncio.Future[BackendAccess]) -> None:
    """A search nobody waits for any more ends here (cancelled, or its error dropped: the block that
    needed it has already ended for its own reason)."""
    future.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await future


async def _check_reachable(access: BackendAccess) -> BackendAccess:
    try:
        async with asyncio.timeout(5):
            await reachable(access.url)
    except (OSError, TimeoutError, ValueError) as exc:
        raise LaunchError(
            translate("Startup", "The backend at {url} cannot be reached ({problem})").format(
                url=access.url, problem=exc or type(exc).__name__
            )
        ) from exc
    return access


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


def _access(state: LocalBackendState) -> BackendAccess:
    return BackendAccess(
        url=state.url,
        token=state.token,
        tenant_id=state.tenant_id,
        user_id=state.user_id,
        policy_keys=list(state.policy_keys),
    )


def _alive(pid: int) -> bool:
    if sys.platform == "win32":
        import psutil  # Windows has no signal 0 to ask with

        return bool(psutil.pid_exists(pid))
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive, and not ours (the reachability check decides)
    return True


async def _running_local(directory: Path) -> BackendAccess | None:
    """The local backend already serving from ``directory`` (another Cowork window or run), if any."""
    _reap()  # one of ours that died is a zombie until reaped, and a zombie's PID still answers
    try:
        state = read_state(directory / STATE_FILE)
        if not _alive(state.pid):
            return None  # a stale file outlives a killed server
        async with asyncio.timeout(2):
            await _answers(state)
    except (OSError, ValueError, TimeoutError):
        return None
    return _access(state)


async def _answers(state: LocalBackendState) -> None:
    """The backend the state file describes answers at its URL: ``GET /policy/keys`` (public) lists the
    file's keys. ``ValueError`` otherwise. A port that merely accepts connections is not enough: a
    server being killed, or hung, still has the kernel accept them, and after a crash the port may
    belong to another program by now."""
    parsed = urlsplit(state.url)
    if parsed.scheme != "http" or not parsed.hostname or not parsed.port:
        raise ValueError(f"not the local backend's URL: {state.url[:200]}")
    reader, writer = await asyncio.open_connection(parsed.hostname, parsed.port)
    try:
        request = f"GET /policy/keys HTTP/1.1\r\nHost: {parsed.netloc}\r\nConnection: close\r\n\r\n"
        writer.write(request.encode("ascii"))
        response = b""
        while len(response) < _PROBE_LIMIT:  # to the end: the server closes the connection
            chunk = await reader.read(_PROBE_LIMIT - len(response))
            if not chunk:
                break
            response += chunk
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    head, _, body = response.partition(b"\r\n\r\n")
    if not head.startswith((b"HTTP/1.1 200", b"HTTP/1.0 200")):
        raise ValueError("the local backend's port answers, but not as that backend")
    keys = json.loads(body)
    listed = keys.get("keys") if isinstance(keys, dict) else None
    published = {key.get("keyId") for key in listed or () if isinstance(key, dict)}
    if not {key.get("keyId") for key in state.policy_keys} <= published:
        raise ValueError("the local backend's port answers with other keys")


@contextlib.asynccontextmanager
async def _start_lock(directory: Path, deadline: float) -> AsyncIterator[None]:
    """The start lock of ``directory``, waited for (another client may be starting the backend)."""
    loop = asyncio.get_running_loop()
    while True:
        with try_lock(directory / LOCK_FILE) as taken:
            if taken:
                yield
                return
        if loop.time() > deadline:
            raise LaunchError(
                translate(
                    "Startup",
                    "Another Cowork client has been starting the local backend for {seconds} s"
                    " (lock: {lock})",
                ).format(seconds=f"{START_TIMEOUT_S:g}", lock=directory / LOCK_FILE)
            )
        await asyncio.sleep(_LOCK_POLL_S)


class _Embedded:
    """Finding or starting the embedded backend of one data directory, for one client."""

    def __init__(self, directory: Path, idle_timeout: float) -> None:
        self.directory = directory
        self.idle_timeout = idle_timeout
        self.started: subprocess.Popen[bytes] | None = None

    async def find_or_start(self) -> BackendAccess:
        deadline = asyncio.get_running_loop().time() + START_TIMEOUT_S
        async with _start_lock(self.directory, deadline):
            running = await _running_local(self.directory)
            if running is not None:
                return running
            return await self._start(deadline)

    async def _start(self, deadline: float) -> BackendAccess:
        command = [*module_command("backend.cli"), "serve", "--store", "local", "--port", "0"]
        command += ["--data-dir", str(self.directory), "--log-level", "warning"]
        command += ["--idle-timeout", f"{self.idle_timeout:g}"]
        log_path = self.directory / "backend.log"
        # Its log goes to a file: a pipe nobody reads during a long run would fill and stall the server.
        with log_path.open("ab") as log:
            # Not asyncio's subprocess: its transport kills the child when it closes, and this one
            # is meant to outlive us. Popen returns once the program is started (a few ms).
            process = subprocess.Popen(  # noqa: ASYNC220
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                **_detached(),
            )
        assert process.stdout is not None
        try:
            try:
                remaining = max(0.0, deadline - asyncio.get_running_loop().time())
                async with asyncio.timeout(remaining):
                    line = await asyncio.to_thread(process.stdout.readline)
                ready = json.loads(line)
                access = _access(read_state(Path(ready["stateFile"])))
            except (TimeoutError, ValueError, KeyError, TypeError, OSError) as exc:
                lines = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
                detail = lines[-1] if lines else type(exc).__name__
                raise LaunchError(
                    translate("Startup", "The local backend did not start: {problem} (log: {log})").format(
                        problem=detail, log=log_path
                    )
                ) from exc
        except BaseException:
            _end(process)
            raise
        finally:
            # It never writes to stdout again: the ready line was all.
            process.stdout.close()
        self.started = process
        _outliving.append(process)
        return access

    async def stop_unless_shared(self, lease: ClientLease) -> None:
        """Stop the backend this client started, unless another client holds a lease on it now (then
        its idle timeout stops it). Its state file goes first, under the start lock, so no client
        finds it on its way out."""
        process = self.started
        if process is None or process.poll() is not None:
            return
        deadline = asyncio.get_running_loop().time() + STOP_TIMEOUT_S
        try:
            async with _start_lock(self.directory, deadline):
                if live_leases(self.directory, ignore=lease.path):
                    return
                _forget_state(self.directory, process.pid)
        except LaunchError:
            return  # someone holds the start lock for that long: leave it to its idle timeout
        process.terminate()
        try:
            await asyncio.wait_for(asyncio.to_thread(process.wait), STOP_TIMEOUT_S)
        except TimeoutError:
            _end(process)


def _reap() -> None:
    _outliving[:] = [process for process in _outliving if process.poll() is None]


def _forget_state(directory: Path, pid: int) -> None:
    path = directory / STATE_FILE
    with contextlib.suppress(OSError, ValueError):
        if read_state(path).pid == pid:
            path.unlink()


def _end(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=STOP_TIMEOUT_S)


def _detached() -> dict[str, Any]:
    """The backend outlives the client that starts it: a session of its own, so neither the
    terminal's Ctrl-C nor the end of the client's process group reaches it."""
    if sys.platform == "win32":
        return {"creationflags": creation_flags() | subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}
