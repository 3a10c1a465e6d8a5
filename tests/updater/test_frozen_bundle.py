"""The real thing end to end: the frozen linux-x86_64 bundle of this checkout, published with
``cowork-release`` to a directory served over HTTP, found, downloaded, verified, installed and
activated by the updater — then a task run through it by ``cowork exec``.

The bundle comes from ``tests.build.bundle.linux_bundle``: built once and cached by a hash of its
sources, so this test reuses the release tooling's build (and skips where it cannot be built)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.updater.active import active_runtime
from desktop.updater.service import UpdateService, UpdateStatus
from tests.build.bundle import linux_bundle
from tests.build.support import cli, make_keys
from tests.headless.support import base_environment, run_cowork
from tests.headless.support import tool_call as exec_tool_call
from tests.support.backend import start_backend
from tests.support.release_server import ReleaseServer

pytestmark = pytest.mark.timeout(600)  # the first test of a session may build the bundle

VERSION = "1.1.0"


async def test_the_frozen_bundle_is_installed_by_the_updater_and_runs_a_task(
    tmp_path: Path, bundled: Path
) -> None:
    bundle = linux_bundle(VERSION)  # newer than the app's bundled 1.0.0
    keys = make_keys(tmp_path / "keys")
    site = tmp_path / "site"
    assert keys.delegate(site).code == 0
    published = cli(
        "publish",
        bundle,
        *keys.site(site),
        "--channel",
        "stable",
        "--protocol",
        ">=1.0,<2",
        "--min-desktop",
        "0.1",
    )
    assert published.code == 0, published.err

    root = tmp_path / "data" / "agent-runtime"
    with ReleaseServer(site) as server:
        service = UpdateService(
            server.url + "manifest.json",
            root=root,
            root_keys=keys.root_set(),
            platform="linux-x86_64",
            desktop_version="1.0",
            bundled_dir=bundled,
        )
        result = await service.update()

    assert result.status is UpdateStatus.INSTALLED, result.message
    active = active_runtime(root, bundled=bundled)
    assert (active.version, active.source) == (VERSION, "installed")
    assert active.executable == root / "versions" / VERSION / "agent-runtime" / "agent-runtime"

    workspace = (tmp_path / "project").resolve()
    workspace.mkdir()
    (workspace / "notes.txt").write_text("installed by the updater\n")
    turns = [
        exec_tool_call("ReadFile", "c1", path=str(workspace / "notes.txt")),
        exec_tool_call("WriteFile", "c2", path=str(workspace / "out.txt"), content="frozen and updated\n"),
        {"text": "Done, updated.", "chunkSize": 5},
    ]
    with start_backend(tmp_path / "backend") as backend, ScriptedGatewayThread({"turns": turns}) as gateway:
        env = base_environment(tmp_path, backend, COWORK_RUNTIME_EXECUTABLE=active.command()[0])
        run = run_cowork(
            ["-C", str(workspace), "--endpoint", gateway.url, "--approve-all", "Do it"], env, timeout=120
        )
        gateway.assert_done()
    assert run.returncode == 0, run.stderr
    assert run.stdout == "Done, updated.\n"
    assert (workspace / "out.txt").read_text() == "frozen and updated\n"
