"""The desktop's settings: in the same file and keychain entry ``cowork exec`` reads. Qt-free.

``<user config dir>/Cowork/settings.json`` (``desktop.launch.gateway.settings_path``)::

    {"version": 1,
     "gateway": {"preset": "anthropic", "endpoint": "https://api.anthropic.com", "api": "anthropic",
                 "model": "claude-sonnet-4-5"},
     "backend": {"url": ""},
     "tasks": {"approvalMode": "on_risky_actions", "maxSteps": 40},
     "ui": {"language": "de"}}

Secrets never go to the file. The gateway's token lives in the OS keychain through keyring, service
``Cowork LLM gateway`` with the endpoint as the account (what ``resolve_gateway`` looks up), so a token
is only ever sent to the endpoint it was saved for; a configured backend's token likewise under
``Cowork backend`` with the backend URL as the account. Keys of the file this version does not know
are kept when it saves.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from contracts.atomic import write_atomically
from desktop.conversation.pricing import PriceTable, PricingError
from desktop.i18n import LANGUAGES, SYSTEM_LANGUAGE
from desktop.launch.gateway import DEMO_MODEL, KEYRING_SERVICE, settings_path
from desktop.settings.presets import CUSTOM, DEMO, PRESETS

__all__ = [
    "APPROVAL_MODES",
    "BACKEND_KEYRING_SERVICE",
    "DEFAULT_MAX_STEPS",
    "MAX_STEPS_LIMIT",
    "SEND_KEYS",
    "THEMES",
    "AppSettings",
    "KeychainError",
    "SettingsError",
    "SettingsStore",
    "parse_max_steps",
    "validate",
]

logger = logging.getLogger(__name__)

SETTINGS_VERSION = 1
BACKEND_KEYRING_SERVICE = "Cowork backend"
APPROVAL_MODES = ("on_risky_actions", "always", "never")
"""contracts ``ApprovalMode`` values; the runtime's default first."""
DIALECTS = ("anthropic", "openai")
THEMES = ("system", "light", "dark")
"""The appearance Settings offers (``ui.theme``): the operating system's, or always light or dark."""
SEND_KEYS = ("enter", "ctrl_enter")
"""What sends a message (``ui.sendKey``): Enter (Shift+Enter for a new line), or Ctrl+Enter (⌘↩ on
macOS; Enter for a new line). The first is the default."""
DEFAULT_MAX_STEPS = 40
"""The runtime's default (contracts ``TaskOptions.maxSteps``), used when none is set."""
MAX_STEPS_LIMIT = 1000
"""The most ``TaskOptions.maxSteps`` admits."""
_MAX_TOKEN_CHARS = 8192
_MAX_MODEL_CHARS = 200


@dataclass(frozen=True)
class AppSettings:
    preset: str = ""
    """A preset id (``desktop.settings.presets``), ``custom``, or ``""`` when nothing is configured."""
    endpoint: str = ""
    """The gateway's URL; ``""`` for the offline demo model, which the app starts itself."""
    api: str = "anthropic"
    model: str = ""
    backend_url: str = ""
    """``""``: the embedded local backend."""
    approval_mode: str = "on_risky_actions"
    max_steps: int | None = None
    """``None``: the runtime's default (:data:`DEFAULT_MAX_STEPS`)."""

    @property
    def is_demo(self) -> bool:
        """The offline demo model: the app starts the scripted gateway (``demo_gateway``) for it."""
        return self.preset == DEMO.id


class SettingsError(ValueError):
    """Settings that cannot be used. ``problems`` maps each field (an :class:`AppSettings` name, or
    ``token`` / ``backend_token`` / ``file``) to a message for the user."""

    def __init__(self, problems: Mapping[str, str]) -> None:
        self.problems = dict(problems)
        super().__init__(" ".join(self.problems.values()))


