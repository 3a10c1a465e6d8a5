"""Each tenant's policy version and revocation, kept beside the policy files.

``cowork-backend policy set`` and ``policy revoke`` write ``<config dir>/policy-state/<tenant>.json``::

    {"tenantId": "acme", "version": 4, "revoked": true, "reason": "leaked token", "changedAt": "…"}

``version`` counts the administrator's changes to the tenant's policy (each ``set`` and ``revoke``
adds one); a session records the version it was issued under, so every backend process can tell
that a running session holds an older policy without any process telling another: they all read the
same directory (on AWS a shared volume, as the policy files themselves must be, so that every process
issues the same bundles). A tenant without a file is at version 0 and not revoked.

Reads are one ``stat`` when nothing changed (the file is parsed again only when its inode, size or
modification time did), so the Session Service can poll it every second for every connected tenant.
A file that cannot be read counts as *revoked*: a policy whose standing is unknown is not one sessions
should go on under.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from backend.common.auth import valid_tenant_id
from backend.common.files import write_atomically
from backend.common.ids import parse_timestamp, timestamp

__all__ = ["STATE_FOLDER", "PolicyState", "PolicyStateFiles"]

logger = logging.getLogger(__name__)

STATE_FOLDER = "policy-state"
_MAX_REASON = 500


@dataclass(frozen=True, slots=True)
class PolicyState:
    """A tenant's policy standing: how many administrator changes it has seen, and whether the
    current policy is revoked (and why)."""

    version: int = 0
    revoked: bool = False
    reason: str | None = None
    changed_at: datetime | None = None

    def to_wire(self, tenant_id: str) -> dict[str, object]:
        return {
            "tenantId": tenant_id,
            "version": self.version,
            "revoked": self.revoked,
            "reason": self.reason,
            "changedAt": None if self.changed_at is None else timestamp(self.changed_at),
        }


_UNREADABLE = PolicyState(version=-1, revoked=True, reason="the policy state file cannot be read")


class PolicyStateFiles:
    """The state files of one config directory (``None``: no directory, every tenant at version 0)."""

    def __init__(self, directory: Path | None) -> None:
        self._folder = None if directory is None else directory / STATE_FOLDER
        self._cache: dict[str, tuple[tuple[int, int, int], PolicyState]] = {}
        self._lock = threading.Lock()

    def read(self, tenant_id: str) -> PolicyState:
        if self._folder is None or not valid_tenant_id(tenant_id):
            return PolicyState()
        path = self._folder / f"{tenant_id}.json"
        try:
            stat = path.stat()
        except FileNotFoundError:
            return PolicyState()
        except OSError:
            logger.exception("cannot read the policy state of tenant %s", tenant_id)
            return _UNREADABLE
        stamp = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        with self._lock:
            cached = self._cache.get(tenant_id)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        state = self._parse(path, tenant_id)
        with self._lock:
            if len(self._cache) >= 10_000:
                self._cache.clear()
            self._cache[tenant_id] = (stamp, state)
        return state

    def record(self, tenant_id: str, *, revoked: bool, reason: str | None, now: datetime) -> PolicyState:
        """One administrator change: the version goes up by one; ``revoked`` says whether the policy
        in force from now on is a revoked one. Written atomically (a reader sees the old state or the
        new, never a torn file)."""
        if self._folder is None:
            raise ValueError("policy changes need a config directory (--config-dir)")
        if not valid_tenant_id(tenant_id):
            raise ValueError("not a valid tenant ID")
        self._folder.mkdir(parents=True, exist_ok=True)
        before = self.read(tenant_id)
        state = PolicyState(
            version=max(before.version, 0) + 1,
            revoked=revoked,
            reason=((reason or "").strip()[:_MAX_REASON] or None) if revoked else None,
            changed_at=now,
        )
        data = json.dumps(state.to_wire(tenant_id), indent=2).encode() + b"\n"
        write_atomically(self._folder / f"{tenant_id}.json", data)
        return state

    def _parse(self, path: Path, tenant_id: str) -> PolicyState:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            version = document["version"]
            revoked = document["revoked"]
            reason = document.get("reason")
            changed = document.get("changedAt")
            if not isinstance(version, int) or isinstance(version, bool) or version < 0:
                raise ValueError("version is not a whole number")
            if not isinstance(revoked, bool):
                raise ValueError("revoked is not true or false")
            if reason is not None and not isinstance(reason, str):
                raise ValueError("reason is not text")
            return PolicyState(
                version=version,
                revoked=revoked,
                reason=reason,
                changed_at=None if changed is None else parse_timestamp(str(changed)),
            )
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            logger.error("the policy state of tenant %s is unusable (%s): taken as revoked", tenant_id, exc)
            return _UNREADABLE
