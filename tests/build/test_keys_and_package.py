"""``cowork-release keygen`` and ``package``: owner-only keys that are never overwritten, and bundles
that are deterministic, complete, and refuse what a bundle may not hold."""

from __future__ import annotations

import json
import os
import stat
import tarfile
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from contracts.release import BundleFileList, RootKeySet
from contracts.signing import key_id, public_key_from_text
from cowork_release.bundle import file_sha256, inspect_bundle
from tests.build.support import cli, cli_process, fake_dist

# ---------------------------------------------------------------- keygen


def test_keygen_root_writes_owner_only_keys_and_the_set_to_pin(tmp_path: Path) -> None:
    result = cli("keygen", "root", "--out", tmp_path / "roots", "--count", "3", "--threshold", "2")
    assert result.code == 0, result.err
    root_set = RootKeySet.model_validate_json((tmp_path / "roots" / "root-keys.json").read_bytes())
    assert root_set.threshold == 2
    for index, text in enumerate(root_set.keys, start=1):
        path = tmp_path / "roots" / f"root-{index}.key"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        key = load_pem_private_key(path.read_bytes(), None)
        assert isinstance(key, Ed25519PrivateKey)
        assert key_id(key.public_key()) == key_id(public_key_from_text(text))
        assert key_id(key.public_key()) in result.out


def test_keygen_never_overwrites_a_key(tmp_path: Path) -> None:
    assert cli("keygen", "release", "--out", tmp_path / "r.key").code == 0
    before = (tmp_path / "r.key").read_bytes()
    again = cli("keygen", "release", "--out", tmp_path / "r.key")
    assert again.code == 1
    assert (
        again.err
        == f"cowork-release: error: refusing to overwrite {tmp_path / 'r.key'}, {tmp_path / 'r.pub'}\n"
    )
    assert (tmp_path / "r.key").read_bytes() == before
    (tmp_path / "roots").mkdir()
    (tmp_path / "roots" / "root-keys.json").write_text("{}")
    refused = cli("keygen", "root", "--out", tmp_path / "roots")
    assert refused.code == 1
    assert "refusing to overwrite" in refused.err
    assert not (tmp_path / "roots" / "root-1.key").exists()  # nothing written at all


def test_an_encrypted_key_needs_its_passphrase_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RELEASE_PASSPHRASE", "correct horse")
    made = cli("keygen", "release", "--out", tmp_path / "r.key", "--passphrase-env", "RELEASE_PASSPHRASE")
    assert made.code == 0, made.err
    assert b"ENCRYPTED" in (tmp_path / "r.key").read_bytes()
    site, roots = tmp_path / "site", tmp_path / "roots"
    assert cli("keygen", "root", "--out", roots, "--count", "1", "--threshold", "1").code == 0
    base = ["sign", "delegation", "--site", site, "--roots", roots / "root-keys.json"]
    base += [
        "--root-key",
        roots / "root-1.key",
        "--add-key",
        tmp_path / "r.pub",
        "--release-key",
        tmp_path / "r.key",
    ]
    missing = cli(*base)
    assert missing.code == 1
    assert "is encrypted: name the passphrase's variable with --passphrase-env" in missing.err
    monkeypatch.setenv("WRONG", "battery staple")
    wrong = cli(*base, "--passphrase-env", "WRONG")
    assert wrong.code == 1
    assert "is not a PEM private key, or the passphrase is wrong" in wrong.err
    assert not site.exists()
    unset = cli(*base, "--passphrase-env", "NOT_SET_ANYWHERE")
    assert unset.err == "cowork-release: error: --passphrase-env names NOT_SET_ANYWHERE, which is not set\n"
    # The passphrase opens the encrypted key; the root key, not encrypted, loads as it is.
    right = cli(*base, "--passphrase-env", "RELEASE_PASSPHRASE")
    assert right.code == 0, right.err
    assert (site / "manifest.json").exists()


def test_keygen_runs_without_a_terminal_and_refuses_a_bad_threshold(tmp_path: Path) -> None:
    result = cli_process("keygen", "root", "--out", tmp_path, "--count", "2", "--threshold", "3")
    assert result.code == 1
    assert result.err == "cowork-release: error: --threshold must be between 1 and --count (2), not 3\n"
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- package


def _pack(dist: Path, out: Path, version: str = "1.4.0") -> Path:
    result = cli("package", "--dist", dist, "--version", version, "--platform", "linux-x86_64", "--out", out)
    assert result.code == 0, result.err
    return out / f"agent-runtime-{version}-linux-x86_64.tar.gz"


