"""``backend.toml`` in the config directory: the service-wide settings an administrator may change.

::

    [compatibility.localAgentHostVersion]     # PEP 440 specifiers
    supported = ">=0.1,<2"
    deprecated = "<0.5"                        # optional: still served, flagged "deprecated"
    [compatibility.desktopAppVersion]
    supported = ">=0.1,<2"

    [sessions]
    bundleTtlSeconds = 28800                   # default policy bundle lifetime (tenants may override)
    resumeGraceSeconds = 3600                  # how long after expiry a session can still resume

    [workspaces]
    inactivityDays = 90                        # purge workspaces with no new session for this long
    maxArtifactBytes = 33554432
    inlineContentBytes = 262144                # local store: content up to this size (at most
                                               # 1 MiB) is kept in the database; 0 keeps all in files

    [telemetry]
    otlpEndpoint = "http://collector:4318"     # also exported to this OpenTelemetry collector
                                               # (OTLP/HTTP); $COWORK_OTLP_ENDPOINT overrides it

    [tools]
    timeoutSeconds = 120                       # a Backend Tool Service call's budget (seed 000 §7.4)
    webFetchAllowLoopback = false              # development only: WebFetch may reach 127.0.0.1/::1

Every key is optional; unknown keys are refused so a typo is not silently ignored.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from backend.common.settings import Limits, Settings, VersionRange

__all__ = [
    "MAX_INLINE_CONTENT_BYTES",
    "OTLP_ENDPOINT_VARIABLE",
    "SETTINGS_FILE",
    "ConfigError",
    "load_settings",
]

SETTINGS_FILE = "backend.toml"
OTLP_ENDPOINT_VARIABLE = "COWORK_OTLP_ENDPOINT"
MAX_INLINE_CONTENT_BYTES = 1024 * 1024
"""Past this, content in the database costs several times what a file does (its write-ahead log copies
every byte twice) and the event loop would wait on it."""


class ConfigError(Exception):
    """The settings file cannot be used; the message says where and why."""


def _table(document: dict[str, Any], name: str, keys: set[str]) -> dict[str, Any]:
    table = document.get(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"[{name}] must be a table")
    unknown = sorted(set(table) - keys)
    if unknown:
        raise ConfigError(f"[{name}] has an unknown key: {unknown[0]}")
    return table


def _positive_int(table: dict[str, Any], key: str, where: str) -> int | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"[{where}] {key} must be a positive whole number")
    return value


def _inline_content_bytes(table: dict[str, Any]) -> int | None:
    value = table.get("inlineContentBytes")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_INLINE_CONTENT_BYTES:
        raise ConfigError(
            f"[workspaces] inlineContentBytes must be a whole number from 0 to {MAX_INLINE_CONTENT_BYTES}"
        )
    return value


def _version_range(table: dict[str, Any], key: str, default: VersionRange) -> VersionRange:
    entry = table.get(key)
    if entry is None:
        return default
    if not isinstance(entry, dict) or not set(entry) <= {"supported", "deprecated"}:
        raise ConfigError(f"[compatibility.{key}] takes 'supported' and 'deprecated'")
    supported = entry.get("supported", default.supported)
    deprecated = entry.get("deprecated")
    for name, value in (("supported", supported), ("deprecated", deprecated)):
        if value is None:
            continue
        try:
            SpecifierSet(value)
        except (InvalidSpecifier, TypeError):
            raise ConfigError(f"[compatibility.{key}] {name} is not a PEP 440 specifier: {value!r}") from None
    return VersionRange(supported=supported, deprecated=deprecated)


def _otlp_endpoint(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a URL")
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError:
        raise ConfigError(f"{where} is not a URL: {value!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ConfigError(f"{where} must be an http:// or https:// URL of the collector: {value!r}")
    return value


def load_settings(
    config_dir: Path | None, base: Settings | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """``backend.toml`` over ``base``; then ``$COWORK_OTLP_ENDPOINT`` (from ``environ``, default the
    process environment) over the file's ``otlpEndpoint``."""
    settings = _from_file(config_dir, base or Settings())
    endpoint = (os.environ if environ is None else environ).get(OTLP_ENDPOINT_VARIABLE)
    if endpoint:
        settings = dataclasses.replace(
            settings, otlp_endpoint=_otlp_endpoint(endpoint, OTLP_ENDPOINT_VARIABLE)
        )
    return settings


def _from_file(config_dir: Path | None, settings: Settings) -> Settings:
    if config_dir is None or not (config_dir / SETTINGS_FILE).is_file():
        return settings
    try:
        document = tomllib.loads((config_dir / SETTINGS_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{SETTINGS_FILE}: {exc}") from None
    unknown = sorted(set(document) - {"compatibility", "sessions", "workspaces", "telemetry", "tools"})
    if unknown:
        raise ConfigError(f"{SETTINGS_FILE}: unknown table [{unknown[0]}]")
    compatibility = _table(document, "compatibility", {"localAgentHostVersion", "desktopAppVersion"})
    sessions = _table(document, "sessions", {"bundleTtlSeconds", "resumeGraceSeconds"})
    workspaces = _table(document, "workspaces", {"inactivityDays", "maxArtifactBytes", "inlineContentBytes"})
    telemetry = _table(document, "telemetry", {"otlpEndpoint"})
    tools = _table(document, "tools", {"timeoutSeconds", "webFetchAllowLoopback"})
    changes: dict[str, Any] = {
        "host_versions": _version_range(compatibility, "localAgentHostVersion", settings.host_versions),
        "desktop_versions": _version_range(compatibility, "desktopAppVersion", settings.desktop_versions),
    }
    if (ttl := _positive_int(sessions, "bundleTtlSeconds", "sessions")) is not None:
        changes["bundle_ttl"] = timedelta(seconds=ttl)
    if (grace := _positive_int(sessions, "resumeGraceSeconds", "sessions")) is not None:
        changes["resume_grace"] = timedelta(seconds=grace)
    if (days := _positive_int(workspaces, "inactivityDays", "workspaces")) is not None:
        changes["workspace_inactivity"] = timedelta(days=days)
    if (size := _positive_int(workspaces, "maxArtifactBytes", "workspaces")) is not None:
        changes["limits"] = dataclasses.replace(
            settings.limits if settings.limits else Limits(), max_artifact_bytes=size
        )
    if (inline := _inline_content_bytes(workspaces)) is not None:
        changes["inline_content_bytes"] = inline
    if "otlpEndpoint" in telemetry:
        changes["otlp_endpoint"] = _otlp_endpoint(telemetry["otlpEndpoint"], "[telemetry] otlpEndpoint")
    if (seconds := _positive_int(tools, "timeoutSeconds", "tools")) is not None:
        changes["tool_timeout"] = timedelta(seconds=seconds)
    if "webFetchAllowLoopback" in tools:
        if not isinstance(tools["webFetchAllowLoopback"], bool):
            raise ConfigError("[tools] webFetchAllowLoopback must be true or false")
        changes["web_fetch_allow_loopback"] = tools["webFetchAllowLoopback"]
    return dataclasses.replace(settings, **changes)
