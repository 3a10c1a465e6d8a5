"""What the release tooling's tests share: run ``cowork-release`` (in this process, or as a real
process), make small onedir trees to pack, and hold a set of keys."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from contracts.release import ReleaseManifest, RootKeySet, verify_release_document
from contracts.signing import key_id
from cowork_release.cli import main
from cowork_release.keys import load_public_key
from tests.support.peers import REPO_ROOT

__all__ = ["Keys", "Result", "cli", "cli_process", "fake_dist", "make_keys", "site_manifest"]


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


def cli(*args: str | Path) -> Result:
    """``cowork-release ARGS`` in this process (fast; the same code path as the program)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(arg) for arg in args])
        except SystemExit as exit_:  # argparse's usage errors
            code = int(exit_.code or 0)
    return Result(code, out.getvalue(), err.getvalue())


def cli_process(*args: str | Path, env: dict[str, str] | None = None, timeout: float = 120) -> Result:
    """``python -m cowork_release ARGS`` as a real process, stdin closed (no prompt can wait)."""
    done = subprocess.run(
        [sys.executable, "-m", "cowork_release", *[str(arg) for arg in args]],
        cwd=REPO_ROOT,
        env=env if env is not None else dict(os.environ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Result(done.returncode, done.stdout, done.stderr)


def fake_dist(root: Path, extra: dict[str, bytes] | None = None) -> Path:
    """A small onedir tree shaped like PyInstaller's: the program and ``_internal/``."""
    tree = root / "agent-runtime"
    files = {
        "agent-runtime": b"#!/bin/sh\necho frozen\n",
        "_internal/base_library.zip": b"PK\x05\x06" + bytes(18),
        "_internal/certifi/cacert.pem": b"-----BEGIN CERTIFICATE-----\n",
        "_internal/lib/empty.txt": b"",
        **(extra or {}),
    }
    for relative, content in files.items():
        path = tree / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        path.chmod(0o755 if relative == "agent-runtime" else 0o644)
    return tree


@dataclass(frozen=True)
class Keys:
    dir: Path
    roots: Path
    root: tuple[Path, Path, Path]
    release: Path
    other: Path

    @property
    def release_id(self) -> str:
        return key_id(load_public_key(self.release.with_suffix(".pub")))

    def root_set(self) -> RootKeySet:
        return RootKeySet.model_validate_json(self.roots.read_bytes())

    def site(self, site: Path | str) -> list[str | Path]:
        """``--site S --roots R --release-key K``."""
        return ["--site", site, "--roots", self.roots, "--release-key", self.release]

    def delegate(self, site: Path | str, *extra: str | Path) -> Result:
        """Start (or renew) the site's delegation: two of three roots certify the release key."""
        root_args = ["--root-key", self.root[0], "--root-key", self.root[1]]
        add = ["--add-key", self.release.with_suffix(".pub")]
        return cli("sign", "delegation", *self.site(site), *root_args, *add, *extra)


def make_keys(directory: Path) -> Keys:
    assert cli("keygen", "root", "--out", directory, "--count", "3", "--threshold", "2").code == 0
    assert cli("keygen", "release", "--out", directory / "release.key").code == 0
    assert cli("keygen", "release", "--out", directory / "other.key").code == 0
    return Keys(
        dir=directory,
        roots=directory / "root-keys.json",
        root=(directory / "root-1.key", directory / "root-2.key", directory / "root-3.key"),
        release=directory / "release.key",
        other=directory / "other.key",
    )


def site_manifest(site: Path, keys: Keys) -> ReleaseManifest:
    """The site's manifest, verified exactly as a desktop verifies it."""
    from datetime import UTC, datetime

    return verify_release_document(
        (site / "manifest.json").read_bytes(), keys.root_set(), now=datetime.now(UTC)
    )
