"""Fixtures of the updater tests: a signed release site served on loopback, an installation root,
and the runtime bundled with the app (version 1.0.0)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from desktop.updater.download import DownloadLimits
from desktop.updater.service import UpdateService
from tests.support.release_server import ReleaseServer
from tests.updater.support import ReleaseSite, build_bundle, unpack_plainly

BUNDLED_VERSION = "1.0.0"


@pytest.fixture(scope="session")
def bundled_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(tmp_path_factory.mktemp("bundled"), BUNDLED_VERSION)


@pytest.fixture
def bundled(tmp_path: Path, bundled_archive: Path) -> Path:
    """The app's own runtime directory (Phase 1): an unpacked bundle."""
    return unpack_plainly(bundled_archive, tmp_path / "app" / "runtime")


@pytest.fixture
def site(tmp_path: Path) -> ReleaseSite:
    return ReleaseSite(tmp_path / "site")


@pytest.fixture
def server(site: ReleaseSite) -> Iterator[ReleaseServer]:
    with ReleaseServer(site.directory) as running:
        yield running


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "data" / "agent-runtime"


ServiceFactory = Callable[..., UpdateService]


@pytest.fixture
def make_service(site: ReleaseSite, server: ReleaseServer, root: Path, bundled: Path) -> ServiceFactory:
    def make(**options: object) -> UpdateService:
        settings: dict[str, object] = {
            "root": root,
            "root_keys": site.roots,
            "platform": "linux-x86_64",
            "desktop_version": "1.0",
            "bundled_dir": bundled,
            "download_limits": DownloadLimits(stall_seconds=1.0, deadline_seconds=20.0),
            "health_timeout": 15.0,
        }
        settings.update(options)
        return UpdateService(server.url + "manifest.json", **settings)  # type: ignore[arg-type]

    return make
