"""Artifact content in S3: key ``artifacts/{workspaceId}/{artifactId}/{sha256}`` in the bucket.
A PUT is atomic (readers see the whole object or none), so no temporary objects are needed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from botocore.exceptions import ClientError

from backend.storage.aws.calls import code_of, failing_as_storage_error
from backend.storage.aws.config import AwsSettings
from backend.workspace.repository import StoredObject

__all__ = ["S3Content", "S3ContentStore"]

_ROOT = "artifacts/"
_CHUNK = 256 * 1024


class S3Content:
    def __init__(self, body: Any, size: int) -> None:
        self._body = body
        self.size = size

    def chunks(self) -> Iterator[bytes]:
        with failing_as_storage_error("reading artifact content"):
            yield from self._body.iter_chunks(_CHUNK)

    def close(self) -> None:
        self._body.close()


class S3ContentStore:
    def __init__(self, s3: Any, settings: AwsSettings) -> None:
        self._s3 = s3
        self._bucket = settings.bucket_name

    def put(self, key: str, data: bytes, content_type: str) -> None:
        with failing_as_storage_error("writing artifact content"):
            self._s3.put_object(Bucket=self._bucket, Key=_ROOT + key, Body=data, ContentType=content_type)

    def open(self, key: str) -> S3Content | None:
        with failing_as_storage_error("reading artifact content"):
            try:
                found = self._s3.get_object(Bucket=self._bucket, Key=_ROOT + key)
            except ClientError as exc:
                if code_of(exc) in ("NoSuchKey", "404"):
                    return None
                raise
        return S3Content(found["Body"], int(found["ContentLength"]))

    def delete(self, key: str) -> None:
        with failing_as_storage_error("deleting artifact content"):
            self._s3.delete_object(Bucket=self._bucket, Key=_ROOT + key)

    def delete_prefix(self, prefix: str) -> None:
        with failing_as_storage_error("deleting a workspace's content"):
            keys = [{"Key": _ROOT + stored.key} for stored in self.list(prefix)]
            for start in range(0, len(keys), 1000):
                self._s3.delete_objects(
                    Bucket=self._bucket, Delete={"Objects": keys[start : start + 1000], "Quiet": True}
                )

    def list(self, prefix: str = "") -> Iterator[StoredObject]:
        paginator = self._s3.get_paginator("list_objects_v2")
        with failing_as_storage_error("listing artifact content"):
            for page in paginator.paginate(Bucket=self._bucket, Prefix=_ROOT + prefix):
                for entry in page.get("Contents", []):
                    yield StoredObject(entry["Key"][len(_ROOT) :], entry["LastModified"], int(entry["Size"]))
