"""Per-tenant quotas in the config directory, beside the tenants' policy files (seed 001 Phase 4)::

    <config dir>/quotas/default.toml     optional: the limits of every tenant without its own
    <config dir>/quotas/<tenant>.toml    optional: one tenant's limits, over the default's

    sessionsPerUser = 3            # sessions one user may have active at once
    tokensPerDay = 2000000         # LLM tokens the whole tenant may use per UTC day
    storageBytes = 10737418240     # artifact content the tenant may keep

Every key is optional; a key left out is taken from the default file, and ``"unlimited"`` lifts a
default's limit for one tenant. ``cowork-backend quota set|show`` writes and reads these files. Files
are re-read when they change (checked at most once a second per tenant), so a change reaches the next
request of every service reading the directory.

A file that cannot be used is logged and ignored while the services run (its limits do not apply):
quotas guard a budget, and a typo should not stop a whole tenant. At start-up the service refuses to
run with one (:meth:`QuotaDirectory.check`).
"""

from __future__ import annotations

import logging
import threading
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, Literal

from backend.common.auth import valid_tenant_id
from backend.common.files import write_atomically

__all__ = [
    "LIMITS",
    "UNLIMITED",
    "QuotaConfigError",
    "QuotaDirectory",
    "Setting",
    "TenantQuotas",
    "render",
]

logger = logging.getLogger(__name__)

UNLIMITED: Final = "unlimited"
LIMITS: Final = {
    "sessionsPerUser": "sessions_per_user",
    "tokensPerDay": "tokens_per_day",
    "storageBytes": "storage_bytes",
}
"""Wire name → field of :class:`TenantQuotas`."""
_FOLDER = "quotas"
_DEFAULT = "default"
_RECHECK_SECONDS = 1.0
_MAX_LIMIT = 2**62

Setting = int | Literal["unlimited"]


class QuotaConfigError(Exception):
    """A quota file cannot be used; the message names the file and the problem."""


@dataclass(frozen=True, slots=True)
class TenantQuotas:
    """A tenant's effective limits; None is no limit."""

    sessions_per_user: int | None = None
    tokens_per_day: int | None = None
    storage_bytes: int | None = None

    def to_wire(self) -> dict[str, int | None]:
        return {name: getattr(self, attribute) for name, attribute in LIMITS.items()}


def _parse(document: Any, source: str) -> dict[str, Setting]:
    if not isinstance(document, dict):
        raise QuotaConfigError(f"{source}: a quota file is a table of limits")
    unknown = sorted(set(document) - set(LIMITS))
    if unknown:
        raise QuotaConfigError(f"{source}: unknown key {unknown[0]!r} (known: {', '.join(LIMITS)})")
    settings: dict[str, Setting] = {}
    for key, value in document.items():
        if value == UNLIMITED:
            settings[key] = UNLIMITED
        elif isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_LIMIT:
            settings[key] = value
        else:
            raise QuotaConfigError(f'{source}: {key} must be a whole number ≥ 0 or "{UNLIMITED}"')
    return settings


def _apply(base: TenantQuotas, settings: Mapping[str, Setting]) -> TenantQuotas:
    changes = {LIMITS[key]: None if value == UNLIMITED else value for key, value in settings.items()}
    return replace(base, **changes)


def render(settings: Mapping[str, Setting]) -> str:
    """A quota file's text (keys in a fixed order, so rewrites diff cleanly)."""
    lines = ["# Quotas of one tenant (cowork-backend quota set); see backend/common/quota_config.py."]
    for key in LIMITS:
        if key in settings:
            value = settings[key]
            lines.append(f'{key} = "{UNLIMITED}"' if value == UNLIMITED else f"{key} = {value}")
    return "\n".join(lines) + "\n"


