"""Fixtures of the runtime's end-to-end tests: one local backend per test session (a second one with
short-lived policy bundles for the expiry tests), a project folder, and a launcher of runtime
processes that kills whatever is left at the end and prints each runtime's output (shown on failure).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.integration.runtime.harness import (
    SHORT_BUNDLE_TTL_S,
    Backend,
    Launch,
    Runtime,
    runtime_environment,
    start_backend,
)


@pytest.fixture(scope="session")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    with start_backend(tmp_path_factory.mktemp("backend")) as running:
        yield running


@pytest.fixture(scope="session")
def short_policy_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    config = tmp_path_factory.mktemp("backend-config")
    (config / "backend.toml").write_text(f"[sessions]\nbundleTtlSeconds = {SHORT_BUNDLE_TTL_S}\n")
    with start_backend(tmp_path_factory.mktemp("short-backend"), config_dir=config) as running:
        yield running


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    project = (tmp_path / "project").resolve()
    project.mkdir()
    return project


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return (tmp_path / "runtime-data").resolve()


@pytest.fixture
async def launch(backend: Backend, data_dir: Path) -> AsyncIterator[Launch]:
    """``await launch(gateway.url)`` → a connected :class:`Runtime`; all of them killed at the end."""
    started: list[Runtime] = []

    async def _launch(
        gateway_url: str,
        *,
        backend: Backend = backend,
        data_dir: Path = data_dir,
        approval_timeout_s: float = 60,
        extra: dict[str, str] | None = None,
        label: str | None = None,
    ) -> Runtime:
        env = runtime_environment(
            backend, gateway_url, data_dir, approval_timeout_s=approval_timeout_s, extra=extra
        )
        runtime = await Runtime.launch(env, label=label or f"runtime #{len(started) + 1}")
        started.append(runtime)
        return runtime

    yield _launch
    invalid: list[str] = []
    for runtime in started:
        await runtime.aclose()
        print(f"----- {runtime.label} (exit {runtime.process.returncode}) events: {runtime.types()}")
        print(runtime.output_text()[-20_000:])
        # Every event of every test fits its contract and carries the ID chain (seed 000 §12).
        invalid += [f"{runtime.label}: {problem}" for problem in runtime.id_chain_problems()]
    assert not invalid, "SessionEvents that break the contract or the ID chain:\n" + "\n".join(invalid)
