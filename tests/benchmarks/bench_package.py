"""The Linux desktop package (issue 9): its size, and how long the packaged app takes to show its window.

* **size**: ``cowork-VERSION-linux-x86_64.tar.gz`` as downloaded and unpacked (on disk: files the
  packer stored once as hard links count once), and the bundled agent runtime (``runtime/``) with
  how much of it is the same files as the frozen app's own (Python, OpenSSL…);
* **start**: from just before spawning the packaged ``Cowork`` (offscreen, nothing configured but a
  gateway URL, so no first-run dialog) to the time stamp of its ``main window shown`` log line, median
  of ``--starts`` launches after one untimed launch (page cache warm, as for every launch but a
  machine's first); each launch is closed with SIGTERM and waited for;
* **build**: ``cowork-release app`` (PyInstaller, the runtime unpacked and checked, the tarball), as
  recorded when the cached package was built.

The package comes from ``tests.installer.package.linux_package()``: built once per change of its
inputs and cached under ``build/out/test-apps`` (the first run after a change builds it, about a minute).

Run: ``.venv/bin/python -m tests.benchmarks.bench_package`` (``--help``).
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import psutil

from tests.benchmarks.figures import Targets, report
from tests.installer.package import (
    build_seconds,
    cannot_build,
    linux_package,
    unpack_package,
    user_environment,
)

TARGETS: Targets = {
    "tarball_mb": ("package: cowork-VERSION-linux-x86_64.tar.gz", "MB", None, None),
    "unpacked_mb": ("package: unpacked, on disk", "MB", None, None),
    "runtime_mb": ("package: the bundled runtime (runtime/)", "MB", None, None),
    "shared_mb": ("package: of which the same files as the app's, stored once", "MB", None, None),
    "files": ("package: files", "", None, None),
    "start_to_window_ms": ("packaged app: process start to main window shown, median", "ms", "<=", 1500.0),
    "start_to_window_max_ms": ("packaged app: process start to main window shown, slowest", "ms", None, None),
    "build_s": ("cowork-release app (PyInstaller, runtime, tarball), when cached", "s", None, None),
}

SHOWN = "main window shown"
EXIT_TIMEOUT_S = 30
SHOW_TIMEOUT_S = 60


def _inode(path: Path) -> tuple[int, int]:
    status = path.stat()
    return status.st_dev, status.st_ino


def _size(paths: list[Path]) -> float:
    return sum(path.stat().st_size for path in paths) / 1e6


def _shown_times(log: Path) -> list[float]:
    """The time stamps of the log's ``main window shown`` lines, as seconds since the epoch."""
    try:
        lines = log.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    found = []
    for line in lines:
        entry = json.loads(line)
        if entry.get("message") == SHOWN:
            found.append(datetime.fromisoformat(entry["time"]).timestamp())
    return found


def _children(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children()
    except psutil.NoSuchProcess:
        return []


def _one_start(app: Path, env: dict[str, str], log: Path) -> float:
    """Milliseconds from spawning the app to its window shown; the app is closed before returning."""
    before = len(_shown_times(log))
    started = time.time()
    process = subprocess.Popen(
        [str(app)], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + SHOW_TIMEOUT_S
        while len(times := _shown_times(log)) <= before:
            if process.poll() is not None:
                raise RuntimeError(f"the packaged app ended ({process.returncode}) before showing its window")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the packaged app showed no window within {SHOW_TIMEOUT_S} s")
            time.sleep(0.01)
        # The app handles SIGTERM (closing as its window's Close does) from just before it starts its
        # services; its first child, the embedded backend, says that moment has passed.
        while not _children(process.pid):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the packaged app started no embedded backend")
            time.sleep(0.01)
        process.send_signal(signal.SIGTERM)
        if process.wait(timeout=EXIT_TIMEOUT_S) != 0:
            raise RuntimeError(f"the packaged app exited with {process.returncode} on SIGTERM")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    # The log's time stamps are milliseconds: the figure is that precise.
    return (times[before] - started) * 1e3


def measure(starts: int) -> dict[str, float]:
    tarball = linux_package()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        app_dir = unpack_package(tarball, root / "installed")
        files = [p for p in app_dir.rglob("*") if p.is_file() and not p.is_symlink()]
        runtime = [p for p in files if p.is_relative_to(app_dir / "runtime")]
        # The packer stores a file identical to one before it as a hard link (the two programs; the
        # runtime's Python, OpenSSL and the like, the same files as the app's): each is on disk once.
        app_inodes = {_inode(p) for p in files if p not in runtime}
        shared = [p for p in runtime if _inode(p) in app_inodes]
        on_disk = list({_inode(p): p for p in files}.values())
        home = root / "home"
        # a configured gateway (nothing listens there): no first-run dialog over the window
        env = user_environment(home, LLM_GATEWAY_ENDPOINT="http://127.0.0.1:9")
        log = home / ".local" / "state" / "Cowork" / "log" / "desktop.log"
        timings = [_one_start(app_dir / "Cowork", env, log) for _ in range(starts + 1)][1:]
        figures = {
            "tarball_mb": tarball.stat().st_size / 1e6,
            "unpacked_mb": _size(on_disk),
            "runtime_mb": _size(runtime),
            "shared_mb": _size(shared),
            "files": float(len(files)),
            "start_to_window_ms": statistics.median(timings),
            "start_to_window_max_ms": max(timings),
        }
    built = build_seconds(tarball)
    if built is not None:
        figures["build_s"] = built
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--starts", type=int, default=10, help="launches timed (after one untimed)")
    args = parser.parse_args(argv)
    if args.starts < 1:
        parser.error("--starts must be at least 1")
    reason = cannot_build()
    if reason is not None:
        print(f"bench_package: {reason}", file=sys.stderr)
        return 1
    print(f"Cowork Linux package benchmark (linux-x86_64, onedir): {args.starts} starts")
    print(report(measure(args.starts), TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
