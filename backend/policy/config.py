"""Per-tenant policy configuration: files in a config directory over a built-in default.

A policy file (TOML or JSON) is a policy bundle without its per-session fields: ``capabilities``,
``approvalRules``, ``llmPolicy`` and any other :class:`~contracts.policy.PolicyBundle` field, plus two
settings of its own — ``bundleTtlSeconds`` (how long bundles last) and ``featureFlags``. Layout::

    <config dir>/default.toml        optional: replaces the built-in default for every tenant
    <config dir>/tenants/<id>.toml   optional: one tenant's policy (or .json)

A file replaces the top-level keys it names and keeps the rest from the level below (tenant over
default over built-in). In path lists (``allowedPaths``, ``blockedPaths``) ``${workspace}`` stands for
each of the session's project paths: ``${workspace}/.git`` becomes ``/home/me/proj/.git``. A session
without project paths (a general chat) gets no entry from such a pattern.

Files are re-read when they change (checked at most once a second per tenant), so a policy edit
reaches the next session and every resume (which then reports ``policyChanged``). A file that does not
validate is refused as a whole: the service answers ``POLICY_BUNDLE_INVALID`` for that tenant rather
than guessing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from backend.common.auth import valid_tenant_id
from backend.policy.state import PolicyStateFiles
from contracts.policy import PolicyBundle
from contracts.validation import invalid_request

__all__ = [
    "BUNDLE_SCHEMA_VERSION",
    "PolicyConfigError",
    "PolicyDirectory",
    "TenantPolicy",
    "builtin_policy",
    "expand_workspace",
]

logger = logging.getLogger(__name__)

BUNDLE_SCHEMA_VERSION = "1.0"
WORKSPACE = "${workspace}"
_SESSION_FIELDS = frozenset(
    {"sessionId", "tenantId", "userId", "expiresAt", "version", "signature", "schemaVersion"}
)
_PATH_LISTS = ("allowedPaths", "blockedPaths")
_PLACEHOLDER = re.compile(r"\$\{[^}]*\}")
_MIN_TTL, _MAX_TTL = 60, 7 * 24 * 3600
_RECHECK_SECONDS = 1.0
MiB = 1024 * 1024


class PolicyConfigError(Exception):
    """A policy file cannot be used; the message names the file and the problem."""


@dataclass(frozen=True, slots=True)
class TenantPolicy:
    """One tenant's effective policy, ready to become bundles."""

    template: Mapping[str, Any]
    """PolicyBundle fields in wire form, ``${workspace}`` not yet expanded."""
    bundle_ttl: timedelta
    feature_flags: Mapping[str, bool]
    revision: str = field(default="")
    """A digest of everything above: equal revisions issue equal bundles."""


