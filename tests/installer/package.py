"""The Linux desktop package of this checkout, for tests and benchmarks: built once, then reused.

``linux_package()`` returns ``cowork-{version}-linux-x86_64.tar.gz`` as a release engineer makes
it — ``cowork-release app`` run as a real process on the runtime bundle of
:func:`tests.build.bundle.linux_bundle`, with ``--manifest-url`` (a loopback URL nothing serves) so
the package carries ``update.json``. The build takes about a minute, so it is cached under
``build/out/test-apps/<key>/``, the key hashing everything the package is made of: the runtime
bundle's own key, the spec and entry program, the icon, the sources of every part the app freezes
and the release tooling. A file lock makes concurrent test sessions build it once; only the newest
few are kept.

``unpack_package(tarball, into)`` extracts it with tarfile's ``data`` filter, as a careful user's
``tar -x`` would, and returns the ``Cowork`` directory. On a machine that cannot build it (not Linux
x86-64, or no PyInstaller; in CI a missing PyInstaller is an error) the callers skip.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import pytest

from cowork_release.appinfo import APP_NAME, app_version, linux_tarball_name
from tests.build.bundle import cache_key as runtime_cache_key
from tests.build.bundle import cannot_build, linux_bundle
from tests.support.build_cache import locked, prune
from tests.support.peers import REPO_ROOT

__all__ = [
    "MANIFEST_URL",
    "build_seconds",
    "cache_key",
    "cached_package",
    "cannot_build",
    "linux_package",
    "unpack_package",
    "user_environment",
]

CACHE = REPO_ROOT / "build" / "out" / "test-apps"
MANIFEST_URL = "http://127.0.0.1:9/cowork/manifest.json"
_KEEP = 2  # cache directories kept (the newest); each holds a ~70 MB tarball

_SOURCE_TREES = ("desktop", "contracts", "backend", "agent_runtime/scripted_gateway", "build/cowork_release")
_SOURCE_FILES = (
    "installer/cowork.spec",
    "installer/entry.py",
    "installer/icons/cowork.png",
    "desktop/app/cowork.png",
    "agent_runtime/__init__.py",
    "pyproject.toml",
)
_built: dict[str, Path] = {}


def cache_key() -> str:
    """A hash of everything the package is built from (the runtime bundle's key covers the
    interpreter and every installed distribution)."""
    digest = hashlib.sha256(runtime_cache_key().encode())
    files = [REPO_ROOT / name for name in _SOURCE_FILES]
    for tree in _SOURCE_TREES:
        files += sorted(p for p in (REPO_ROOT / tree).rglob("*.py") if "__pycache__" not in p.parts)
    for path in files:
        content = path.read_bytes() if path.exists() else b"(missing)"
        digest.update(str(path.relative_to(REPO_ROOT)).encode() + b"\0" + content + b"\0")
    return digest.hexdigest()[:20]


def _build(home: Path, runtime_bundle: Path) -> None:
    """``cowork-release app`` into a scratch directory renamed to ``home`` once complete."""
    scratch = Path(tempfile.mkdtemp(prefix=f".{home.name}.", dir=CACHE))
    try:
        started = time.monotonic()
        command = [sys.executable, "-m", "cowork_release", "app", "--runtime-bundle", str(runtime_bundle)]
        command += ["--out", str(scratch), "--manifest-url", MANIFEST_URL, "--channel", "beta"]
        result = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=900)
        if result.returncode != 0:
            tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-20:])
            raise RuntimeError(f"cowork-release app failed (exit {result.returncode}):\n{tail}")
        shutil.rmtree(scratch / APP_NAME)  # the tarball is what tests use; it holds the same tree
        (scratch / "build-seconds").write_text(f"{time.monotonic() - started:.1f}\n")
        scratch.rename(home)  # whole or not at all: a killed build leaves only a hidden scratch dir
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def cached_package() -> Path | None:
    """The tarball :func:`linux_package` would return, if it is already built; never builds."""
    tarball = CACHE / cache_key() / linux_tarball_name(app_version())
    return tarball if tarball.exists() else None


def linux_package() -> Path:
    """``cowork-{version}-linux-x86_64.tar.gz`` of this checkout (built or reused; see above)."""
    reason = cannot_build()
    if reason is not None:
        pytest.skip(reason)
    key = cache_key()
    if key in _built and _built[key].exists():
        return _built[key]
    runtime_bundle = linux_bundle()
    home = CACHE / key
    with locked(CACHE / f"{key}.lock"):
        if not home.is_dir():
            _build(home, runtime_bundle)
            prune(CACHE, home, _KEEP)
    tarball = home / linux_tarball_name(app_version())
    _built[key] = tarball
    return tarball


def user_environment(home: Path, **extra: str) -> dict[str, str]:
    """What a desktop session would give the app, with every per-user folder under ``home`` and the
    OS keychain out of reach; no Cowork setting, so the app starts its own backend."""
    env = {name: os.environ[name] for name in ("PATH", "LANG", "TMPDIR") if name in os.environ}
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "QT_QPA_PLATFORM": "offscreen",
            "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
            # An embedded backend left for the next run (cowork-cli exec) stops within a minute.
            "COWORK_BACKEND_IDLE_TIMEOUT": "60",
        }
    )
    env.update(extra)
    return env


def build_seconds(tarball: Path) -> float | None:
    """How long the cached package took to build (``cowork-release app``), if recorded."""
    try:
        return float((tarball.parent / "build-seconds").read_text())
    except (OSError, ValueError):
        return None


def unpack_package(tarball: Path, into: Path) -> Path:
    """Extract the tarball under ``into`` (tarfile's ``data`` filter) and return ``into/Cowork``."""
    with tarfile.open(tarball, "r:gz") as tar:
        names = tar.getnames()
        assert all(name == APP_NAME or name.startswith(f"{APP_NAME}/") for name in names), names[:5]
        tar.extractall(into, filter="data")
    return into / APP_NAME
