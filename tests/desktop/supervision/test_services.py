"""The services behind the window: with no backend configured, the embedded local backend is started
(a free loopback port, a token it generated), reported healthy and stopped on exit; the offline demo
model starts the first time a runtime needs it and stops with the rest."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import psutil
import pytest

from desktop.launch.errors import LaunchError
from desktop.supervision.services import GatewayChoice, Services
from tests.desktop.support import Run


def test_the_embedded_backend_and_the_demo_model_run_for_the_apps_life(
    run: Run[None], tmp_path: Path
) -> None:
    async def scenario() -> None:
        environ = {"PATH": "/usr/bin:/bin", "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
        async with Services.running(
            environ, choice=lambda: GatewayChoice(demo=True), backend_dir=tmp_path / "backend"
        ) as services:
            state = json.loads((tmp_path / "backend" / "backend.json").read_text())
            backend_pid = int(state["pid"])
            assert services.backend.url.startswith("http://127.0.0.1:")
            assert services.backend.token == state["token"]
            async with httpx.AsyncClient() as http:
                keys = await http.get(
                    f"{services.backend.url}/policy/keys",
                    headers={"authorization": f"Bearer {services.backend.token}"},
                )
            assert keys.status_code == 200
            env = await services.runtime_environment()
            assert env["COWORK_BACKEND_URL"] == services.backend.url
            assert env["LLM_GATEWAY_MODEL"] == "cowork-offline-demo"
            demo = env["LLM_GATEWAY_ENDPOINT"]
            assert (await services.gateway()).endpoint == demo, "one demo model for the app's life"
            demo_pids = [
                p.pid
                for p in psutil.Process().children(recursive=True)
                if "scripted_gateway" in " ".join(p.cmdline())
            ]
            assert len(demo_pids) == 1
        for pid in [backend_pid, *demo_pids]:
            assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE

    run(scenario())


def test_a_backend_url_from_settings_without_a_token_is_refused_before_anything_starts(
    run: Run[None], tmp_path: Path
) -> None:
    async def scenario() -> None:
        with pytest.raises(LaunchError, match="no token is saved"):
            async with Services.running(
                {}, backend_url="https://cowork.example.com", choice=lambda: GatewayChoice(demo=True)
            ):
                pass

    run(scenario())