class KeychainError(SettingsError):
    """The OS keychain refused to store or remove a token. Nothing was saved."""

    def __init__(self, field: str, detail: str) -> None:
        variable = "COWORK_BACKEND_TOKEN" if field == "backend_token" else "LLM_GATEWAY_AUTH_TOKEN"
        super().__init__(
            {
                field: f"The OS keychain could not store the token ({detail}), so nothing was saved: "
                f"Cowork never writes tokens to a file. Unlock or set up the keychain, or set {variable} "
                "in the environment instead."
            }
        )


# ---------------------------------------------------------------------- validation


def parse_max_steps(text: str) -> int | None:
    """What the user typed as max steps: ``""`` is the default (``None``), else 1 to 1000."""
    stripped = text.strip()
    if not stripped:
        return None
    if not stripped.isdecimal() or not 1 <= int(stripped) <= MAX_STEPS_LIMIT:
        raise SettingsError({"max_steps": _MAX_STEPS_PROBLEM})
    return int(stripped)


_MAX_STEPS_PROBLEM = (
    f"Max steps must be a whole number from 1 to {MAX_STEPS_LIMIT}, or empty for the default "
    f"({DEFAULT_MAX_STEPS})."
)
_KNOWN_PRESETS = frozenset({preset.id for preset in PRESETS} | {CUSTOM})


def validate(settings: AppSettings, *, token: str | None = None, backend_token: str | None = None) -> None:
    """Every problem with ``settings`` (and the tokens about to be saved) at once, as one
    :class:`SettingsError`; nothing when they can be used."""
    problems: dict[str, str] = {}
    if settings.preset not in _KNOWN_PRESETS:
        problems["preset"] = "Choose one of the presets, or Custom."
    if not settings.is_demo:
        if problem := _url_problem(settings.endpoint, "The endpoint", "https://api.anthropic.com"):
            problems["endpoint"] = problem
        if settings.api not in DIALECTS:
            problems["api"] = "The dialect must be anthropic or openai."
        model = settings.model
        if not model.strip():
            problems["model"] = "Enter the model to call, such as claude-sonnet-4-5 or gpt-4.1."
        elif len(model) > _MAX_MODEL_CHARS or any(char.isspace() for char in model):
            problems["model"] = f"A model name has no spaces and at most {_MAX_MODEL_CHARS} characters."
    if settings.backend_url and (
        problem := _url_problem(settings.backend_url, "The backend URL", "https://cowork.example.com")
    ):
        problems["backend_url"] = problem + " Leave it empty for the local backend on this computer."
    if settings.approval_mode not in APPROVAL_MODES:
        problems["approval_mode"] = "The approval mode must be on_risky_actions, always or never."
    steps = settings.max_steps
    if steps is not None and (
        isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS_LIMIT
    ):
        problems["max_steps"] = _MAX_STEPS_PROBLEM
    for field, value in (("token", token), ("backend_token", backend_token)):
        if value and (
            len(value) > _MAX_TOKEN_CHARS or any(not char.isprintable() or char.isspace() for char in value)
        ):
            problems[field] = "A token is one line without spaces; check what was pasted."
    if problems:
        raise SettingsError(problems)


def _url_problem(url: str, what: str, example: str) -> str | None:
    wanted = f"{what} must be an http:// or https:// URL, such as {example}."
    if not url or url != url.strip() or any(char.isspace() for char in url):
        return wanted
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a port out of range)
    except ValueError:
        return wanted
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return wanted
    if parts.username is not None or parts.password is not None:
        return f"{what} must not contain a user name or password: put the token in the token field."
    return None


# ---------------------------------------------------------------------- the store


