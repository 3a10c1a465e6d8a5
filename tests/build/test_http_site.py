"""A directory site served over HTTP, as a static web server would: ``verify`` reads it by URL, and
bundles published under ``--base-url`` are fetched from there. Plus ``build``'s bad input."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.build.support import Keys, cli, cli_process, fake_dist, make_keys

NEW = ["--protocol", ">=1.0,<2", "--min-desktop", "0.1.0"]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """``tmp_path/site`` served at an http://127.0.0.1 URL."""
    root = tmp_path / "site"
    root.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    return make_keys(tmp_path_factory.mktemp("keys"))


def test_verify_reads_a_site_over_http_with_absolute_bundle_urls(
    tmp_path: Path, keys: Keys, served: tuple[Path, str]
) -> None:
    root, url = served
    assert keys.delegate(root).code == 0
    dist = fake_dist(tmp_path)
    assert (
        cli(
            "package", "--dist", dist, "--version", "3.0", "--platform", "linux-x86_64", "--out", tmp_path
        ).code
        == 0
    )
    bundle = tmp_path / "agent-runtime-3.0-linux-x86_64.tar.gz"
    published = cli("publish", bundle, *keys.site(root), *NEW, "--base-url", url)
    assert published.code == 0, published.err

    verified = cli_process("verify", "--site", url, "--roots", keys.roots, "--check-bundles")
    assert verified.code == 0, verified.err
    assert f"{url}manifest.json: valid — manifest version 2" in verified.out
    assert "1 bundle downloaded and checked" in verified.out
    # The manifest names the bundle by its absolute URL; a directory view of the site fetches it too.
    manifest = (root / "manifest.json").read_text()
    assert f'"url": "{url}bundles/agent-runtime-3.0-linux-x86_64.tar.gz"' in manifest
    assert cli("verify", "--site", root, "--roots", keys.roots, "--check-bundles").code == 0


def test_an_http_site_is_read_only_and_a_missing_manifest_is_said_plainly(
    keys: Keys, served: tuple[Path, str]
) -> None:
    _, url = served
    missing = cli("verify", "--site", url, "--roots", keys.roots)
    assert missing.err == f"cowork-release: error: {url}manifest.json has no manifest\n"
    refused = cli("sign", "manifest", *keys.site(url))
    assert refused.code == 1
    unreachable = cli("verify", "--site", "http://127.0.0.1:9/", "--roots", keys.roots)
    assert unreachable.code == 1
    assert unreachable.err.startswith("cowork-release: error: GET http://127.0.0.1:9/manifest.json failed")


def test_build_says_what_is_missing(tmp_path: Path) -> None:
    result = cli("build", "--spec", tmp_path / "nope.spec", "--out", tmp_path / "out")
    assert result.err == f"cowork-release: error: {tmp_path / 'nope.spec'} does not exist\n"
    assert not (tmp_path / "out").exists()
