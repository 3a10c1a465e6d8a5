"""Synthetic runtime bundles and a signed release site for the updater's tests.

A synthetic bundle has the real layout (``cowork-files.json`` + ``agent-runtime/``) and a real
runtime: its program is a tiny launcher script that runs this checkout's runtime
(``python -m agent_runtime``), so health checks are real JSON-RPC handshakes and take a fraction of a
second. :class:`ReleaseSite` signs manifests with the contract's own helpers, as the release CLI does.
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from contracts.release import (
    BundleRef,
    KeyDelegation,
    Platform,
    ReleaseDocument,
    ReleaseManifest,
    RootKeySet,
    RuntimeRelease,
    SigningKey,
    bundle_file_name,
    sign_delegation,
    sign_manifest,
)
from contracts.signing import key_id, public_key_to_text

PLATFORM: Platform = "linux-x86_64"
PROGRAM = "cowork-agent-runtime"

WORKING_LAUNCHER = f'#!/bin/sh\nexec "{sys.executable}" -m agent_runtime "$@"\n'
CRASHING_LAUNCHER = "#!/bin/sh\necho 'runtime: cannot load its modules' >&2\nexit 3\n"
HANGING_LAUNCHER = "#!/bin/sh\nexec sleep 600\n"


def tree_files(
    version: str, launcher: str = WORKING_LAUNCHER, extra: dict[str, bytes] | None = None
) -> dict[str, bytes]:
    """The files of a synthetic runtime tree, by path under ``agent-runtime/``."""
    return {
        PROGRAM: launcher.encode(),
        "_internal/VERSION": version.encode(),
        "_internal/lib/module.py": b"# a module of the frozen runtime\n" * 20,
        **(extra or {}),
    }


def file_list(version: str, files: dict[str, bytes], platform: Platform = PLATFORM) -> bytes:
    entries = {
        name: {
            "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
            "mode": 0o755 if name == PROGRAM else 0o644,
        }
        for name, data in files.items()
    }
    document = {"runtimeVersion": version, "platform": platform, "executable": PROGRAM, "files": entries}
    return json.dumps(document, indent=1).encode()


def member(
    name: str, data: bytes = b"", *, kind: bytes = tarfile.REGTYPE, mode: int = 0o644, link: str = ""
) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.mtime = 1_700_000_000
    info.linkname = link
    if kind in (tarfile.REGTYPE, tarfile.AREGTYPE):
        info.size = len(data)
        return info, data
    return info, None


def write_tar(path: Path, members: Iterable[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    """A .tar.gz holding exactly ``members``, whatever they are (attack archives too)."""
    with tarfile.open(path, "w:gz", compresslevel=1, format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def bundle_members(
    version: str, files: dict[str, bytes], platform: Platform = PLATFORM
) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    members = [
        member("cowork-files.json", file_list(version, files, platform)),
        member("agent-runtime", kind=tarfile.DIRTYPE, mode=0o755),
    ]
    for name, data in files.items():
        members.append(member(f"agent-runtime/{name}", data, mode=0o755 if name == PROGRAM else 0o644))
    return members


def build_bundle(
    directory: Path,
    version: str,
    *,
    launcher: str = WORKING_LAUNCHER,
    extra: dict[str, bytes] | None = None,
    platform: Platform = PLATFORM,
) -> Path:
    """``directory/agent-runtime-{version}-{platform}.tar.gz``: a synthetic runtime bundle."""
    files = tree_files(version, launcher, extra)
    return write_tar(
        directory / bundle_file_name(version, platform), bundle_members(version, files, platform)
    )


def unpack_plainly(archive: Path, directory: Path) -> Path:
    """The bundle as the installer ships it inside the app (the Phase 1 bundled runtime)."""
    directory.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(directory, filter="data")
    (directory / "agent-runtime" / PROGRAM).chmod(0o755)
    return directory


@dataclass
class ReleaseSite:
    """A directory published as a release site, with a root key set, a delegation and a release key."""

    directory: Path

    def __post_init__(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.root_private = [Ed25519PrivateKey.generate() for _ in range(3)]
        self.roots = RootKeySet(
            keys=[public_key_to_text(k.public_key()) for k in self.root_private], threshold=2
        )
        self.release_key = Ed25519PrivateKey.generate()
        self.revoked_keys: list[str] = []
        self.manifest_version = 0

    def release(
        self,
        version: str,
        archive: Path,
        *,
        rollout: int = 100,
        revoked: bool = False,
        min_desktop: str = "0.1",
        protocols: str = ">=1.0,<2",
        size: int | None = None,
        sha256: str | None = None,
    ) -> RuntimeRelease:
        data = archive.read_bytes()
        if archive.parent != self.directory:
            (self.directory / archive.name).write_bytes(data)
        bundle = BundleRef(
            url=archive.name,
            sha256=sha256 or hashlib.sha256(data).hexdigest(),
            size=size or len(data),
        )
        return RuntimeRelease(
            runtime_version=version,
            protocol_versions=protocols,
            min_desktop_version=min_desktop,
            bundles={PLATFORM: bundle},
            release_notes=f"Runtime {version}.",
            rollout_percent=rollout,
            revoked=revoked,
            published_at=datetime.now(UTC),
        )

    def delegation(
        self, *, signer: Ed25519PrivateKey | None = None, expires_in: timedelta = timedelta(days=90)
    ) -> KeyDelegation:
        key = (signer or self.release_key).public_key()
        return KeyDelegation(
            version=1,
            expires_at=datetime.now(UTC) + expires_in,
            keys=[
                SigningKey(
                    key_id=key_id(key),
                    public_key=public_key_to_text(key),
                    expires_at=datetime.now(UTC) + expires_in,
                )
            ],
            revoked_key_ids=list(self.revoked_keys),
        )

    def document(
        self,
        stable: list[RuntimeRelease],
        *,
        beta: list[RuntimeRelease] | None = None,
        manifest_version: int | None = None,
        expires_in: timedelta = timedelta(days=7),
        root_signers: list[Ed25519PrivateKey] | None = None,
        manifest_signer: Ed25519PrivateKey | None = None,
        unsigned: bool = False,
    ) -> bytes:
        if manifest_version is None:
            self.manifest_version += 1
            manifest_version = self.manifest_version
        channels: dict[str, list[RuntimeRelease]] = {"stable": stable}
        if beta is not None:
            channels["beta"] = beta
        manifest = ReleaseManifest(
            manifest_version=manifest_version,
            expires_at=datetime.now(UTC) + expires_in,
            channels=channels,  # type: ignore[arg-type]
        )
        delegation = sign_delegation(self.delegation(), root_signers or self.root_private[:2])
        signed = sign_manifest(manifest, manifest_signer or self.release_key)
        if unsigned:
            signed = signed.model_copy(update={"signatures": []})
        return ReleaseDocument(delegation=delegation, manifest=signed).model_dump_json(by_alias=True).encode()

    def publish(self, stable: list[RuntimeRelease], **options: object) -> bytes:
        raw = self.document(stable, **options)  # type: ignore[arg-type]
        (self.directory / "manifest.json").write_bytes(raw)
        return raw
