"""What every runtime of the window talks to: the backend and the LLM gateway
(docs/architecture/index.md, "The embedded default"). Started once for the app's life and stopped
when it ends.

* **Backend:** ``COWORK_BACKEND_URL`` + ``COWORK_BACKEND_TOKEN`` from the environment, else the URL
  saved in Settings with its token from the keychain, else the embedded local backend
  (``cowork-backend serve --store local`` on a free loopback port with a token it generates; the app
  waits until it reports ready, reuses one already running, and stops the one it started on exit
  unless another client — a ``cowork exec`` run — still holds it, which its idle timeout then stops).
  This is :mod:`desktop.launch.backend`, the same code ``cowork exec`` runs; asyncio subprocesses work
  under qasync's loop.
* **Gateway:** read on every runtime launch, so a change in Settings applies to the next
  conversation's runtime: ``LLM_GATEWAY_*`` from the environment, else the saved settings (token in
  the keychain); the offline demo model (the scripted gateway) is started the first time it is used.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from desktop.i18n import translate
from desktop.launch.backend import BackendAccess, backend_for_session
from desktop.launch.errors import LaunchError
from desktop.launch.gateway import GatewaySettings, demo_gateway, resolve_gateway
from desktop.launch.runtime import runtime_environment

__all__ = ["GatewayChoice", "Services"]


@dataclass(frozen=True)
class GatewayChoice:
    """What Settings say about the gateway, read afresh for each launch."""

    demo: bool
    settings_file: Path | None = None


@dataclass
class Services:
    backend: BackendAccess
    environ: Mapping[str, str]
    choice: Callable[[], GatewayChoice]
    _stack: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)
    _demo: GatewaySettings | None = None

    @classmethod
    @contextlib.asynccontextmanager
    async def running(
        cls,
        environ: Mapping[str, str],
        *,
        backend_url: str = "",
        backend_token: str | None = None,
        choice: Callable[[], GatewayChoice],
        backend_dir: Path | None = None,
    ) -> AsyncIterator[Services]:
        """The services for the ``async with`` block. ``backend_url``/``backend_token``: Settings'."""
        env = dict(environ)
        if not env.get("COWORK_BACKEND_URL", "").strip() and backend_url:
            if not backend_token:
                raise LaunchError(
                    translate(
                        "Startup",
                        "The backend {url} is set in Settings but no token is saved for it: add the token in"
                        " Settings, or clear the backend URL to use the local backend.",
                    ).format(url=backend_url)
                )
            env["COWORK_BACKEND_URL"], env["COWORK_BACKEND_TOKEN"] = backend_url, backend_token
        async with contextlib.AsyncExitStack() as stack:
            # The window stops the embedded backend it started when it closes, as it always has —
            # unless a cowork exec run (or another window) still uses it: then its idle timeout does.
            backend = await stack.enter_async_context(
                backend_for_session(env, data_dir=backend_dir, stop_started=True)
            )
            services = cls(backend, env, choice)
            stack.push_async_callback(services._stack.aclose)
            yield services

    async def gateway(self) -> GatewaySettings:
        """The gateway a runtime starting now should call."""
        choice = self.choice()
        if choice.demo and not self.environ.get("LLM_GATEWAY_ENDPOINT"):
            if self._demo is None:
                self._demo = await self._stack.enter_async_context(demo_gateway())
            return self._demo
        return resolve_gateway(self.environ, settings_file=choice.settings_file)

    async def runtime_environment(self) -> dict[str, str]:
        """The environment of a runtime starting now (:func:`desktop.launch.runtime.runtime_environment`)."""
        env = runtime_environment(self.environ, self.backend, await self.gateway())
        env.setdefault("COWORK_LOG_LEVEL", os.environ.get("COWORK_LOG_LEVEL", "INFO"))
        return env
