"""The embedded local backend's files: how its clients find it, share it and let it go
(docs/architecture/index.md, "The embedded default").

One backend serves a user data directory (``<user data dir>/Cowork/backend``), shared by every client
on it — ``cowork exec`` runs and desktop windows — and it outlives them for an idle timeout, so the
next run finds it up. Three files in that directory say who is where:

* ``backend.json`` — the **state file**, written (owner-only) once the server accepts connections and
  removed when it stops: its URL, the local user's bearer token, its PID, the tenant and user, and
  the policy keys to pin (:class:`LocalBackendState`). A file whose PID is not running is stale.
* ``backend.lock`` — the **start lock**. A client holds it while it looks for a running backend and,
  finding none, starts one and waits for it; the backend holds it while it decides to stop for
  idleness. So two clients starting at once end with one backend, and a backend never stops between
  a client finding it and the client's lease being seen.
* ``clients/*.lease`` — one **lease** per client, locked for as long as the client uses the backend
  and taken before the client looks for it. The OS drops the lock when the client dies, however it
  dies, so a lease nobody holds is stale and is removed by whoever notices.

The agent runtime can be started before the backend is known: ``COWORK_BACKEND_STATE_FILE`` names
the state file instead of ``COWORK_BACKEND_URL``/``TOKEN``/``COWORK_POLICY_KEYS``, and the runtime
reads it when it first calls the backend (the client sends ``CreateSession`` only once the backend
is up).

Standard library only: ``cowork exec`` reads this on its way to starting the runtime.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

__all__ = [
    "CLIENTS_DIR",
    "DEFAULT_IDLE_TIMEOUT_S",
    "IDLE_TIMEOUT_VARIABLE",
    "LOCK_FILE",
    "STATE_FILE",
    "STATE_FILE_VARIABLE",
    "ClientLease",
    "LocalBackendState",
    "idle_timeout_from",
    "live_leases",
    "parse_state",
    "read_state",
    "try_lock",
]

STATE_FILE = "backend.json"
LOCK_FILE = "backend.lock"
CLIENTS_DIR = "clients"

STATE_FILE_VARIABLE = "COWORK_BACKEND_STATE_FILE"
"""The runtime's alternative to ``COWORK_BACKEND_URL``: the state file to read the backend from."""

IDLE_TIMEOUT_VARIABLE = "COWORK_BACKEND_IDLE_TIMEOUT"
"""Seconds the embedded backend stays up after its last client; 0 keeps it up until stopped."""

DEFAULT_IDLE_TIMEOUT_S = 600.0

_LEASE_SUFFIX = ".lease"


@dataclass(frozen=True)
class LocalBackendState:
    url: str
    token: str
    pid: int
    tenant_id: str
    user_id: str
    policy_keys: list[dict[str, Any]]
    started_at: str

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "token": self.token,
            "pid": self.pid,
            "tenantId": self.tenant_id,
            "userId": self.user_id,
            "policyKeys": self.policy_keys,
            "startedAt": self.started_at,
        }


def parse_state(data: bytes | str) -> LocalBackendState:
    """The state file's content; ``ValueError`` naming what is wrong with it."""
    try:
        raw = json.loads(data)
    except ValueError:
        raise ValueError("the backend's state file is not JSON") from None
    if not isinstance(raw, dict):
        raise ValueError("the backend's state file is not a JSON object")
    text = {}
    for name in ("url", "token", "tenantId", "userId", "startedAt"):
        value = raw.get(name)
        if not isinstance(value, str) or not value:
            raise ValueError(f"the backend's state file has no {name}")
        text[name] = value
    pid, keys = raw.get("pid"), raw.get("policyKeys")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        raise ValueError("the backend's state file has no pid")
    if not isinstance(keys, list) or not keys or not all(isinstance(key, dict) for key in keys):
        raise ValueError("the backend's state file has no policyKeys")
    return LocalBackendState(
        url=text["url"],
        token=text["token"],
        pid=pid,
        tenant_id=text["tenantId"],
        user_id=text["userId"],
        policy_keys=keys,
        started_at=text["startedAt"],
    )


