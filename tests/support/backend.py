"""The local backend as the desktop starts it (``cowork-backend serve --store local``), for live tests."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from contracts.messages import SessionHistory
from tests.support.peers import REPO_ROOT

__all__ = ["Backend", "start_backend"]


@dataclass(frozen=True)
class Backend:
    """A running local backend, as ``backend.json`` describes it."""

    url: str
    token: str
    tenant_id: str
    user_id: str
    policy_keys: list[dict[str, Any]]
    data_dir: Path

    def http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.url, headers={"authorization": f"Bearer {self.token}"}, timeout=10
        )

    async def get_json(self, path: str, **params: str) -> Any:
        async with self.http() as http:
            response = await http.get(path, params=params)
        assert response.status_code == 200, f"GET {path}: {response.status_code} {response.text[:500]}"
        return response.json()

    async def approvals(self, session_id: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = (await self.get_json("/approvals", sessionId=session_id))["approvals"]
        return found

    async def session_history(self, workspace_id: str, session_id: str) -> SessionHistory | None:
        """The session's latest ``session_history`` artifact (seed 004), or ``None`` if none yet."""
        listing = await self.get_json(
            f"/workspaces/{workspace_id}/artifacts", sessionId=session_id, artifactType="session_history"
        )
        artifacts = sorted(listing["artifacts"], key=lambda a: a["updatedAt"])
        if not artifacts:
            return None
        async with self.http() as http:
            content = await http.get(
                f"/workspaces/{workspace_id}/artifacts/{artifacts[-1]['artifactId']}/content"
            )
        assert content.status_code == 200, content.text[:500]
        return SessionHistory.model_validate_json(content.content)


@contextlib.contextmanager
def start_backend(
    data_dir: Path, *, config_dir: Path | None = None, extra_args: Sequence[str] = ()
) -> Iterator[Backend]:
    """``cowork-backend serve --store local`` on a free loopback port, stopped (SIGTERM) on exit;
    ``extra_args`` are more ``serve`` options."""
    command = [sys.executable, "-m", "backend.cli", "serve", "--store", "local", "--data-dir", str(data_dir)]
    if config_dir is not None:
        command += ["--config-dir", str(config_dir)]
    command += list(extra_args)
    command += ["--port", "0", "--log-level", "warning"]
    with subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert line, "the backend exited before it was ready"
            assert json.loads(line)["event"] == "ready", line
            state = json.loads((data_dir / "backend.json").read_text())
            yield Backend(
                url=state["url"],
                token=state["token"],
                tenant_id=state["tenantId"],
                user_id=state["userId"],
                policy_keys=state["policyKeys"],
                data_dir=data_dir,
            )
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
