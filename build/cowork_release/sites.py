"""Where releases are published: a directory (served as a static site), an S3 bucket, or — for
``verify`` only — any HTTP(S) URL.

A site holds ``manifest.json`` (the signed ``ReleaseDocument``) and ``bundles/<bundle file>``. Bundle
URLs in the manifest are relative to the manifest (``bundles/…``) unless a base URL was given, so a
site can be copied or mirrored as a whole.

Writes never leave a half-written file: a directory site writes a temporary file, flushes it and
renames it over the old one; an S3 object appears whole or not at all. A bundle once published is
never replaced by different bytes (clients may be halfway through downloading it). The manifest is
replaced only if it is still the one the edit started from (compare-and-swap: S3's conditional
writes, a re-read right before the rename in a directory), so two release engineers' edits cannot
silently overwrite one another.
"""

from __future__ import annotations

import hashlib
import posixpath
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import urljoin, urlsplit

from contracts.atomic import atomic_writer
from contracts.release import MANIFEST_MAX_BYTES
from cowork_release.bundle import file_sha256
from cowork_release.errors import ReleaseError

__all__ = [
    "BUNDLE_DIR",
    "MANIFEST_NAME",
    "DirectorySite",
    "HttpSite",
    "Site",
    "Stored",
    "open_site",
]

MANIFEST_NAME = "manifest.json"
BUNDLE_DIR = "bundles"
_CHUNK = 1 << 20
_HTTP_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Stored:
    data: bytes
    version: str
    """What a compare-and-swap write checks: an ETag on S3, the content's SHA-256 in a directory."""


class Site(Protocol):
    location: str

    def read_manifest(self) -> Stored | None: ...

    def write_manifest(self, data: bytes, *, replacing: Stored | None) -> None:
        """Write ``manifest.json`` if it is still ``replacing`` (absent when None), else ReleaseError."""
        ...

    def put_bundle(self, source: Path, sha256: str) -> bool:
        """Publish ``bundles/<source name>``; False if those very bytes are there already."""
        ...

    def fetch(self, url: str, destination: Path, *, limit: int) -> None:
        """Copy the bundle at ``url`` (relative to the manifest, or absolute) into ``destination``,
        at most ``limit`` bytes (one more is an error)."""
        ...


def site_path(url: str) -> str:
    """A relative bundle URL as a path inside the site; refused if it climbs out."""
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or url.startswith("/") or parts.query or parts.fragment:
        raise ReleaseError(f"{url} is not a path inside the site")
    normal = posixpath.normpath(url)
    if normal.startswith("../") or normal == "..":
        raise ReleaseError(f"{url} points outside the site")
    return normal


class _NotFound(ReleaseError):
    pass


def too_big(url: str, limit: int) -> ReleaseError:
    return ReleaseError(f"{url} is larger than the {limit:,} bytes the manifest declares")


def fetch_http(url: str, destination: Path, *, limit: int) -> None:
    import httpx

    try:
        with (
            httpx.stream("GET", url, timeout=_HTTP_TIMEOUT_S, follow_redirects=True) as response,
            destination.open("wb") as out,
        ):
            if response.status_code == 404:
                raise _NotFound(f"GET {url} answered 404")
            if response.status_code != 200:
                raise ReleaseError(f"GET {url} answered {response.status_code}")
            written = 0
            for chunk in response.iter_bytes(_CHUNK):
                written += len(chunk)
                if written > limit:
                    raise too_big(url, limit)
                out.write(chunk)
    except httpx.HTTPError as exc:
        raise ReleaseError(f"GET {url} failed: {exc}") from None