def read_state(path: Path) -> LocalBackendState:
    """The state file at ``path``: ``OSError`` if it cannot be read, ``ValueError`` if malformed."""
    return parse_state(path.read_bytes())


def idle_timeout_from(environ: Mapping[str, str]) -> float:
    """``COWORK_BACKEND_IDLE_TIMEOUT`` (seconds, ≥ 0), else the default; ``ValueError`` if malformed."""
    raw = environ.get(IDLE_TIMEOUT_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_IDLE_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{IDLE_TIMEOUT_VARIABLE} must be a number of seconds, not {raw[:40]!r}") from None
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"{IDLE_TIMEOUT_VARIABLE} must be a number of seconds ≥ 0")
    return value


# ------------------------------------------------------------------------------------------- locks


@contextlib.contextmanager
def try_lock(path: Path, *, wait: bool = False) -> Iterator[bool]:
    """An exclusive lock on ``path`` between processes, without waiting: yields whether it was taken.
    With ``wait`` it waits for the lock instead (and yields True).

    Held until the block ends or the process dies (the OS drops it then, whatever the death).
    """
    stream: IO[bytes] = open(path, "a+b")  # noqa: SIM115 - held open for the lock's lifetime
    try:
        if not _lock(stream, wait):
            yield False
            return
        try:
            yield True
        finally:
            _unlock(stream)
    finally:
        stream.close()


class ClientLease:
    """A client's claim on the backend of ``directory``: a locked file in ``clients/``, held until
    :meth:`release` (or the process's death). Take it before looking for the backend."""

    def __init__(self, directory: Path) -> None:
        clients = directory / CLIENTS_DIR
        clients.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = clients / f"{os.getpid()}-{uuid.uuid4().hex[:12]}{_LEASE_SUFFIX}"
        self._stream: IO[bytes] | None = open(self.path, "a+b")  # noqa: SIM115 - held for the lease
        if not _lock(self._stream):  # a fresh name nobody else opens: cannot happen but on a broken FS
            self._stream.close()
            raise OSError(f"cannot lock {self.path}")

    def release(self) -> None:
        stream, self._stream = self._stream, None
        if stream is None:
            return
        _unlock(stream)
        stream.close()
        with contextlib.suppress(OSError):  # a scan may have removed it since it was unlocked
            self.path.unlink()

    def __enter__(self) -> ClientLease:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()


def live_leases(directory: Path, *, ignore: Path | None = None) -> int:
    """How many clients hold a lease on the backend of ``directory`` (``ignore``: one's own); the
    leases of clients that died are removed on the way."""
    try:
        names = os.listdir(directory / CLIENTS_DIR)
    except FileNotFoundError:
        return 0
    live = 0
    for name in names:
        path = directory / CLIENTS_DIR / name
        if not name.endswith(_LEASE_SUFFIX) or path == ignore:
            continue
        try:
            with try_lock(path) as taken:
                if not taken:
                    live += 1
                    continue
            # Nobody held it: its client is gone (lease names are never reused, so nobody takes it
            # again). Removed once closed, which Windows needs.
            path.unlink()
        except OSError:
            continue  # removed meanwhile by its client or another scan
    return live


if sys.platform == "win32":
    import msvcrt

    def _lock(stream: IO[bytes], wait: bool = False) -> bool:
        stream.seek(0)
        try:
            msvcrt.locking(stream.fileno(), msvcrt.LK_LOCK if wait else msvcrt.LK_NBLCK, 1)
        except OSError:
            if wait:
                raise  # LK_LOCK gives up after ten seconds
            return False
        return True

    def _unlock(stream: IO[bytes]) -> None:
        stream.seek(0)
        with contextlib.suppress(OSError):
            msvcrt.locking(stream.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(stream: IO[bytes], wait: bool = False) -> bool:
        try:
            fcntl.flock(stream.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            return False
        return True

    def _unlock(stream: IO[bytes]) -> None:
        fcntl.flock(stream.fileno(), fcntl.LOCK_UN)
