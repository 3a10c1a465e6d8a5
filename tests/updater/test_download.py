"""The bundle download against a real loopback server: resume, bounds, timeouts, hashing."""

from __future__ import annotations

import hashlib
import itertools
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from desktop.updater.download import DownloadLimits, download_verified
from desktop.updater.errors import BundleRejected, DownloadFailed
from tests.support.release_server import Behaviour, ReleaseServer

SIZE = 3 * 1024 * 1024 + 17
LIMITS = DownloadLimits(stall_seconds=0.5, deadline_seconds=10.0)


@pytest.fixture
def published(tmp_path: Path) -> tuple[Path, bytes]:
    directory = tmp_path / "site"
    directory.mkdir()
    data = os.urandom(SIZE)
    (directory / "bundle.tar.gz").write_bytes(data)
    return directory, data


@pytest.fixture
def server(published: tuple[Path, bytes]) -> AsyncIterator[ReleaseServer]:
    with ReleaseServer(published[0]) as running:
        yield running


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as http:
        yield http


async def fetch(
    client: httpx.AsyncClient,
    server: ReleaseServer,
    target: Path,
    data: bytes,
    *,
    size: int | None = None,
    sha256: str | None = None,
    limits: DownloadLimits = LIMITS,
    progress: list[tuple[int, int]] | None = None,
) -> Path:
    return await download_verified(
        client,
        server.url + "bundle.tar.gz",
        target,
        size=size or len(data),
        sha256=sha256 or hashlib.sha256(data).hexdigest(),
        limits=limits,
        on_progress=None if progress is None else lambda done, total: progress.append((done, total)),
    )


