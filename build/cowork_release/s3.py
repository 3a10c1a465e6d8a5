"""The S3 site: ``s3://bucket/prefix`` holds ``prefix/manifest.json`` and ``prefix/bundles/…``.

Credentials, region and endpoint come from boto3's usual chain; ``AWS_ENDPOINT_URL`` points it at
another S3 (MinIO, LocalStack, moto). The manifest is served ``no-cache`` (clients must see a
revocation at once), bundles as immutable. Every write is conditional — ``If-None-Match: *`` for a
new object, ``If-Match: <ETag>`` for the manifest an edit started from — so concurrent edits fail
instead of overwriting each other, and a bundle is never replaced.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from contracts.release import MANIFEST_MAX_BYTES
from cowork_release.errors import ReleaseError
from cowork_release.sites import BUNDLE_DIR, MANIFEST_NAME, Stored, fetch_http, site_path, too_big

__all__ = ["S3Site"]

_CHUNK = 1 << 20
_CHANGED = ("PreconditionFailed", "ConditionalRequestConflict", "412", "409")


def _code(exc: ClientError) -> str:
    error: dict[str, Any] = exc.response.get("Error", {})
    return str(error.get("Code", ""))


class S3Site:
    def __init__(self, bucket: str, prefix: str) -> None:
        self.bucket = bucket
        self.prefix = prefix
        self.location = f"s3://{bucket}/{prefix}".rstrip("/")
        self._client: Any = boto3.client(
            "s3",
            endpoint_url=os.environ.get("AWS_ENDPOINT_URL") or None,
            config=Config(retries={"max_attempts": 3, "mode": "standard"}),
        )

    @classmethod
    def from_url(cls, url: str) -> S3Site:
        parts = urlsplit(url)
        if not parts.netloc or parts.query or parts.fragment:
            raise ReleaseError(f"{url}: an S3 site is s3://bucket/prefix")
        return cls(parts.netloc, parts.path.strip("/"))

    def _key(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.prefix else name

    def _failed(self, action: str, key: str, exc: Exception) -> ReleaseError:
        detail = _code(exc) if isinstance(exc, ClientError) else type(exc).__name__
        message = str(exc).splitlines()[0] if str(exc) else detail
        return ReleaseError(f"{action} s3://{self.bucket}/{key} failed: {message}")

    def read_manifest(self) -> Stored | None:
        key = self._key(MANIFEST_NAME)
        try:
            answer = self._client.get_object(Bucket=self.bucket, Key=key)
            data: bytes = answer["Body"].read(MANIFEST_MAX_BYTES + 1)
        except ClientError as exc:
            if _code(exc) in ("NoSuchKey", "404"):
                return None
            raise self._failed("reading", key, exc) from None
        except BotoCoreError as exc:
            raise self._failed("reading", key, exc) from None
        return Stored(data=data, version=str(answer["ETag"]))

    def write_manifest(self, data: bytes, *, replacing: Stored | None) -> None:
        key = self._key(MANIFEST_NAME)
        condition = {"IfMatch": replacing.version} if replacing else {"IfNoneMatch": "*"}
        try:
            self._client.put_object(
                Bucket=self.bucket,
                Key=key,
                Body=data,
                ContentType="application/json",
                CacheControl="no-cache",
                **condition,
            )
        except ClientError as exc:
            if _code(exc) in _CHANGED:
                raise ReleaseError(
                    f"s3://{self.bucket}/{key} changed while this command ran; run it again"
                ) from None
            raise self._failed("writing", key, exc) from None
        except BotoCoreError as exc:
            raise self._failed("writing", key, exc) from None

    def put_bundle(self, source: Path, sha256: str) -> bool:
        key = self._key(f"{BUNDLE_DIR}/{source.name}")
        try:
            with source.open("rb") as body:
                self._client.put_object(
                    Bucket=self.bucket,
                    Key=key,
                    Body=body,
                    ContentType="application/gzip",
                    CacheControl="public, max-age=31536000, immutable",
                    Metadata={"sha256": sha256},
                    IfNoneMatch="*",
                )
        except ClientError as exc:
            if _code(exc) not in _CHANGED:
                raise self._failed("writing", key, exc) from None
        except BotoCoreError as exc:
            raise self._failed("writing", key, exc) from None
        else:
            return True
        # Already there: the same bytes are fine, other bytes are never replaced.
        try:
            head = self._client.head_object(Bucket=self.bucket, Key=key)
        except (ClientError, BotoCoreError) as exc:
            raise self._failed("reading", key, exc) from None
        if head.get("Metadata", {}).get("sha256") == sha256:
            return False
        raise ReleaseError(
            f"s3://{self.bucket}/{key} is already published with other content; a published bundle is "
            "never replaced (publish a new version)"
        )

    def fetch(self, url: str, destination: Path, *, limit: int) -> None:
        if urlsplit(url).scheme in ("http", "https"):
            fetch_http(url, destination, limit=limit)
            return
        key = self._key(site_path(url))
        try:
            answer = self._client.get_object(Bucket=self.bucket, Key=key)
            if int(answer["ContentLength"]) > limit:
                raise too_big(url, limit)
            with destination.open("wb") as out:
                shutil.copyfileobj(answer["Body"], out, _CHUNK)
        except ClientError as exc:
            if _code(exc) in ("NoSuchKey", "404"):
                raise ReleaseError(f"{url} is missing from {self.location}") from None
            raise self._failed("reading", key, exc) from None
        except BotoCoreError as exc:
            raise self._failed("reading", key, exc) from None