class SettingsStore:
    """Reads and writes the settings file (default: the one ``cowork exec`` reads) and the keychain."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else settings_path()

    def load(self) -> AppSettings:
        """The saved settings; defaults when there are none. ``SettingsError`` (field ``file``) when the
        file cannot be read or holds values of the wrong kind; the file is left as it is."""
        data = self._read()
        if data is None:
            return AppSettings()
        try:
            gateway, backend, tasks = (_section(data, name) for name in ("gateway", "backend", "tasks"))
            endpoint = _string(gateway, "endpoint", "gateway.endpoint")
            preset = _string(gateway, "preset", "gateway.preset") or (CUSTOM if endpoint else "")
            settings = AppSettings(
                preset=preset,
                endpoint=endpoint,
                api=(_string(gateway, "api", "gateway.api") or "anthropic").lower(),
                model=_string(gateway, "model", "gateway.model"),
                backend_url=_string(backend, "url", "backend.url"),
                approval_mode=_string(tasks, "approvalMode", "tasks.approvalMode") or "on_risky_actions",
                max_steps=_max_steps(tasks.get("maxSteps")),
            )
        except ValueError as exc:
            raise SettingsError({"file": f"The settings file {self.path} has {exc}"}) from None
        if settings.is_demo:
            settings = replace(settings, endpoint="", api=DEMO.api, model=DEMO_MODEL)
        return settings

    def is_configured(self) -> bool:
        """Whether an LLM gateway is saved (an endpoint, or the offline demo model): if not, the app
        offers the first-run dialog. An unreadable file counts as not configured."""
        try:
            settings = self.load()
        except SettingsError:
            return False
        return settings.is_demo or bool(settings.endpoint)

    def token(self) -> str | None:
        """The gateway token saved for the configured endpoint, from the OS keychain."""
        try:
            settings = self.load()
        except SettingsError:
            return None
        return None if settings.is_demo else self.token_for(settings.endpoint)

    def token_for(self, endpoint: str) -> str | None:
        """The gateway token saved for ``endpoint`` (``None``: none, or no usable keychain)."""
        return _get_secret(KEYRING_SERVICE, endpoint) if endpoint else None

    def backend_token(self) -> str | None:
        """The token of the configured backend (``None`` for the embedded one, or none saved)."""
        try:
            url = self.load().backend_url
        except SettingsError:
            return None
        return self.backend_token_for(url)

    def backend_token_for(self, url: str) -> str | None:
        return _get_secret(BACKEND_KEYRING_SERVICE, url) if url else None

    def save(self, settings: AppSettings, token: str | None, *, backend_token: str | None = None) -> None:
        """Validate, put the tokens in the keychain, then write the file.

        ``token``: ``None`` keeps whatever the keychain holds for the endpoint, ``""`` removes it,
        anything else replaces it; ``backend_token`` likewise for the backend URL. Tokens never reach
        the file. ``SettingsError`` for unusable settings and ``KeychainError`` when the keychain
        fails — in both cases nothing has been written."""
        settings = _normalised(settings)
        validate(settings, token=token, backend_token=backend_token)
        if not settings.is_demo and token is not None:
            _put_secret(KEYRING_SERVICE, settings.endpoint, token, field="token")
        if settings.backend_url and backend_token is not None:
            _put_secret(BACKEND_KEYRING_SERVICE, settings.backend_url, backend_token, field="backend_token")
        self._write(settings)

    def language(self) -> str:
        """The language chosen in Settings (``desktop.i18n.LANGUAGES``); ``system`` when none is, or
        the file cannot be read — the app must start whatever the file holds."""
        try:
            data = self._read() or {}
        except SettingsError:
            return SYSTEM_LANGUAGE
        ui = data.get("ui")
        chosen = ui.get("language") if isinstance(ui, dict) else None
        return chosen if isinstance(chosen, str) and chosen in LANGUAGES else SYSTEM_LANGUAGE

    def save_language(self, language: str) -> None:
        """Keep ``language`` (``ui.language`` in the file) for the next start. ``SettingsError`` for a
        language Cowork has no catalogue for, or a file that cannot be read."""
        if language not in LANGUAGES:
            offered = ", ".join(LANGUAGES)
            raise SettingsError({"language": f"Choose one of the languages offered ({offered})."})
        existing = self._read() or {}
        ui = {**_section(existing, "ui", strict=False), "language": language}
        data = {**existing, "version": SETTINGS_VERSION, "ui": ui}
        _write_atomically(self.path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    def theme(self) -> str:
        """The appearance chosen in Settings (:data:`THEMES`); ``system`` when none is, or the file
        cannot be read — the app must start whatever the file holds."""
        try:
            data = self._read() or {}
        except SettingsError:
            return "system"
        ui = data.get("ui")
        chosen = ui.get("theme") if isinstance(ui, dict) else None
        return chosen if isinstance(chosen, str) and chosen in THEMES else "system"

    def save_theme(self, theme: str) -> None:
        """Keep ``theme`` (``ui.theme`` in the file) for the next start. ``SettingsError`` for a theme
        that is not one of :data:`THEMES`, or a file that cannot be read."""
        if theme not in THEMES:
            raise SettingsError({"theme": f"Choose one of the themes offered ({', '.join(THEMES)})."})
        existing = self._read() or {}
        ui = {**_section(existing, "ui", strict=False), "theme": theme}
        data = {**existing, "version": SETTINGS_VERSION, "ui": ui}
        _write_atomically(self.path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    def send_key(self) -> str:
        """What sends a message (:data:`SEND_KEYS`); ``enter`` when nothing is chosen, or the file
        cannot be read."""
        try:
            data = self._read() or {}
        except SettingsError:
            return SEND_KEYS[0]
        ui = data.get("ui")
        chosen = ui.get("sendKey") if isinstance(ui, dict) else None
        return chosen if isinstance(chosen, str) and chosen in SEND_KEYS else SEND_KEYS[0]

    def save_send_key(self, key: str) -> None:
        """Keep ``key`` (``ui.sendKey`` in the file). ``SettingsError`` for a key that is not one of
        :data:`SEND_KEYS`, or a file that cannot be read."""
        if key not in SEND_KEYS:
            offered = ", ".join(SEND_KEYS)
            raise SettingsError({"send_key": f"Choose one of the send keys offered ({offered})."})
        existing = self._read() or {}
        ui = {**_section(existing, "ui", strict=False), "sendKey": key}
        data = {**existing, "version": SETTINGS_VERSION, "ui": ui}
        _write_atomically(self.path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    def notifications(self) -> bool:
        """Whether Cowork notifies through the operating system while its window is not active
        (``ui.notifications``); on when nothing is chosen, or the file cannot be read."""
        try:
            data = self._read() or {}
        except SettingsError:
            return True
        ui = data.get("ui")
        chosen = ui.get("notifications") if isinstance(ui, dict) else None
        return chosen if isinstance(chosen, bool) else True

    def save_notifications(self, enabled: bool) -> None:
        """Keep the choice (``ui.notifications``). ``SettingsError`` for a file that cannot be read."""
        existing = self._read() or {}
        ui = {**_section(existing, "ui", strict=False), "notifications": bool(enabled)}
        data = {**existing, "version": SETTINGS_VERSION, "ui": ui}
        _write_atomically(self.path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    def prices(self) -> PriceTable:
        """The price table for cost estimates (``prices`` in the file): the defaults when none is saved,
        or the file cannot be read — an estimate must never stop the app."""
        try:
            data = self._read() or {}
        except SettingsError:
            return PriceTable()
        if "prices" not in data:
            return PriceTable()
        try:
            return PriceTable.from_wire(data["prices"])
        except PricingError as exc:
            logger.warning("the price table in %s is not usable (%s); using the defaults", self.path, exc)
            return PriceTable()

    def save_prices(self, prices: PriceTable) -> None:
        """Keep ``prices`` (the whole table: a model removed from it has an unknown price)."""
        existing = self._read() or {}
        data = {**existing, "version": SETTINGS_VERSION, "prices": prices.to_wire()}
        _write_atomically(self.path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    # ------------------------------------------------------------------ the file

    def _read(self) -> dict[str, Any] | None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise SettingsError({"file": f"The settings file {self.path} cannot be read: {exc}"}) from None
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise SettingsError({"file": f"The settings file {self.path} is not valid JSON: {exc}"}) from None
        if not isinstance(data, dict):
            raise SettingsError({"file": f"The settings file {self.path} does not hold an object."})
        return data

    def _write(self, settings: AppSettings) -> None:
        try:
            existing = self._read() or {}
        except SettingsError:
            # Unreadable: moved aside rather than overwritten, so a hand edit gone wrong is not lost.
            existing = {}
            aside = self.path.with_name(f"{self.path.name}.unreadable-{time.strftime('%Y%m%d-%H%M%S')}")
            with contextlib.suppress(OSError):
                os.replace(self.path, aside)
                logger.warning("the unreadable settings file was moved to %s", aside)
        gateway: dict[str, Any] = {"preset": settings.preset, "api": settings.api, "model": settings.model}
        if not settings.is_demo:
            gateway["endpoint"] = settings.endpoint
        tasks: dict[str, Any] = {"approvalMode": settings.approval_mode}
        if settings.max_steps is not None:
            tasks["maxSteps"] = settings.max_steps
        data = {
            **existing,
            "version": SETTINGS_VERSION,
            "gateway": {**_section(existing, "gateway", strict=False), **gateway},
            "backend": {**_section(existing, "backend", strict=False), "url": settings.backend_url},
            "tasks": {**_section(existing, "tasks", strict=False), **tasks},
        }
        if settings.is_demo:
            data["gateway"].pop("endpoint", None)
        if settings.max_steps is None:
            data["tasks"].pop("maxSteps", None)
        _write_atomically(self.path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _normalised(settings: AppSettings) -> AppSettings:
    stripped = replace(
        settings,
        endpoint=settings.endpoint.strip(),
        api=settings.api.strip().lower(),
        model=settings.model.strip(),
        backend_url=settings.backend_url.strip(),
    )
    if stripped.is_demo:
        return replace(stripped, endpoint="", api=DEMO.api, model=DEMO_MODEL)
    return stripped


def _section(data: dict[str, Any], name: str, *, strict: bool = True) -> dict[str, Any]:
    value = data.get(name)
    if value is None or isinstance(value, dict):
        return dict(value or {})
    if strict:
        raise ValueError(f"{name} that is not an object")
    return {}


def _string(section: dict[str, Any], key: str, name: str) -> str:
    value = section.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{name} that is not a string")
    return value


def _max_steps(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_STEPS_LIMIT:
        raise ValueError(f"tasks.maxSteps that is not a whole number from 1 to {MAX_STEPS_LIMIT}")
    return value


def _write_atomically(path: Path, text: str) -> None:
    """Replace the settings file: a crash leaves the old settings or the new ones, never half of
    either. Owner-only permissions (the file may name a gateway and an account)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomically(path, text.encode("utf-8"), mode=0o600)


# ---------------------------------------------------------------------- the keychain


def _get_secret(service: str, account: str) -> str | None:
    import keyring  # imported on use: its backends are probed on import, which costs start time
    from keyring.errors import KeyringError

    try:
        return keyring.get_password(service, account)
    except KeyringError as exc:
        logger.info("no token from the OS keychain: %s", exc)
        return None


def _put_secret(service: str, account: str, secret: str, *, field: str) -> None:
    import keyring
    from keyring.errors import KeyringError, PasswordDeleteError

    try:
        if secret:
            keyring.set_password(service, account, secret)
            return
        with contextlib.suppress(PasswordDeleteError):  # nothing saved for it: removed already
            keyring.delete_password(service, account)
    except KeyringError as exc:
        raise KeychainError(field, str(exc) or type(exc).__name__) from exc
