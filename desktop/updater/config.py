"""Whether the app checks for runtime updates, and where: the release manifest's URL and the channel.

The installed (frozen) app reads them from ``update.json``, which the installer places beside the
program (:func:`desktop.updater.active.update_config_file`)::

    {"manifestUrl": "https://releases.example.com/agent-runtime/manifest.json", "channel": "stable"}

``COWORK_UPDATE_MANIFEST_URL`` overrides the file's URL — and turns checks on when running from
source, for trying a release site — and ``COWORK_UPDATE_CHANNEL`` (``stable`` or ``beta``) the
channel. Letting the URL be configured is safe: what makes a manifest trusted is its signature chain
up to the root keys pinned in the app (``desktop.updater.keys``), which nothing here can change, so
another site can at worst offer nothing or fail the checks.

An invalid value turns checks off with one message saying which value is wrong; it never stops the app.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast
from urllib.parse import urlsplit

from desktop.updater.active import update_config_file

if TYPE_CHECKING:  # read at every start of the app: contracts.release's imports wait for an update round
    from contracts.release import Channel

__all__ = [
    "CHANNELS",
    "CHANNEL_VARIABLE",
    "MANIFEST_URL_VARIABLE",
    "UpdateConfig",
    "UpdatesOff",
    "update_config",
]

MANIFEST_URL_VARIABLE = "COWORK_UPDATE_MANIFEST_URL"
CHANNEL_VARIABLE = "COWORK_UPDATE_CHANNEL"

CHANNELS = ("stable", "beta")
"""``contracts.release.Channel``'s values."""
_MAX_FILE_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class UpdateConfig:
    manifest_url: str
    channel: Channel
    origin: str
    """Where the URL came from (the variable or the file), for the log."""


@dataclass(frozen=True, slots=True)
class UpdatesOff:
    """No update checks; ``reason`` says why, ``invalid`` whether a value was wrong (an error) or
    simply none was given (running from source, or an installation without ``update.json``)."""

    reason: str
    invalid: bool = False


def update_config(
    environ: Mapping[str, str], *, frozen: bool, config_file: Path | None = None
) -> UpdateConfig | UpdatesOff:
    """The update settings of this run. ``config_file`` defaults to :func:`update_config_file`."""
    path = update_config_file() if config_file is None else config_file
    url = environ.get(MANIFEST_URL_VARIABLE, "").strip()
    origin = MANIFEST_URL_VARIABLE
    channel: str | None = None
    if frozen:
        settings = _read_file(path)
        if isinstance(settings, UpdatesOff):
            if settings.invalid or not url:  # a missing file is fine when the variable names a manifest
                return settings
        else:
            channel = settings[1]
            if not url:
                url, origin = settings[0], str(path)
    elif not url:
        return UpdatesOff(f"running from source and {MANIFEST_URL_VARIABLE} is not set")
    if problem := _url_problem(url):
        return UpdatesOff(f"the release manifest URL {url[:200]!r} from {origin} {problem}", invalid=True)

    chosen = environ.get(CHANNEL_VARIABLE, "").strip()
    channel_origin = CHANNEL_VARIABLE
    if not chosen:
        chosen, channel_origin = channel or "stable", str(path)
    if chosen not in CHANNELS:
        return UpdatesOff(
            f"the update channel {chosen[:40]!r} from {channel_origin} is not one of {', '.join(CHANNELS)}",
            invalid=True,
        )
    return UpdateConfig(url, cast("Channel", chosen), origin)


def _read_file(path: Path) -> tuple[str, str | None] | UpdatesOff:
    try:
        with path.open("rb") as stream:
            raw = stream.read(_MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return UpdatesOff(f"{MANIFEST_URL_VARIABLE} is not set and there is no {path}")
    except OSError as exc:
        return UpdatesOff(f"{path} cannot be read: {exc.strerror or exc}", invalid=True)
    if len(raw) > _MAX_FILE_BYTES:
        return UpdatesOff(f"{path} is larger than {_MAX_FILE_BYTES // 1024} KiB", invalid=True)
    try:
        settings = json.loads(raw)
    except ValueError as exc:
        return UpdatesOff(f"{path} is not valid JSON ({exc})", invalid=True)
    if not isinstance(settings, dict):
        return UpdatesOff(f'{path} must hold an object like {{"manifestUrl": "https://…"}}', invalid=True)
    url, channel = settings.get("manifestUrl"), settings.get("channel")
    if not isinstance(url, str) or not url.strip():
        return UpdatesOff(f"{path} has no manifestUrl (a string)", invalid=True)
    if channel is not None and not isinstance(channel, str):
        return UpdatesOff(f"{path}: channel must be a string, {', '.join(CHANNELS)}", invalid=True)
    return url.strip(), channel


def _url_problem(url: str) -> str | None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as exc:
        return f"is not a URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return "is not an http(s) URL"
    if not parts.hostname:
        return "names no host"
    if any(c.isspace() for c in url):
        return "contains spaces"
    return None