class QuotaDirectory:
    """The effective quotas of each tenant, read from ``<config dir>/quotas`` (none without one)."""

    def __init__(self, config_dir: Path | None, *, recheck_seconds: float = _RECHECK_SECONDS) -> None:
        self._folder = None if config_dir is None else config_dir / _FOLDER
        self._recheck_seconds = recheck_seconds
        self._files: dict[Path, tuple[tuple[int, int], dict[str, Setting] | QuotaConfigError]] = {}
        self._resolved: dict[str, tuple[float, TenantQuotas]] = {}
        self._lock = threading.Lock()

    @property
    def folder(self) -> Path | None:
        return self._folder

    def for_tenant(self, tenant_id: str) -> TenantQuotas:
        """The tenant's limits; a file that cannot be used counts as absent (and is logged)."""
        if self._folder is None:
            return TenantQuotas()
        now = time.monotonic()
        with self._lock:
            cached = self._resolved.get(tenant_id)
            if cached is None or now - cached[0] >= self._recheck_seconds:
                quotas = TenantQuotas()
                for stem in (_DEFAULT, tenant_id):
                    try:
                        quotas = _apply(quotas, self._settings(stem))
                    except QuotaConfigError:
                        continue  # logged when the file was read
                if len(self._resolved) >= 10_000:
                    self._resolved.clear()
                cached = self._resolved[tenant_id] = (now, quotas)
        return cached[1]

    def explain(self, tenant_id: str) -> tuple[TenantQuotas, dict[str, str]]:
        """The tenant's limits and, per limit that is set in a file, which file: for ``quota show``.
        Raises :class:`QuotaConfigError` for a file that cannot be used."""
        quotas = TenantQuotas()
        sources: dict[str, str] = {}
        if self._folder is None:
            return quotas, sources
        with self._lock:
            for stem in (_DEFAULT, tenant_id):
                settings = self._settings(stem)
                quotas = _apply(quotas, settings)
                sources.update(dict.fromkeys(settings, f"{_FOLDER}/{stem}.toml"))
        return quotas, sources

    def check(self) -> list[str]:
        """Every problem in the folder, for start-up: files that do not parse or name no tenant."""
        if self._folder is None or not self._folder.is_dir():
            return []
        problems: list[str] = []
        for path in sorted(self._folder.glob("*.toml")):
            if path.stem != _DEFAULT and not valid_tenant_id(path.stem):
                problems.append(f"{_FOLDER}/{path.name}: not a valid tenant ID, so never used")
                continue
            try:
                with self._lock:
                    self._settings(path.stem)
            except QuotaConfigError as exc:
                problems.append(str(exc))
        return problems

    def tenant_settings(self, tenant_id: str) -> dict[str, Setting]:
        """What the tenant's own file says (not the default's)."""
        with self._lock:
            return dict(self._settings(tenant_id))

    def write(self, tenant_id: str, changes: Mapping[str, Setting | None]) -> dict[str, Setting]:
        """Change the tenant's own file: each key to its value, or back to the default's (None).
        The file is replaced atomically; without any key left it is removed. What it now says."""
        if self._folder is None:
            raise QuotaConfigError("quotas need a config directory (--config-dir)")
        if not valid_tenant_id(tenant_id):
            raise QuotaConfigError("not a valid tenant ID")
        unknown = sorted(set(changes) - set(LIMITS))
        if unknown:
            raise QuotaConfigError(f"unknown limit {unknown[0]!r}")
        settings = self.tenant_settings(tenant_id)
        for key, value in changes.items():
            if value is None:
                settings.pop(key, None)
            else:
                settings[key] = value
        _parse(settings, "the new limits")
        path = self._folder / f"{tenant_id}.toml"
        self._folder.mkdir(parents=True, exist_ok=True)
        if settings:
            write_atomically(path, render(settings).encode("utf-8"))
        else:
            path.unlink(missing_ok=True)
        with self._lock:
            self._resolved.pop(tenant_id, None)
        return settings

    def _settings(self, stem: str) -> dict[str, Setting]:
        """One file's settings ({} when there is none), cached until the file changes. Lock held."""
        assert self._folder is not None
        path = self._folder / f"{stem}.toml"
        try:
            stat = path.stat()
        except FileNotFoundError:
            self._files.pop(path, None)
            return {}
        except OSError as exc:
            raise QuotaConfigError(f"{_FOLDER}/{path.name}: cannot be read: {exc.strerror}") from None
        stamp = (stat.st_mtime_ns, stat.st_size)
        cached = self._files.get(path)
        if cached is None or cached[0] != stamp:
            source = f"{_FOLDER}/{path.name}"
            parsed: dict[str, Setting] | QuotaConfigError
            try:
                parsed = _parse(tomllib.loads(path.read_text(encoding="utf-8")), source)
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                parsed = QuotaConfigError(f"{source}: cannot be read as TOML: {exc}")
            except QuotaConfigError as exc:
                parsed = exc
            if isinstance(parsed, QuotaConfigError):
                logger.error("quota configuration ignored: %s", parsed)
            cached = self._files[path] = (stamp, parsed)
        if isinstance(cached[1], QuotaConfigError):
            raise cached[1]
        return cached[1]