def _revision(template: Mapping[str, Any], ttl: timedelta, flags: Mapping[str, bool]) -> str:
    text = json.dumps([template, ttl.total_seconds(), flags], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _with_revision(template: dict[str, Any], ttl: timedelta, flags: dict[str, bool]) -> TenantPolicy:
    return TenantPolicy(template, ttl, flags, _revision(template, ttl, flags))


DESTRUCTIVE_COMMANDS = [
    *("rm", "rmdir", "unlink", "shred", "dd", "truncate", "mkfs", "fdisk", "diskutil", "format"),
    *("chmod", "chown", "chgrp", "kill", "pkill", "killall", "crontab", "find -delete", "rsync --delete"),
    *("git push", "git reset", "git clean", "git rebase", "git checkout", "git restore", "git rm"),
    *("git stash drop", "git stash clear", "git branch -D", "git filter-branch", "git update-ref"),
    *("del", "erase", "rd"),
]
"""Programs (and program words) the built-in policy asks about in every approval mode: they destroy
work or data that a checkpoint cannot bring back."""


def builtin_policy(
    *, bundle_ttl: timedelta = timedelta(hours=8), max_artifact_bytes: int = 32 * MiB
) -> TenantPolicy:
    """What a desktop coding agent's user expects with no configuration: read and write inside the
    project, ask before deleting or running destructive commands; other commands and web requests as the
    user's approval mode says; LLM calls within generous budgets; the two remote tools of the Backend
    Tool Service — WorkspaceSearch freely (it only reads the user's own earlier conversations, in their
    own workspace), WebFetch only after asking (the backend fetches any public page the model names:
    egress in the organisation's name, and the page's content comes back into the prompt).

    ``allowedModels: ["*"]`` means no model allowlist: in local mode the model is whatever the user's
    own LLM gateway serves.
    """
    template: dict[str, Any] = {
        "capabilities": [
            {"name": "File.Read", "allowedPaths": [WORKSPACE], "maxFileSizeBytes": 10 * MiB},
            {"name": "File.Write", "allowedPaths": [WORKSPACE], "blockedPaths": [f"{WORKSPACE}/.git"]},
            {
                "name": "File.Delete",
                "allowedPaths": [WORKSPACE],
                "blockedPaths": [f"{WORKSPACE}/.git"],
                "requiresApproval": True,
                "approvalRuleId": "file-delete",
            },
            {
                # Ordinary commands are left to the user's approval mode (so the user's saved
                # "Always allow" rules can answer them); destructive ones always ask.
                "name": "Shell.Exec",
                "blockedCommands": ["sudo", "su", "doas", "shutdown", "reboot", "halt", "poweroff", "mkfs"],
                "approvalCommands": DESTRUCTIVE_COMMANDS,
                "maxOutputBytes": 1 * MiB,
                "approvalRuleId": "shell-exec",
            },
            # Web requests too are left to the approval mode (every host is unknown to this policy, so
            # §8.5 rates them high and on_risky_actions asks), so saved domain rules can answer them.
            {"name": "Network.Http", "approvalRuleId": "network-http"},
            {"name": "LLM.Call"},
            {"name": "Workspace.Upload", "maxFileSizeBytes": max_artifact_bytes},
            {"name": "BackendTool.Invoke", "allowedToolNames": ["WorkspaceSearch", "WebFetch"]},
        ],
        "approvalRules": [
            {
                "approvalRuleId": "file-delete",
                "title": "Delete a file",
                "description": "The agent wants to delete a file in your project.",
                "riskLevel": "high",
            },
            {
                "approvalRuleId": "shell-exec",
                "title": "Run a command",
                "description": "The agent wants to run a command on your computer.",
                "riskLevel": "medium",
            },
            {
                "approvalRuleId": "network-http",
                "title": "Make a web request",
                "description": "The agent wants to send an HTTP request to the internet.",
                "riskLevel": "medium",
            },
            {
                # Asked in every approval mode: a page fetched by the backend on the model's word.
                "approvalRuleId": "web-fetch",
                "title": "Fetch a web page",
                "description": "The Cowork backend would fetch this page from the internet and show it to"
                " the agent.",
                "riskLevel": "medium",
                "toolNames": ["WebFetch"],
            },
        ],
        "llmPolicy": {
            "allowedModels": ["*"],
            "maxInputTokens": 200_000,
            "maxOutputTokens": 16_384,
            "maxSessionTokens": 10_000_000,
        },
    }
    flags = {"approvalService": True, "auditService": True, "telemetryService": True}
    return _with_revision(template, bundle_ttl, flags)


def _windows_path(path: str) -> bool:
    return bool(re.match(r"^[A-Za-z]:[\\/]", path)) or path.startswith("\\\\")


def expand_workspace(entries: Sequence[str], workspace_paths: Sequence[str]) -> list[str]:
    """Each entry with ``${workspace}`` once per project path (none without paths); others as they are."""
    expanded: list[str] = []
    for entry in entries:
        if WORKSPACE not in entry:
            expanded.append(entry)
            continue
        for path in workspace_paths:
            separator = "\\" if _windows_path(path) else "/"
            root = path.rstrip("\\/") or path
            value = entry.replace(WORKSPACE, root)
            if separator == "\\":
                value = root + value[len(root) :].replace("/", "\\")
            expanded.append(value)
    return list(dict.fromkeys(expanded))


def expand_template(template: Mapping[str, Any], workspace_paths: Sequence[str]) -> dict[str, Any]:
    capabilities = []
    for grant in template.get("capabilities", []):
        grant = dict(grant)
        for key in _PATH_LISTS:
            if isinstance(grant.get(key), list):
                grant[key] = expand_workspace(grant[key], workspace_paths)
        capabilities.append(grant)
    return {**template, "capabilities": capabilities}


def _placeholders_where_allowed(value: Any, where: str, in_path_list: bool = False) -> None:
    if isinstance(value, str):
        for found in _PLACEHOLDER.findall(value):
            if found != WORKSPACE or not in_path_list:
                raise ValueError(
                    f"{where}: {found} is not allowed here (only {WORKSPACE} in allowedPaths/blockedPaths)"
                )
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _placeholders_where_allowed(item, f"{where}[{index}]", in_path_list)
    elif isinstance(value, dict):
        for key, item in value.items():
            _placeholders_where_allowed(item, f"{where}.{key}", key in _PATH_LISTS)


def parse_policy(document: Any, base: TenantPolicy, source: str) -> TenantPolicy:
    """``document`` (a parsed file) over ``base``, validated as a whole; PolicyConfigError if unusable."""
    if not isinstance(document, dict):
        raise PolicyConfigError(f"{source}: a policy file is a table/object of bundle fields")
    overrides = dict(document)
    ttl = base.bundle_ttl
    flags = dict(base.feature_flags)
    try:
        reserved = sorted(_SESSION_FIELDS & overrides.keys())
        if reserved:
            raise ValueError(f"{reserved[0]} is set by the service for each session, not by policy")
        if "bundleTtlSeconds" in overrides:
            seconds = overrides.pop("bundleTtlSeconds")
            if (
                not isinstance(seconds, int)
                or isinstance(seconds, bool)
                or not _MIN_TTL <= seconds <= _MAX_TTL
            ):
                raise ValueError(f"bundleTtlSeconds must be a whole number from {_MIN_TTL} to {_MAX_TTL}")
            ttl = timedelta(seconds=seconds)
        if "featureFlags" in overrides:
            given = overrides.pop("featureFlags")
            if not isinstance(given, dict) or not all(isinstance(v, bool) for v in given.values()):
                raise ValueError("featureFlags must map names to true or false")
            flags = dict(given)
        _placeholders_where_allowed(overrides, "(root)")
    except ValueError as exc:
        raise PolicyConfigError(f"{source}: {exc}") from None
    template = {**base.template, **overrides}
    # Refuse now, not at the first session: the whole template must make a valid bundle.
    try:
        build_bundle(template, ["/probe"], session_id="probe", expires_at=datetime(2000, 1, 1, tzinfo=UTC))
    except ValidationError as exc:
        raise PolicyConfigError(f"{source}: {invalid_request(exc).message}") from None
    return _with_revision(template, ttl, flags)


def build_bundle(
    template: Mapping[str, Any],
    workspace_paths: Sequence[str],
    *,
    session_id: str,
    expires_at: datetime,
    version: str = "unsigned",
) -> PolicyBundle:
    """A bundle made through the model (validated as JSON), so fields others add just work."""
    wire = {
        **expand_template(template, workspace_paths),
        "sessionId": session_id,
        "expiresAt": expires_at.isoformat(),
        "schemaVersion": BUNDLE_SCHEMA_VERSION,
        "version": version,
    }
    return PolicyBundle.model_validate_json(json.dumps(wire))


def _read(path: Path) -> Any:
    try:
        if path.suffix == ".json":
            return json.loads(path.read_text(encoding="utf-8"))
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PolicyConfigError(f"{path.name}: cannot be read as {path.suffix[1:].upper()}: {exc}") from None


class PolicyDirectory:
    """The effective policy of each tenant, read from a config directory (or the built-in default)."""

    def __init__(self, directory: Path | None, builtin: TenantPolicy) -> None:
        self._directory = directory
        self._builtin = builtin
        self._files: dict[Path, tuple[tuple[int, int], Any]] = {}
        self._resolved: dict[str, tuple[float, int, TenantPolicy | PolicyConfigError]] = {}
        self._lock = threading.Lock()
        self.states = PolicyStateFiles(directory)
        """Each tenant's policy version and revocation (``cowork-backend policy set|revoke``)."""

    @property
    def directory(self) -> Path | None:
        """The config directory (None: the built-in policy only); tenants' quotas live there too."""
        return self._directory

    def for_tenant(self, tenant_id: str) -> TenantPolicy:
        """The tenant's policy; PolicyConfigError if its files do not validate."""
        now = time.monotonic()
        # An administrator's change (policy set) is seen at once, not after the recheck interval: a
        # session told of the change must be issued the new policy.
        version = self.states.read(tenant_id).version
        with self._lock:
            cached = self._resolved.get(tenant_id)
            if cached is None or now - cached[0] >= _RECHECK_SECONDS or cached[1] != version:
                try:
                    result: TenantPolicy | PolicyConfigError = self._resolve(tenant_id)
                except PolicyConfigError as exc:
                    logger.error("policy configuration refused: %s", exc)
                    result = exc
                if len(self._resolved) >= 10_000:
                    self._resolved.clear()
                cached = self._resolved[tenant_id] = (now, version, result)
        if isinstance(cached[2], PolicyConfigError):
            raise cached[2]
        return cached[2]

    def default_policy(self) -> TenantPolicy:
        """The policy a tenant file is laid over (the built-in one under ``default.toml``), read now."""
        with self._lock:
            return self._resolve(None)

    def check(self) -> list[str]:
        """Every problem in the directory (the default and each tenant file), for start-up."""
        problems: list[str] = []
        if self._directory is None:
            return problems
        try:
            with self._lock:
                self._resolve(None)
        except PolicyConfigError as exc:
            return [str(exc)]
        tenants = self._directory / "tenants"
        names = (
            sorted({p.stem for p in tenants.glob("*") if p.suffix in (".toml", ".json")})
            if tenants.is_dir()
            else []
        )
        for name in names:
            if not valid_tenant_id(name):
                problems.append(f"tenants/{name}: not a valid tenant ID, so never used")
                continue
            try:
                with self._lock:
                    self._resolve(name)
            except PolicyConfigError as exc:
                problems.append(str(exc))
        return problems

    def _resolve(self, tenant_id: str | None) -> TenantPolicy:
        policy = self._builtin
        if self._directory is None:
            return policy
        default = self._document(self._directory, "default")
        if default is not None:
            policy = parse_policy(default[1], policy, default[0])
        if tenant_id is not None and valid_tenant_id(tenant_id):
            tenant = self._document(self._directory / "tenants", tenant_id)
            if tenant is not None:
                policy = parse_policy(tenant[1], policy, tenant[0])
        return policy

    def _document(self, folder: Path, stem: str) -> tuple[str, Any] | None:
        found = [p for p in (folder / f"{stem}.toml", folder / f"{stem}.json") if p.is_file()]
        if not found:
            return None
        if len(found) > 1:
            raise PolicyConfigError(f"{stem}: both .toml and .json exist; keep one")
        path = found[0]
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
        cached = self._files.get(path)
        if cached is None or cached[0] != stamp:
            cached = (stamp, _read(path))
            self._files[path] = cached
        source = str(path.relative_to(self._directory)) if self._directory else path.name
        return source, cached[1]