class DirectorySite:
    """A local directory, e.g. the document root of a static web server."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.location = str(root)

    def read_manifest(self) -> Stored | None:
        path = self.root / MANIFEST_NAME
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ReleaseError(f"cannot read {path}: {exc.strerror}") from None
        return Stored(data=data, version=hashlib.sha256(data).hexdigest())

    def _make_root(self) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ReleaseError(f"cannot create {self.root}: {exc.strerror}") from None

    def _replace(
        self, target: Path, fill: Path | bytes, *, swap: bool = False, replacing: Stored | None = None
    ) -> None:
        """Write a temporary file beside ``target``, fsync it, and rename it over ``target`` — with
        ``swap``, only if the manifest is still ``replacing``."""
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_writer(target, mode=0o644) as out:  # served to everyone
            if isinstance(fill, bytes):
                out.write(fill)
            else:
                with fill.open("rb") as source:
                    shutil.copyfileobj(source, out.stream, _CHUNK)
            if swap:
                out.sync()  # the check right before the rename: the disk is not waited for after it
                current = self.read_manifest()
                if (current and current.version) != (replacing and replacing.version):
                    raise ReleaseError(f"{target} changed while this command ran; run it again")

    def write_manifest(self, data: bytes, *, replacing: Stored | None) -> None:
        self._make_root()
        try:
            self._replace(self.root / MANIFEST_NAME, data, swap=True, replacing=replacing)
        except OSError as exc:
            raise ReleaseError(f"cannot write {self.root / MANIFEST_NAME}: {exc.strerror}") from None

    def put_bundle(self, source: Path, sha256: str) -> bool:
        self._make_root()
        target = self.root / BUNDLE_DIR / source.name
        if target.exists():
            if file_sha256(target) == sha256:
                return False
            raise ReleaseError(
                f"{target} is already published with other content; a published bundle is never "
                "replaced (publish a new version)"
            )
        try:
            self._replace(target, source)
        except OSError as exc:
            raise ReleaseError(f"cannot write {target}: {exc.strerror}") from None
        return True

    def fetch(self, url: str, destination: Path, *, limit: int) -> None:
        if urlsplit(url).scheme in ("http", "https"):
            fetch_http(url, destination, limit=limit)
            return
        source = self.root / site_path(url)
        try:
            if source.stat().st_size > limit:
                raise too_big(url, limit)
            shutil.copyfile(source, destination)
        except FileNotFoundError:
            raise ReleaseError(f"{url} is missing from {self.location}") from None


class HttpSite:
    """A published site read over HTTP(S): ``verify`` only."""

    def __init__(self, url: str) -> None:
        self.manifest_url = url if url.endswith(".json") else url.rstrip("/") + "/" + MANIFEST_NAME
        self.location = self.manifest_url

    def read_manifest(self) -> Stored | None:
        with tempfile.TemporaryDirectory() as scratch:
            target = Path(scratch) / MANIFEST_NAME
            try:
                fetch_http(self.manifest_url, target, limit=MANIFEST_MAX_BYTES)
            except _NotFound:
                return None
            data = target.read_bytes()
        return Stored(data=data, version=hashlib.sha256(data).hexdigest())

    def write_manifest(self, data: bytes, *, replacing: Stored | None) -> None:
        raise ReleaseError(f"{self.location} is read-only here: publish to a directory or s3://bucket/prefix")

    def put_bundle(self, source: Path, sha256: str) -> bool:
        raise ReleaseError(f"{self.location} is read-only here: publish to a directory or s3://bucket/prefix")

    def fetch(self, url: str, destination: Path, *, limit: int) -> None:
        fetch_http(urljoin(self.manifest_url, url), destination, limit=limit)


def open_site(spec: str) -> Site:
    """``s3://bucket/prefix``, ``http(s)://…`` (read-only) or a directory path."""
    scheme = urlsplit(spec).scheme
    if scheme == "s3":
        from cowork_release.s3 import S3Site

        return S3Site.from_url(spec)
    if scheme in ("http", "https"):
        return HttpSite(spec)
    if scheme and len(scheme) > 1:  # one letter is a Windows drive
        raise ReleaseError(f"{spec}: a site is a directory, s3://bucket/prefix or an http(s) URL")
    return DirectorySite(Path(spec))
