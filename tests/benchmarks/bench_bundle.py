"""The frozen runtime bundle (issue: runtime distribution): its start time and its size.

* **start to ready**: from spawning the frozen ``agent-runtime --connect NAME`` (PyInstaller onedir,
  unpacked from the linux-x86_64 bundle) to its authenticated connection — it is then reading
  requests — and to the answer of its first request (the handlers loaded), medians of ``--starts``
  launches after one untimed launch (page cache warm, as for every launch but a machine's first);
* **size**: the bundle as downloaded (gzip'd tar) and unpacked, and its number of files;
* **packing**: ``cowork-release package`` of the frozen tree (hashing, tar, gzip -6, and reading the
  result back to check every member).

The bundle comes from ``tests.build.bundle.linux_bundle()``: built once per change of its sources and
cached under ``build/out/test-bundles`` (the first run after a change builds it, a minute or two).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from contracts.ipc import eventloop
from contracts.ipc.client_core import RpcCallError
from cowork_release.bundle import package
from tests.benchmarks.figures import Targets, report
from tests.build.bundle import cannot_build, linux_bundle, unpack
from tests.integration.runtime.harness import Runtime

TARGETS: Targets = {
    "start_to_ready_ms": (
        "frozen: process start to JSON-RPC ready (authenticated, serving)",
        "ms",
        "<=",
        500.0,
    ),
    "start_to_answer_ms": ("frozen: process start to the first answer (handlers loaded)", "ms", None, None),
    "bundle_mb": ("bundle size, compressed (tar.gz)", "MB", None, None),
    "unpacked_mb": ("bundle size, unpacked", "MB", None, None),
    "files": ("files in the bundle", "", None, None),
    "package_s": ("cowork-release package of the frozen tree", "s", None, None),
}


def _environment(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COWORK_", "LLM_GATEWAY_"))}
    env.update({"COWORK_RUNTIME_DATA_DIR": str(data_dir), "LLM_GATEWAY_ENDPOINT": "http://127.0.0.1:9"})
    return env


async def _starts(program: Path, data_dir: Path, starts: int) -> dict[str, float]:
    ready, answer = [], []
    env = _environment(data_dir)
    for index in range(starts + 1):
        started = time.perf_counter()
        runtime = await Runtime.launch(env, label="frozen", program=[str(program)])
        connected = time.perf_counter()
        # SESSION_NOT_FOUND is the expected answer: the handlers are loaded and answering.
        with contextlib.suppress(RpcCallError):
            await runtime.call("GetSessionState", {"sessionId": "sess_none"})
        answered = time.perf_counter()
        await runtime.aclose()
        if index:  # the first launch warms the page cache
            ready.append((connected - started) * 1e3)
            answer.append((answered - started) * 1e3)
    return {"start_to_ready_ms": statistics.median(ready), "start_to_answer_ms": statistics.median(answer)}


def measure(starts: int) -> dict[str, float]:
    bundle = linux_bundle()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        program = unpack(bundle, root / "unpacked")
        tree = program.parent
        files = [path for path in tree.rglob("*") if path.is_file()]
        unpacked = sum(path.stat().st_size for path in files)
        began = time.perf_counter()
        package(tree, runtime_version="0.0.1", platform="linux-x86_64", out_dir=root / "repacked")
        packed = time.perf_counter() - began
        figures = eventloop.run(_starts(program, root / "data", starts))
    return figures | {
        "bundle_mb": bundle.stat().st_size / 1e6,
        "unpacked_mb": unpacked / 1e6,
        "files": float(len(files)),
        "package_s": packed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--starts", type=int, default=20, help="launches timed (after one untimed)")
    args = parser.parse_args(argv)
    reason = cannot_build()
    if reason is not None:
        print(f"bench_bundle: {reason}", file=sys.stderr)
        return 1
    print(f"Cowork runtime bundle benchmark (linux-x86_64, onedir): {args.starts} starts")
    print(report(measure(args.starts), TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
