"""An administrator's changes to a tenant's policy: install a policy file, revoke the policy in force.

Both go through the config directory the services read (:mod:`backend.policy.config`), and both add
one to the tenant's policy version (:mod:`backend.policy.state`): the Session Service notices the new
version within its push interval and tells the tenant's running sessions — ``policy_changed`` with a
bundle of the new policy, or ``policy_revoked`` — whichever backend process serves them.

* :func:`install_policy` validates the file as the services would read it (over ``default.toml`` and
  the built-in policy), writes it as ``tenants/<tenant>.<toml|json>`` atomically (a service reading
  at that moment sees the old file or the new one, never half of it), removes the tenant's file of the
  other format (both at once would be refused), and lifts a revocation: the new policy is valid.
* :func:`revoke_policy` marks the tenant's policy revoked: no bundle is issued for the tenant (new
  sessions and resumes are refused with ``POLICY_EXPIRED``, ``details.reason = "revoked"``) until a
  policy is installed again, and running sessions pause.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from backend.common.auth import valid_tenant_id
from backend.common.files import write_atomically
from backend.policy.config import PolicyConfigError, PolicyDirectory, parse_policy
from backend.policy.state import PolicyState

__all__ = ["PolicyAdminError", "PolicySummary", "install_policy", "revoke_policy", "summarize_policy"]

_MAX_FILE_BYTES = 1024 * 1024


class PolicyAdminError(Exception):
    """The change was not made; the message says why (for a one-line CLI error)."""


@dataclass(frozen=True, slots=True)
class PolicySummary:
    tenant_id: str
    state: PolicyState
    revision: str | None
    """The digest of the effective policy (None when the tenant's files do not validate)."""
    file: str | None
    """The tenant's own policy file, relative to the config directory (None: the default applies)."""
    problem: str | None = None
    policy: dict[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            **self.state.to_wire(self.tenant_id),
            "revision": self.revision,
            "file": self.file,
        }
        if self.problem is not None:
            shown["problem"] = self.problem
        if self.policy is not None:
            shown["policy"] = self.policy
        return shown


def _check_tenant(tenant_id: str) -> None:
    if not valid_tenant_id(tenant_id):
        raise PolicyAdminError("not a valid tenant ID (1-64 letters, digits, '.', '_' or '-')")


def _config_dir(policies: PolicyDirectory) -> Path:
    if policies.directory is None:
        raise PolicyAdminError("policy changes need the services' config directory (--config-dir)")
    return policies.directory


def _tenant_file(directory: Path, tenant_id: str) -> Path | None:
    found = [
        p for p in (directory / "tenants" / f"{tenant_id}{s}" for s in (".toml", ".json")) if p.is_file()
    ]
    return found[0] if len(found) == 1 else None


def install_policy(
    policies: PolicyDirectory, tenant_id: str, source: Path, *, now: datetime
) -> PolicySummary:
    """Validate ``source`` and make it the tenant's policy; the tenant's version goes up by one."""
    _check_tenant(tenant_id)
    directory = _config_dir(policies)
    suffix = source.suffix.lower()
    if suffix not in (".toml", ".json"):
        raise PolicyAdminError(f"{source.name}: a policy file is .toml or .json")
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise PolicyAdminError(f"{source}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > _MAX_FILE_BYTES:
        raise PolicyAdminError(f"{source.name}: larger than {_MAX_FILE_BYTES:,} bytes")
    try:
        text = data.decode("utf-8")
        document = json.loads(text) if suffix == ".json" else tomllib.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise PolicyAdminError(f"{source.name}: cannot be read as {suffix[1:].upper()}: {exc}") from None
    try:
        # As the services will read it: over default.toml and the built-in policy, validated whole.
        policy = parse_policy(document, policies.default_policy(), f"tenants/{tenant_id}{suffix}")
    except PolicyConfigError as exc:
        raise PolicyAdminError(str(exc)) from None
    tenants = directory / "tenants"
    tenants.mkdir(parents=True, exist_ok=True)
    target = tenants / f"{tenant_id}{suffix}"
    write_atomically(target, data)
    other = tenants / f"{tenant_id}{'.json' if suffix == '.toml' else '.toml'}"
    other.unlink(missing_ok=True)
    state = policies.states.record(tenant_id, revoked=False, reason=None, now=now)
    return PolicySummary(tenant_id, state, policy.revision, str(target.relative_to(directory)))


def revoke_policy(
    policies: PolicyDirectory, tenant_id: str, reason: str | None, *, now: datetime
) -> PolicySummary:
    """Revoke the tenant's policy in force; sessions may not continue on it."""
    _check_tenant(tenant_id)
    _config_dir(policies)
    state = policies.states.record(
        tenant_id, revoked=True, reason=reason or "revoked by an administrator", now=now
    )
    return summarize_policy(policies, tenant_id, state=state)


def summarize_policy(
    policies: PolicyDirectory, tenant_id: str, *, state: PolicyState | None = None, full: bool = False
) -> PolicySummary:
    """The tenant's policy standing (``policy show``); ``full`` adds the effective policy itself."""
    _check_tenant(tenant_id)
    state = state or policies.states.read(tenant_id)
    directory = policies.directory
    own = None if directory is None else _tenant_file(directory, tenant_id)
    file = None if own is None or directory is None else str(own.relative_to(directory))
    try:
        policy = policies.for_tenant(tenant_id)
    except PolicyConfigError as exc:
        return PolicySummary(tenant_id, state, None, file, problem=str(exc))
    shown = None
    if full:
        shown = {
            **policy.template,
            "bundleTtlSeconds": int(policy.bundle_ttl.total_seconds()),
            "featureFlags": dict(policy.feature_flags),
        }
    return PolicySummary(tenant_id, state, policy.revision, file, policy=shown)