def test_a_bundle_holds_the_file_list_first_and_the_tree_under_agent_runtime(tmp_path: Path) -> None:
    dist = fake_dist(tmp_path)
    bundle = _pack(dist, tmp_path / "out")
    with tarfile.open(bundle, "r:gz") as tar:
        members = tar.getmembers()
        listing = tar.extractfile(members[0])
        assert listing is not None
        files = BundleFileList.model_validate_json(listing.read())
    assert members[0].name == "cowork-files.json"
    assert [m.name for m in members[1:]] == sorted(m.name for m in members[1:])
    assert all(m.name == "agent-runtime" or m.name.startswith("agent-runtime/") for m in members[1:])
    assert {(m.uid, m.gid, m.uname, m.gname, m.mtime) for m in members} == {(0, 0, "", "", 0)}
    assert not [m for m in members if not (m.isfile() or m.isdir())]
    assert files.runtime_version == "1.4.0"
    assert files.executable == "agent-runtime"
    assert files.files["agent-runtime"].mode == 0o755
    assert files.files["_internal/lib/empty.txt"].size == 0
    for relative, entry in files.files.items():
        assert entry.sha256 == file_sha256(dist / relative)
        member = next(m for m in members if m.name == f"agent-runtime/{relative}")
        assert member.mode == entry.mode


def test_packing_the_same_tree_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    dist = fake_dist(tmp_path)
    first = _pack(dist, tmp_path / "a").read_bytes()
    for path in dist.rglob("*"):
        os.utime(path, (1_000_000, 1_000_000))  # a later build: other times, same content
    second = _pack(dist, tmp_path / "b").read_bytes()
    assert first == second


def test_a_link_inside_the_tree_is_packed_as_the_file_it_names(tmp_path: Path) -> None:
    dist = fake_dist(tmp_path)
    (dist / "_internal" / "alias.pem").symlink_to("certifi/cacert.pem")
    bundle = _pack(dist, tmp_path / "out")
    info = inspect_bundle(bundle)
    assert info.files.files["_internal/alias.pem"] == info.files.files["_internal/certifi/cacert.pem"]


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (lambda d: (d / "agent-runtime").unlink(), "has no agent-runtime"),
        (lambda d: (d / "escape").symlink_to("/etc/hostname"), "escape links outside the tree"),
        (lambda d: os.mkfifo(d / "pipe"), "pipe is neither a file nor a directory"),
        (lambda d: (d / "loop").symlink_to("."), "links back into itself"),
        (lambda d: (d / "a:b").write_text("x"), "unsafe path"),
    ],
    ids=["no-program", "escaping-link", "fifo", "link-loop", "drive-colon"],
)
def test_package_refuses_a_tree_a_bundle_cannot_hold(tmp_path: Path, spoil: object, message: str) -> None:
    dist = fake_dist(tmp_path)
    spoil(dist)  # type: ignore[operator]
    result = cli(
        "package", "--dist", dist, "--version", "1.0", "--platform", "linux-x86_64", "--out", tmp_path / "o"
    )
    assert result.code == 1
    assert result.err.startswith("cowork-release: error: ")
    assert message in result.err
    assert result.err.count("\n") == 1
    assert not (tmp_path / "o").exists() or not list((tmp_path / "o").iterdir())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--version", "one"], "runtimeVersion must be a PEP 440 version"),
        (["--version", "1.0", "--platform", "linux-arm64"], "must be one of darwin-arm64"),
        (["--version", "1.0", "--dist", "/nonexistent"], "/nonexistent is not a directory"),
    ],
    ids=["bad-version", "unknown-platform", "missing-tree"],
)
def test_package_answers_bad_input_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    dist = fake_dist(tmp_path)
    full = ["package", "--dist", str(dist), "--platform", "linux-x86_64", "--out", str(tmp_path / "o"), *args]
    result = cli(*full)
    assert result.code in (1, 2)
    assert message in result.err
    assert "Traceback" not in result.err


def test_the_file_list_is_readable_json_with_camel_case_names(tmp_path: Path) -> None:
    bundle = _pack(fake_dist(tmp_path), tmp_path / "out")
    with tarfile.open(bundle, "r:gz") as tar:
        listing = tar.extractfile("cowork-files.json")
        assert listing is not None
        wire = json.loads(listing.read())
    assert set(wire) == {"runtimeVersion", "platform", "executable", "files"}
    assert wire["files"]["agent-runtime"]["mode"] == 0o755
