"""The start of ``cowork-backend serve``, which a user's first task after an idle spell waits for: what
it does without (the cyclic collector during the imports; httpx and pydantic.v1 until needed) and that
the running server is whole again once it is up."""

from __future__ import annotations

import gc
import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import backend.apps
import backend.cli
from backend.cli import main
from tests.support.peers import REPO_ROOT


@pytest.fixture
def restored_process_state() -> Iterator[None]:
    """``serve`` in this process configures the root logger and freezes the objects of the start:
    both are put back for the tests that follow."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        gc.unfreeze()
        gc.enable()


@pytest.mark.usefixtures("restored_process_state")
def test_collection_is_paused_for_the_start_and_resumes_once_the_server_is_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: dict[str, Any] = {}
    create_app = backend.apps.create_app

    def observed(*args: Any, **kwargs: Any) -> Any:
        seen["collecting while the app is built"] = gc.isenabled()
        return create_app(*args, **kwargs)

    monkeypatch.setattr(backend.apps, "create_app", observed)
    gc.unfreeze()
    # No client holds a lease on the data directory: the server stops by itself a moment after it is up.
    code = main(
        ["serve", "--store", "memory", "--data-dir", str(tmp_path), "--port", "0", "--idle-timeout", "0.2"]
    )
    assert code == 0
    ready = json.loads(capsys.readouterr().out.splitlines()[0])
    assert ready["event"] == "ready"
    assert seen == {"collecting while the app is built": False}
    assert gc.isenabled()
    assert gc.get_freeze_count() > 10_000, "the start's objects are frozen out of the collector's sight"


def test_the_other_commands_run_with_collection_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[bool] = []
    keygen = backend.cli._keygen

    def observed(args: Any) -> int:
        seen.append(gc.isenabled())
        return keygen(args)

    monkeypatch.setattr(backend.cli, "_keygen", observed)
    assert main(["keygen", "--data-dir", str(tmp_path)]) == 0
    assert seen == [True]
    assert gc.isenabled()
    assert "authPublicKey" in capsys.readouterr().out


_PROBE = """
import json, sys
import backend.server
from backend.cli import main

class Probe(backend.server.Server):
    async def startup(self, sockets=None):
        await super().startup(sockets)
        loaded = {name: sys.modules.get(name) is not None for name in ("httpx", "httpcore", "pydantic.v1")}
        print(json.dumps(loaded), flush=True)
        self.should_exit = True

backend.server.Server = Probe
sys.exit(main(["serve", "--store", "local", "--data-dir", sys.argv[1], "--port", "0"]))
"""


def test_the_served_backend_imports_no_http_client_until_it_needs_one(tmp_path: Path) -> None:
    """httpx is imported by the first WebFetch (tests/backend/tools/test_web_fetch.py fetches) or peer
    call (tests/backend/test_split_services.py), pydantic.v1 never: neither is part of the start."""
    done = subprocess.run(
        [sys.executable, "-P", "-c", _PROBE, str(tmp_path / "data")],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    ready, loaded = (json.loads(line) for line in done.stdout.splitlines()[:2])
    assert ready["event"] == "ready"
    assert loaded == {"httpx": False, "httpcore": False, "pydantic.v1": False}