async def test_the_file_arrives_whole_with_progress_to_its_size(
    client: httpx.AsyncClient, server: ReleaseServer, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    data = published[1]
    progress: list[tuple[int, int]] = []
    target = await fetch(client, server, tmp_path / "b.tar.gz", data, progress=progress)
    assert target.read_bytes() == data
    assert progress[-1] == (SIZE, SIZE)
    assert all(a[0] < b[0] for a, b in itertools.pairwise(progress))
    assert not target.with_name("b.tar.gz.part").exists()


async def test_a_dropped_connection_keeps_the_part_and_the_next_attempt_resumes_with_range(
    client: httpx.AsyncClient, server: ReleaseServer, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    data = published[1]
    server.behave("bundle.tar.gz", Behaviour(drop_after=1_000_000, drop_times=1))
    target = tmp_path / "b.tar.gz"
    with pytest.raises(DownloadFailed) as caught:
        await fetch(client, server, target, data)
    assert caught.value.code == "interrupted"
    assert "resume" in str(caught.value)
    part = target.with_name("b.tar.gz.part")
    assert part.stat().st_size == 1_000_000

    await fetch(client, server, target, data)

    assert target.read_bytes() == data
    assert server.requests[-1] == ("bundle.tar.gz", "bytes=1000000-")


async def test_a_server_that_ignores_range_restarts_the_download_cleanly(
    client: httpx.AsyncClient, server: ReleaseServer, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    data = published[1]
    target = tmp_path / "b.tar.gz"
    target.with_name("b.tar.gz.part").write_bytes(data[:500_000])
    server.behave("bundle.tar.gz", Behaviour(ignore_range=True))
    progress: list[tuple[int, int]] = []

    await fetch(client, server, target, data, progress=progress)

    assert target.read_bytes() == data
    assert server.requests[-1][1] == "bytes=500000-"
    assert progress[0][0] < 500_000  # counted again from the start


async def test_a_part_that_is_not_a_prefix_of_the_file_is_deleted_for_its_hash(
    client: httpx.AsyncClient, server: ReleaseServer, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    data = published[1]
    target = tmp_path / "b.tar.gz"
    part = target.with_name("b.tar.gz.part")
    part.write_bytes(b"x" * 1000)
    with pytest.raises(BundleRejected) as caught:
        await fetch(client, server, target, data)
    assert caught.value.code == "hash_mismatch"
    assert not part.exists()
    assert not target.exists()
    await fetch(client, server, target, data)  # and the next attempt starts over
    assert target.read_bytes() == data


async def test_a_part_longer_than_the_declared_size_is_discarded(
    client: httpx.AsyncClient, server: ReleaseServer, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    data = published[1]
    target = tmp_path / "b.tar.gz"
    target.with_name("b.tar.gz.part").write_bytes(data + b"more")
    await fetch(client, server, target, data)
    assert target.read_bytes() == data
    assert server.requests[-1][1] is None


async def test_an_endless_body_stops_at_the_declared_size_and_nothing_is_kept(
    client: httpx.AsyncClient, server: ReleaseServer, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    server.behave("bundle.tar.gz", Behaviour(endless=True))
    target = tmp_path / "b.tar.gz"
    with pytest.raises(BundleRejected) as caught:
        await fetch(client, server, target, published[1])
    assert caught.value.code == "wrong_size"
    assert "more than" in str(caught.value)
    assert not target.exists()
    assert not target.with_name("b.tar.gz.part").exists()


async def test_a_longer_announced_body_is_refused_before_it_is_written(
    client: httpx.AsyncClient, server: ReleaseServer, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    server.behave("bundle.tar.gz", Behaviour(extra=10))
    target = tmp_path / "b.tar.gz"
    with pytest.raises(BundleRejected) as caught:
        await fetch(client, server, target, published[1])
    assert caught.value.code == "wrong_size"
    assert str(SIZE + 10) in str(caught.value)
    assert not target.with_name("b.tar.gz.part").exists()


async def test_a_shorter_file_than_declared_is_refused(
    client: httpx.AsyncClient, server: ReleaseServer, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    with pytest.raises(BundleRejected) as caught:
        await fetch(client, server, tmp_path / "b.tar.gz", published[1], size=SIZE + 1)
    assert caught.value.code == "wrong_size"


async def test_a_resumed_range_of_a_file_of_another_size_is_refused(
    client: httpx.AsyncClient, server: ReleaseServer, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    data = published[1]
    target = tmp_path / "b.tar.gz"
    target.with_name("b.tar.gz.part").write_bytes(data[:1000])
    with pytest.raises(BundleRejected) as caught:
        await fetch(client, server, target, data + b"!", size=SIZE + 1)
    assert caught.value.code == "wrong_size"
    assert not target.with_name("b.tar.gz.part").exists()


async def test_a_wrong_hash_deletes_the_download(
    client: httpx.AsyncClient, server: ReleaseServer, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    target = tmp_path / "b.tar.gz"
    with pytest.raises(BundleRejected) as caught:
        await fetch(client, server, target, published[1], sha256="0" * 64)
    assert caught.value.code == "hash_mismatch"
    assert "does not match the signed manifest" in str(caught.value)
    assert not target.exists()
    assert not target.with_name("b.tar.gz.part").exists()


async def test_a_stalled_server_times_out_and_the_part_is_kept_for_later(
    client: httpx.AsyncClient, server: ReleaseServer, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    server.behave("bundle.tar.gz", Behaviour(stall_after=200_000))
    target = tmp_path / "b.tar.gz"
    started = time.monotonic()
    with pytest.raises(DownloadFailed) as caught:
        await fetch(client, server, target, published[1])
    assert time.monotonic() - started < 5
    assert caught.value.code == "stalled"
    assert "sent nothing for 0.5 s" in str(caught.value)
    assert target.with_name("b.tar.gz.part").stat().st_size == 200_000


async def test_a_trickling_server_meets_the_overall_deadline(
    client: httpx.AsyncClient, server: ReleaseServer, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    server.behave("bundle.tar.gz", Behaviour(stall_after=100))
    limits = DownloadLimits(stall_seconds=30.0, deadline_seconds=0.5)
    started = time.monotonic()
    with pytest.raises(DownloadFailed) as caught:
        await fetch(client, server, tmp_path / "b.tar.gz", published[1], limits=limits)
    assert time.monotonic() - started < 5
    assert caught.value.code == "deadline"


async def test_an_error_status_is_a_failure_naming_it(
    client: httpx.AsyncClient, server: ReleaseServer, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    server.behave("bundle.tar.gz", Behaviour(status=503))
    with pytest.raises(DownloadFailed) as caught:
        await fetch(client, server, tmp_path / "b.tar.gz", published[1])
    assert caught.value.code == "http_status"
    assert "HTTP 503" in str(caught.value)


async def test_an_unreachable_server_is_a_failure(
    client: httpx.AsyncClient, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    with pytest.raises(DownloadFailed) as caught:
        await download_verified(
            client,
            "http://127.0.0.1:9/bundle.tar.gz",
            tmp_path / "b",
            size=10,
            sha256="0" * 64,
            limits=LIMITS,
        )
    assert caught.value.code == "unreachable"


async def test_a_finished_download_is_not_fetched_again(
    client: httpx.AsyncClient, server: ReleaseServer, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    data = published[1]
    target = tmp_path / "b.tar.gz"
    await fetch(client, server, target, data)
    count = len(server.requests)
    await fetch(client, server, target, data)
    assert len(server.requests) == count
