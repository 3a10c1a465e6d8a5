"""Publishing to S3 (``s3://bucket/prefix``) with the real CLI process, against moto's server mode on
127.0.0.1 found through ``AWS_ENDPOINT_URL``: the same manifest and bundles as a directory site,
served with the right headers, and conditional writes that refuse to overwrite."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import httpx
import pytest
from moto.server import ThreadedMotoServer

from contracts.release import ReleaseDocument
from cowork_release.bundle import file_sha256
from cowork_release.errors import ReleaseError
from cowork_release.s3 import S3Site
from tests.build.support import Keys, cli, cli_process, fake_dist, make_keys

NEW = ["--protocol", ">=1.0,<2", "--min-desktop", "0.1.0"]


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto logs every request through werkzeug
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
def aws(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Fake credentials and the endpoint, for this process and the CLI processes it starts."""
    settings = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": moto_endpoint,
    }
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    return {**os.environ, **settings}


@pytest.fixture
def bucket(aws: dict[str, str]) -> str:
    name = f"releases-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=aws["AWS_ENDPOINT_URL"]).create_bucket(Bucket=name)
    return name


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    return make_keys(tmp_path_factory.mktemp("keys"))


def _bundle(tmp_path: Path, extra: bytes = b"") -> Path:
    dist = fake_dist(tmp_path / "dist", {"_internal/extra.bin": extra})
    assert (
        cli(
            "package", "--dist", dist, "--version", "2.0.0", "--platform", "linux-x86_64", "--out", tmp_path
        ).code
        == 0
    )
    return tmp_path / "agent-runtime-2.0.0-linux-x86_64.tar.gz"


def test_publish_to_s3_and_verify_from_there(
    tmp_path: Path, keys: Keys, aws: dict[str, str], bucket: str, moto_endpoint: str
) -> None:
    site = f"s3://{bucket}/agent-runtime"
    roots = [
        "--root-key",
        keys.root[0],
        "--root-key",
        keys.root[2],
        "--add-key",
        keys.release.with_suffix(".pub"),
    ]
    started = cli_process("sign", "delegation", *keys.site(site), *roots, env=aws)
    assert started.code == 0, started.err
    bundle = _bundle(tmp_path)
    published = cli_process("publish", bundle, *keys.site(site), *NEW, "--rollout", "20", env=aws)
    assert published.out == "published 2.0.0 (linux-x86_64) on beta: manifest version 2\n", published.err
    verified = cli_process("verify", "--site", site, "--roots", keys.roots, "--check-bundles", env=aws)
    assert verified.code == 0, verified.err
    assert "beta: 2.0.0 (linux-x86_64) 20%" in verified.out
    assert "1 bundle downloaded and checked" in verified.out

    # What a desktop would fetch over HTTP (here through a presigned URL: moto's bucket is private):
    # the manifest uncached, the bundle immutable, the bundle's URL relative to the manifest's.
    s3 = boto3.client("s3", endpoint_url=moto_endpoint)
    manifest = s3.get_object(Bucket=bucket, Key="agent-runtime/manifest.json")
    assert (manifest["ContentType"], manifest["CacheControl"]) == ("application/json", "no-cache")
    document = ReleaseDocument.model_validate_json(manifest["Body"].read())
    ref = document.manifest.signed.channels["beta"][0].bundles["linux-x86_64"]
    assert ref.url == "bundles/agent-runtime-2.0.0-linux-x86_64.tar.gz"
    key = f"agent-runtime/{ref.url}"
    served = httpx.get(s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key}))
    assert served.status_code == 200, (served.status_code, served.text[:300])
    assert served.content == bundle.read_bytes()
    assert served.headers["cache-control"] == "public, max-age=31536000, immutable"


def test_s3_writes_are_conditional(tmp_path: Path, aws: dict[str, str], bucket: str) -> None:
    site = S3Site.from_url(f"s3://{bucket}/p")
    site.write_manifest(b'{"one": 1}', replacing=None)
    first = site.read_manifest()
    assert first is not None
    with pytest.raises(ReleaseError, match="changed while this command ran"):
        site.write_manifest(b'{"two": 2}', replacing=None)  # another engineer created it first
    site.write_manifest(b'{"two": 2}', replacing=first)
    with pytest.raises(ReleaseError, match="changed while this command ran"):
        site.write_manifest(b'{"three": 3}', replacing=first)  # stale: someone wrote in between
    current = site.read_manifest()
    assert current is not None
    assert current.data == b'{"two": 2}'

    bundle = _bundle(tmp_path / "a")
    assert site.put_bundle(bundle, file_sha256(bundle)) is True
    assert site.put_bundle(bundle, file_sha256(bundle)) is False  # the same bytes again: fine
    other = _bundle(tmp_path / "b", extra=b"other")
    with pytest.raises(ReleaseError, match="a published bundle is never replaced"):
        site.put_bundle(other, file_sha256(other))


def test_s3_errors_are_one_line(tmp_path: Path, keys: Keys, aws: dict[str, str]) -> None:
    result = cli_process("verify", "--site", "s3://no-such-bucket-here/x", "--roots", keys.roots, env=aws)
    assert result.code == 1
    assert result.err.startswith(
        "cowork-release: error: reading s3://no-such-bucket-here/x/manifest.json failed"
    )
    assert result.err.count("\n") == 1
    bad = cli_process("verify", "--site", "s3://", "--roots", keys.roots, env=aws)
    assert bad.err == "cowork-release: error: s3://: an S3 site is s3://bucket/prefix\n"
