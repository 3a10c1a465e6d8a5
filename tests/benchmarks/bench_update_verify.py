"""Benchmark of the updater's streaming download verifier (``desktop.updater.download``).

Measures, on a file of random bytes (500 MB by default) served over loopback HTTP by a server in its
own process (``tests.support.release_server``, sendfile):

* the updater's throughput: ``download_verified`` streaming the file to a ``.part`` file, SHA-256
  updated chunk by chunk, fsynced, checked and renamed — the whole download, per second;
* ``sha256sum`` of the same file, already in the page cache (the issue's yardstick: ≥ 80 % of it);
* the peak RSS growth of this process during the download (the RSS high-water mark, ``ru_maxrss``,
  after the download minus before it): constant memory means it stays flat whatever the size.

Medians of ``--runs`` runs, the two measures interleaved. Run:
``.venv/bin/python -m tests.benchmarks.bench_update_verify`` (``--help`` for sizes). Prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from desktop.updater.download import DownloadLimits, download_verified
from tests.benchmarks.figures import Targets, report
from tests.support.peers import REPO_ROOT

TARGETS: Targets = {
    "verify_mb_s": ("updater: download + SHA-256 over loopback", "MB/s", None, None),
    "sha256sum_mb_s": ("sha256sum on the same file (cached)", "MB/s", None, None),
    "ratio_percent": ("updater speed / sha256sum speed", "%", ">=", 80.0),
    "rss_growth_mb": ("peak RSS growth during the download", "MB", "<=", 50.0),
}

_MB = 1_000_000


def make_file(path: Path, size: int) -> str:
    """Random bytes (incompressible, like a .tar.gz) written in 1 MiB pieces; returns the SHA-256."""
    hasher = hashlib.sha256()
    with path.open("wb") as stream:
        left = size
        while left:
            piece = os.urandom(min(left, 1 << 20))
            hasher.update(piece)
            stream.write(piece)
            left -= len(piece)
    return hasher.hexdigest()


def sha256sum_seconds(path: Path, expected: str) -> float:
    started = time.perf_counter()
    output = subprocess.run(["sha256sum", str(path)], capture_output=True, text=True, check=True).stdout
    elapsed = time.perf_counter() - started
    if output.split()[0] != expected:
        raise RuntimeError("sha256sum disagrees with the file's hash")
    return elapsed


async def download_seconds(url: str, target: Path, size: int, sha256: str) -> float:
    limits = DownloadLimits(stall_seconds=30.0, deadline_seconds=600.0)
    async with httpx.AsyncClient() as client:
        started = time.perf_counter()
        await download_verified(client, url, target, size=size, sha256=sha256, limits=limits)
        elapsed = time.perf_counter() - started
    target.unlink()
    return elapsed


def max_rss_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB on Linux


def measure(size: int, runs: int) -> dict[str, float]:
    if shutil.which("sha256sum") is None:
        raise SystemExit("sha256sum is not installed")
    directory = Path(tempfile.mkdtemp(prefix="bench-update-"))
    server = None
    try:
        site = directory / "site"
        site.mkdir()
        source = site / "bundle.tar.gz"
        sha256 = make_file(source, size)
        (site / "small.tar.gz").write_bytes(b"warm-up" * 1000)
        server = subprocess.Popen(
            [sys.executable, "-m", "tests.support.release_server", str(site)],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert server.stdout is not None
        base = server.stdout.readline().strip()
        target = directory / "downloaded.tar.gz"

        sha256sum_seconds(source, sha256)  # the page cache holds the file from here on
        small = (site / "small.tar.gz").read_bytes()
        warm = asyncio.run(
            download_seconds(base + "small.tar.gz", target, len(small), hashlib.sha256(small).hexdigest())
        )
        del warm
        before = max_rss_bytes()
        ours, theirs = [], []
        for _ in range(runs):  # interleaved: both see the same load on a shared machine
            ours.append(asyncio.run(download_seconds(base + "bundle.tar.gz", target, size, sha256)))
            theirs.append(sha256sum_seconds(source, sha256))
        growth = max_rss_bytes() - before
    finally:
        if server is not None:
            server.kill()
            server.wait()
        shutil.rmtree(directory, ignore_errors=True)
    verify = size / statistics.median(ours) / _MB
    reference = size / statistics.median(theirs) / _MB
    return {
        "verify_mb_s": verify,
        "sha256sum_mb_s": reference,
        "ratio_percent": 100 * verify / reference,
        "rss_growth_mb": growth / _MB,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", type=int, default=500, help="size of the downloaded file, in MB")
    parser.add_argument("--runs", type=int, default=5, help="downloads (and sha256sum runs); medians")
    args = parser.parse_args(argv)
    print(f"Cowork updater verification benchmark: {args.size_mb} MB over loopback HTTP, {args.runs} runs")
    print(report(measure(args.size_mb * _MB, args.runs), TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
