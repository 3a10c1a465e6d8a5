"""Which LLM gateway a session calls: flags, then the environment, then the saved settings.

The environment names it as the runtime reads it (``LLM_GATEWAY_ENDPOINT``, ``LLM_GATEWAY_API``,
``LLM_GATEWAY_MODEL``, ``LLM_GATEWAY_AUTH_TOKEN``). The settings the desktop saves live in
``<user config dir>/Cowork/settings.json`` (``{"gateway": {"endpoint", "api", "model"}}``) with the
token in the OS keychain (service ``Cowork LLM gateway``, the endpoint as account name). The offline
demo model is the scripted gateway, started for the run and labelled as what it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from platformdirs import user_config_dir

from desktop.i18n import translate
from desktop.launch.child import creation_flags, module_command
from desktop.launch.errors import LaunchError

__all__ = [
    "DEMO_MODEL",
    "GATEWAY_VARIABLES",
    "KEYRING_SERVICE",
    "GatewaySettings",
    "demo_gateway",
    "gateway_of",
    "resolve_gateway",
    "saved_choice_is_demo",
    "settings_path",
]

logger = logging.getLogger(__name__)

DIALECTS = ("anthropic", "openai")
DEMO_MODEL = "cowork-offline-demo"
KEYRING_SERVICE = "Cowork LLM gateway"
GATEWAY_VARIABLES = ("LLM_GATEWAY_ENDPOINT", "LLM_GATEWAY_API", "LLM_GATEWAY_MODEL", "LLM_GATEWAY_AUTH_TOKEN")
"""What a runtime reads of the gateway (seed 000 §3.2): a runtime started with other values calls
another gateway, dialect, model or token."""


@dataclass(frozen=True)
class GatewaySettings:
    endpoint: str
    api: str = "anthropic"
    model: str | None = None
    token: str | None = None
    demo: bool = False

    def environment(self) -> dict[str, str]:
        """The runtime's view of it (seed 000 §3.2)."""
        env = {"LLM_GATEWAY_ENDPOINT": self.endpoint, "LLM_GATEWAY_API": self.api}
        if self.model:
            env["LLM_GATEWAY_MODEL"] = self.model
        if self.token:
            env["LLM_GATEWAY_AUTH_TOKEN"] = self.token
        return env


def gateway_of(environment: Mapping[str, str]) -> dict[str, str]:
    """The gateway part of a runtime's environment."""
    return {key: environment[key] for key in GATEWAY_VARIABLES if environment.get(key)}


def settings_path() -> Path:
    return Path(user_config_dir("Cowork", appauthor=False)) / "settings.json"


def resolve_gateway(
    environ: Mapping[str, str],
    *,
    endpoint: str | None = None,
    api: str | None = None,
    model: str | None = None,
    settings_file: Path | None = None,
) -> GatewaySettings:
    """The gateway to call; ``LaunchError`` if none is configured or the choice is unusable."""
    path = settings_file or settings_path()
    saved = _saved_settings(path)
    chosen_endpoint = endpoint or environ.get("LLM_GATEWAY_ENDPOINT") or saved.get("endpoint")
    if not chosen_endpoint:
        if saved.get("preset") == "demo":  # the desktop's settings chose it: it has no fixed endpoint
            raise LaunchError(
                "The saved settings choose the offline demo model: run cowork exec with --demo, "
                "which starts it for the run"
            )
        raise LaunchError(
            "No LLM gateway is configured: set LLM_GATEWAY_ENDPOINT (and LLM_GATEWAY_MODEL), "
            "pass --endpoint, or try the offline demo model with --demo"
        )
    chosen_api = (api or environ.get("LLM_GATEWAY_API") or saved.get("api") or "anthropic").lower()
    if chosen_api not in DIALECTS:
        raise LaunchError(f"The gateway API must be anthropic or openai, not {chosen_api[:40]!r}")
    if not chosen_endpoint.startswith(("http://", "https://")):
        raise LaunchError(f"The gateway endpoint must be an http(s) URL: {chosen_endpoint[:200]}")
    token = environ.get("LLM_GATEWAY_AUTH_TOKEN") or None
    if token is None and path.exists():
        # Only Settings puts a token in the keychain, and it writes the settings file as it does: with
        # no file there is none to find, and keyring's import (it probes every backend: ~40 ms) and
        # lookup stay off the start of a first run, a CI job or a script that sets no token.
        token = _keychain_token(chosen_endpoint)
    return GatewaySettings(
        endpoint=chosen_endpoint,
        api=chosen_api,
        model=model or environ.get("LLM_GATEWAY_MODEL") or saved.get("model"),
        token=token,
    )


def saved_choice_is_demo(
    environ: Mapping[str, str], *, endpoint: str | None = None, settings_file: Path | None = None
) -> bool:
    """Whether the saved settings choose the offline demo model and nothing else names a gateway."""
    if endpoint or environ.get("LLM_GATEWAY_ENDPOINT"):
        return False
    saved = _saved_settings(settings_file or settings_path())
    return not saved.get("endpoint") and saved.get("preset") == "demo"


def _saved_settings(path: Path) -> dict[str, str]:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise LaunchError(f"The settings file {path} cannot be read: {exc}") from exc
    gateway = data.get("gateway") if isinstance(data, dict) else None
    if not isinstance(gateway, dict):
        return {}
    return {key: value for key, value in gateway.items() if isinstance(value, str) and value}


def _keychain_token(endpoint: str) -> str | None:
    try:
        import keyring  # imported here: its backends are probed on import, which costs start time
        from keyring.errors import KeyringError

        try:
            return keyring.get_password(KEYRING_SERVICE, endpoint)
        except KeyringError as exc:
            logger.info("no token from the OS keychain: %s", exc)
    except ImportError:
        pass
    return None


@contextlib.asynccontextmanager
async def demo_gateway() -> AsyncIterator[GatewaySettings]:
    """The offline demo model (the scripted gateway's ``--demo``), running for the ``with`` block."""
    process = await asyncio.create_subprocess_exec(
        *module_command("agent_runtime.scripted_gateway"),
        "--demo",
        "--port",
        "0",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        creationflags=creation_flags(),
    )
    try:
        assert process.stdout is not None
        try:
            async with asyncio.timeout(30):
                line = (await process.stdout.readline()).decode()
        except TimeoutError as exc:
            raise LaunchError(translate("Startup", "The offline demo model did not start")) from exc
        if not line.strip():
            raise LaunchError(translate("Startup", "The offline demo model did not start"))
        yield GatewaySettings(endpoint=line.split()[-1], api="anthropic", model=DEMO_MODEL, demo=True)
    finally:
        if process.returncode is None:
            process.terminate()
            with contextlib.suppress(ProcessLookupError):
                await process.wait()
