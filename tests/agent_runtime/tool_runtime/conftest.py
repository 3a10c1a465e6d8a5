"""Fixtures: a temp-dir workspace, a router on it, a local HTTP server on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.agent_runtime.tool_runtime.fixtures import router, spool_dir, workspace
from tests.agent_runtime.tool_runtime.support import LocalHTTPServer

__all__ = ["http_server", "router", "spool_dir", "workspace"]


@pytest.fixture
def http_server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as server:
        yield server
