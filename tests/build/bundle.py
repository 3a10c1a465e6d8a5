"""The linux-x86_64 runtime bundle of this checkout, for tests: built once, then reused.

``linux_bundle()`` returns ``agent-runtime-{version}-linux-x86_64.tar.gz``, packed by the release
tooling from a PyInstaller onedir build of the runtime. The build takes a minute or two, so it is
cached under ``build/out/test-bundles/<key>/`` where the key hashes everything the bundle is made
of: the spec, the sources of ``agent_runtime`` and ``contracts``, the packer, the interpreter and
every installed distribution's version. An unchanged checkout reuses the bundle across test runs
(and across test sessions running at once: a file lock makes one build while the others wait); any
change rebuilds it. Another version of the same build is only repacked (seconds), for tests that
need an older and a newer runtime.

``unpack(bundle, into)`` extracts a bundle with tarfile's ``data`` filter and returns the runtime
program. Tests call these from a test or fixture: on a machine that cannot build the bundle (not
Linux x86-64, or no PyInstaller) they skip.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import pytest

from contracts.release import BUNDLE_TOP_DIR, BundleFileList, bundle_file_name, current_platform
from cowork_release.bundle import executable_name, package
from cowork_release.freeze import DEFAULT_SPEC, freeze
from tests.support.build_cache import locked, prune
from tests.support.peers import REPO_ROOT

__all__ = ["DEFAULT_VERSION", "cache_key", "cached_bundle", "cannot_build", "linux_bundle", "unpack"]

DEFAULT_VERSION = "0.1.0"
CACHE = REPO_ROOT / "build" / "out" / "test-bundles"
_KEEP = 3  # cache directories kept (the newest); older ones are removed after a build

_SOURCES = ("agent_runtime", "contracts", "build/cowork_release")
_built: dict[str, Path] = {}


def cache_key() -> str:
    """A hash of everything the frozen runtime is built from."""
    digest = hashlib.sha256()
    files = [DEFAULT_SPEC]
    for source in _SOURCES:
        files += sorted(p for p in (REPO_ROOT / source).rglob("*.py") if "__pycache__" not in p.parts)
    for path in files:
        digest.update(str(path.relative_to(REPO_ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(sys.version.encode())
    dists = sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions())
    digest.update("\n".join(dists).encode())
    return digest.hexdigest()[:20]


def cannot_build() -> str | None:
    """Why this machine cannot build the linux-x86_64 bundle, or None if it can."""
    if current_platform() != "linux-x86_64":
        return f"the linux-x86_64 bundle is built on Linux x86-64, not {sys.platform}"
    if importlib.util.find_spec("PyInstaller") is None:
        if os.environ.get("CI"):  # CI installs it (scripts/bootstrap): a skip there would hide the bundle
            raise RuntimeError("PyInstaller is missing in CI: scripts/bootstrap installs the build extra")
        return "PyInstaller is not installed (pip install -e '.[build]')"
    return None


def _frozen_tree(key: str) -> Path:
    """``<cache>/<key>/dist/agent-runtime``, built now if it is not there yet (caller holds the lock)."""
    home = CACHE / key
    tree = home / "dist" / "agent-runtime"
    if tree.is_dir():
        return tree
    scratch = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=CACHE))
    try:
        started = time.monotonic()
        frozen = freeze(DEFAULT_SPEC, scratch, quiet=True)
        shutil.rmtree(scratch / "work", ignore_errors=True)
        (scratch / "build-seconds").write_text(f"{time.monotonic() - started:.1f}\n")
        assert frozen.dist == scratch / "dist" / "agent-runtime"
        scratch.rename(home)  # whole or not at all: a killed build leaves only a hidden scratch dir
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    prune(CACHE, home, _KEEP)
    return tree


def cached_bundle(version: str = DEFAULT_VERSION) -> Path | None:
    """The bundle :func:`linux_bundle` would return, if it is already built; never builds."""
    bundle = CACHE / cache_key() / "bundles" / bundle_file_name(version, "linux-x86_64")
    return bundle if bundle.exists() else None


def linux_bundle(version: str = DEFAULT_VERSION) -> Path:
    """``agent-runtime-{version}-linux-x86_64.tar.gz`` of this checkout (built or reused; see above)."""
    reason = cannot_build()
    if reason is not None:
        pytest.skip(reason)
    key = cache_key()
    memo = f"{key}/{version}"
    if memo in _built and _built[memo].exists():
        return _built[memo]
    with locked(CACHE / f"{key}.lock"):
        tree = _frozen_tree(key)
        bundle = CACHE / key / "bundles" / bundle_file_name(version, "linux-x86_64")
        if not bundle.exists():
            package(tree, runtime_version=version, platform="linux-x86_64", out_dir=bundle.parent)
    _built[memo] = bundle
    return bundle


def unpack(bundle: Path, into: Path) -> Path:
    """Extract ``bundle`` under ``into`` and return its runtime program (``into/agent-runtime/…``)."""
    with tarfile.open(bundle, "r:gz") as tar:
        listing = tar.extractfile("cowork-files.json")
        assert listing is not None
        files = BundleFileList.model_validate_json(listing.read())
        tar.extractall(into, filter="data")
    program = into / BUNDLE_TOP_DIR / files.executable
    assert program.name == executable_name(files.platform)
    return program
