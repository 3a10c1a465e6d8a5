"""The manifest commands on a directory site, end to end: what desktops would read after each one
(verified with the pinned roots, as the updater does), and every kind of bad input or attack refused
with one clear line and nothing written."""

from __future__ import annotations

import io
import json
import os
import tarfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from contracts.release import ReleaseVerificationError, verify_release_document
from cowork_release import cli as cli_module
from cowork_release.errors import ReleaseError
from cowork_release.sites import DirectorySite
from tests.build.support import Keys, cli, cli_process, fake_dist, make_keys, site_manifest

NEW = ["--protocol", ">=1.0,<2", "--min-desktop", "0.1.0"]


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    return make_keys(tmp_path_factory.mktemp("keys"))


@pytest.fixture
def site(tmp_path: Path, keys: Keys) -> Path:
    """A site whose delegation certifies the release key, with its first (empty) manifest."""
    path = tmp_path / "site"
    result = keys.delegate(path)
    assert result.code == 0, result.err
    return path


def _bundle(tmp_path: Path, version: str = "1.4.0", platform: str = "linux-x86_64", **extra: bytes) -> Path:
    dist = fake_dist(
        tmp_path / f"dist-{version}-{platform}", {k.replace("__", "/"): v for k, v in extra.items()}
    )
    out = tmp_path / "bundles"
    result = cli("package", "--dist", dist, "--version", version, "--platform", platform, "--out", out)
    assert result.code == 0, result.err
    return out / f"agent-runtime-{version}-{platform}.tar.gz"


def _snapshot(site: Path) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def _refused(before: dict[str, bytes], site: Path, result: Any, words: str) -> None:
    assert result.code == 1, result.out
    assert result.err.startswith("cowork-release: error: "), result.err
    assert result.err.count("\n") == 1, result.err
    assert words in result.err, result.err
    assert _snapshot(site) == before, "nothing may be written"


# ---------------------------------------------------------------- the lifecycle


def test_a_release_goes_from_beta_to_stable_and_every_change_is_a_new_signed_version(
    tmp_path: Path, keys: Keys, site: Path
) -> None:
    bundle = _bundle(tmp_path)
    assert site_manifest(site, keys).manifest_version == 1

    published = cli("publish", bundle, *keys.site(site), *NEW, "--notes", "Faster.", "--rollout", "10")
    assert published.code == 0, published.err
    assert published.out == "published 1.4.0 (linux-x86_64) on beta: manifest version 2\n"
    manifest = site_manifest(site, keys)
    [release] = manifest.channels["beta"]
    ref = release.bundles["linux-x86_64"]
    assert (ref.url, ref.size) == ("bundles/agent-runtime-1.4.0-linux-x86_64.tar.gz", bundle.stat().st_size)
    assert (site / ref.url).read_bytes() == bundle.read_bytes()
    assert (release.rollout_percent, release.release_notes, release.protocol_versions) == (
        10,
        "Faster.",
        ">=1.0,<2",
    )

    assert (
        cli("rollout", *keys.site(site), "--channel", "beta", "--version", "1.4.0", "--percent", "50").code
        == 0
    )
    assert site_manifest(site, keys).channels["beta"][0].rollout_percent == 50
    promoted = cli("promote", *keys.site(site), "--version", "1.4.0", "--rollout", "5")
    assert promoted.out == "promoted 1.4.0 to stable at 5%: manifest version 4\n"
    manifest = site_manifest(site, keys)
    assert manifest.channels["stable"][0].rollout_percent == 5
    assert manifest.channels["beta"][0].rollout_percent == 50
    revoked = cli("revoke", "release", *keys.site(site), "--version", "1.4.0")
    assert revoked.out == "revoked 1.4.0 on stable, beta: manifest version 5\n"
    manifest = site_manifest(site, keys)
    assert manifest.channels["stable"][0].revoked
    assert manifest.channels["beta"][0].revoked

    verified = cli("verify", "--site", site, "--roots", keys.roots, "--check-bundles")
    assert verified.code == 0, verified.err
    assert "valid — manifest version 5" in verified.out
    assert "stable: 1.4.0 (linux-x86_64) revoked" in verified.out
    assert "1 bundle downloaded and checked" in verified.out


def test_each_platform_is_published_on_its_own_and_joins_the_same_release(
    tmp_path: Path, keys: Keys, site: Path
) -> None:
    linux = _bundle(tmp_path)
    mac = _bundle(tmp_path, platform="darwin-arm64")
    assert cli("publish", linux, *keys.site(site), *NEW).code == 0
    added = cli("publish", mac, *keys.site(site))
    assert added.out == "added darwin-arm64 to 1.4.0 on beta: manifest version 3\n"
    assert set(site_manifest(site, keys).channels["beta"][0].bundles) == {"linux-x86_64", "darwin-arm64"}
    again = cli("publish", linux, mac, *keys.site(site))
    assert again.out == "1.4.0 (darwin-arm64, linux-x86_64) is already published on beta (0 uploaded)\n"
    assert site_manifest(site, keys).manifest_version == 3  # a re-run changes nothing


def test_a_published_bundle_is_never_replaced(tmp_path: Path, keys: Keys, site: Path) -> None:
    assert cli("publish", _bundle(tmp_path), *keys.site(site), *NEW).code == 0
    before = _snapshot(site)
    rebuilt = _bundle(tmp_path / "again", extra=b"different")
    result = cli("publish", rebuilt, *keys.site(site))
    _refused(
        before,
        site,
        result,
        "already has a different linux-x86_64 bundle; a published bundle is never replaced",
    )


def test_a_release_changed_by_publish_is_refused(tmp_path: Path, keys: Keys, site: Path) -> None:
    assert cli("publish", _bundle(tmp_path), *keys.site(site), *NEW).code == 0
    before = _snapshot(site)
    mac = _bundle(tmp_path, platform="darwin-arm64")
    result = cli("publish", mac, *keys.site(site), "--protocol", ">=2")
    _refused(before, site, result, "1.4.0 on beta already has --protocol '>=1.0,<2'")


# ---------------------------------------------------------------- keys: rotation and revocation


def test_a_revoked_release_key_signs_nothing_more_and_a_new_key_takes_over(
    tmp_path: Path, keys: Keys, site: Path
) -> None:
    assert cli("publish", _bundle(tmp_path), *keys.site(site), *NEW).code == 0
    old_manifest = (site / "manifest.json").read_bytes()
    roots = ["--root-key", keys.root[0], "--root-key", keys.root[2]]
    base = ["revoke", "key", "--site", site, "--roots", keys.roots, "--key-id", keys.release_id, *roots]

    # Revoking the key that signed the manifest, without a new key to re-sign it, would break it.
    before = _snapshot(site)
    _refused(before, site, cli(*base), "the delegation would hold no release key")
    other_pub = keys.other.with_suffix(".pub")
    _refused(before, site, cli(*base, "--add-key", other_pub), "give --release-key to re-sign it")

    rotated = cli(*base, "--add-key", other_pub, "--release-key", keys.other)
    assert rotated.code == 0, rotated.err
    assert f"revoked release key {keys.release_id}: delegation version 2" in rotated.out
    assert site_manifest(site, keys).channels["beta"][0].runtime_version == "1.4.0"

    # The old key is refused by the tooling, even for a change that would write nothing…
    before = _snapshot(site)
    stale = cli("rollout", *keys.site(site), "--channel", "beta", "--version", "1.4.0", "--percent", "100")
    _refused(before, site, stale, f"release key {keys.release_id} is revoked")
    # …and by desktops: an old manifest signed by it, replayed with the new delegation, fails.
    replay = json.loads((site / "manifest.json").read_bytes())
    replay["manifest"] = json.loads(old_manifest)["manifest"]
    with pytest.raises(ReleaseVerificationError) as caught:
        verify_release_document(json.dumps(replay).encode(), keys.root_set(), now=datetime.now(UTC))
    assert caught.value.code == "revoked_key"
    # The new key works.
    other = ["--site", site, "--roots", keys.roots, "--release-key", keys.other]
    assert cli("rollout", *other, "--channel", "beta", "--version", "1.4.0", "--percent", "30").code == 0


def test_the_delegation_needs_the_threshold_of_pinned_roots(tmp_path: Path, keys: Keys) -> None:
    site = tmp_path / "site"
    common = ["sign", "delegation", *keys.site(site), "--add-key", keys.release.with_suffix(".pub")]
    one = cli(*common, "--root-key", keys.root[0])
    assert one.err == "cowork-release: error: 2 distinct root keys must sign the delegation; 1 given\n"
    same_twice = cli(*common, "--root-key", keys.root[0], "--root-key", keys.root[0])
    assert "1 given" in same_twice.err
    stranger = tmp_path / "stranger"
    assert cli("keygen", "root", "--out", stranger, "--count", "1", "--threshold", "1").code == 0
    foreign = cli(*common, "--root-key", keys.root[0], "--root-key", stranger / "root-1.key")
    assert "is not one of the pinned root keys" in foreign.err
    undelegated = cli(
        "sign", "delegation", *keys.site(site), "--root-key", keys.root[0], "--root-key", keys.root[1]
    )
    assert "the delegation would hold no release key" in undelegated.err
    assert not site.exists()


def test_a_release_key_outside_the_delegation_cannot_publish(tmp_path: Path, keys: Keys, site: Path) -> None:
    before = _snapshot(site)
    other = ["--site", site, "--roots", keys.roots, "--release-key", keys.other]
    result = cli("publish", _bundle(tmp_path), *other, *NEW)
    _refused(before, site, result, "is not delegated")
    assert not (site / "bundles").exists()  # checked before any upload


# ---------------------------------------------------------------- expiry


def test_an_expired_manifest_is_renewed_by_sign_manifest(
    keys: Keys, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    later = datetime.now(UTC) + timedelta(days=31)
    monkeypatch.setattr(cli_module, "_now", lambda: later)
    stale = cli("verify", "--site", site, "--roots", keys.roots)
    assert stale.code == 1
    assert "manifest_expired" in stale.err
    renewed = cli("sign", "manifest", *keys.site(site), "--expires-days", "7")
    assert renewed.out == "signed the manifest: manifest version 2\n"
    assert cli("verify", "--site", site, "--roots", keys.roots).code == 0
    expires = site_manifest(site, keys).expires_at
    assert later + timedelta(days=6) < expires <= later + timedelta(days=7)


def test_an_expired_delegation_is_renewed_by_the_roots(
    keys: Keys, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    later = datetime.now(UTC) + timedelta(days=400)
    monkeypatch.setattr(cli_module, "_now", lambda: later)
    assert "delegation_expired" in cli("verify", "--site", site, "--roots", keys.roots).err
    before = _snapshot(site)
    _refused(before, site, cli("sign", "manifest", *keys.site(site)), "expired")
    assert keys.delegate(site).code == 0
    assert "valid — manifest version 2" in cli("verify", "--site", site, "--roots", keys.roots).out


# ---------------------------------------------------------------- what the tooling will not build on


def test_a_manifest_edited_on_the_server_is_not_signed_over(tmp_path: Path, keys: Keys, site: Path) -> None:
    assert cli("publish", _bundle(tmp_path), *keys.site(site), *NEW, "--rollout", "10").code == 0
    wire = json.loads((site / "manifest.json").read_bytes())
    wire["manifest"]["signed"]["channels"]["beta"][0]["bundles"]["linux-x86_64"]["url"] = (
        "https://evil.example/x"
    )
    (site / "manifest.json").write_text(json.dumps(wire))
    before = _snapshot(site)
    result = cli("rollout", *keys.site(site), "--channel", "beta", "--version", "1.4.0", "--percent", "100")
    _refused(before, site, result, "does not verify against the root keys (bad_signature")
    verified = cli("verify", "--site", site, "--roots", keys.roots)
    assert verified.code == 1
    assert "bad_signature" in verified.err


def test_a_bundle_changed_on_the_server_fails_the_bundle_check(
    tmp_path: Path, keys: Keys, site: Path
) -> None:
    assert cli("publish", _bundle(tmp_path), *keys.site(site), *NEW).code == 0
    published = site / "bundles" / "agent-runtime-1.4.0-linux-x86_64.tar.gz"
    data = bytearray(published.read_bytes())
    data[-1] ^= 1  # one bit of the gzip trailer
    published.write_bytes(bytes(data))
    result = cli("verify", "--site", site, "--roots", keys.roots, "--check-bundles")
    assert result.code == 1
    assert "does not match the SHA-256 and size the manifest declares" in result.err


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _forged(tmp_path: Path, change: str) -> Path:
    """A bundle whose list is honest about the runtime but whose members are not."""
    good = _bundle(tmp_path)
    with tarfile.open(good, "r:gz") as tar:
        members = [(m, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]  # type: ignore[union-attr]
    if change == "dotdot":
        info = tarfile.TarInfo("agent-runtime/../evil")
        info.size = 1
        members.append((info, b"x"))
    elif change == "absolute":
        info = tarfile.TarInfo("/etc/evil")
        info.size = 1
        members.append((info, b"x"))
    elif change == "symlink":
        info = tarfile.TarInfo("agent-runtime/_internal/link")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        members.append((info, None))
    elif change == "tampered":
        index = next(i for i, (m, _) in enumerate(members) if m.name == "agent-runtime/agent-runtime")
        info, data = members[index]
        members[index] = (info, (data or b"").replace(b"frozen", b"hacked"))
    elif change == "missing":
        members = [(m, d) for m, d in members if m.name != "agent-runtime/_internal/lib/empty.txt"]
    elif change == "list-not-first":
        members.append(members.pop(0))
    elif change == "device":
        info = tarfile.TarInfo("agent-runtime/_internal/null")
        info.type = tarfile.CHRTYPE
        members.append((info, None))
    forged = tmp_path / "forged" / good.name
    forged.parent.mkdir(exist_ok=True)
    return _tar(forged, members)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ("dotdot", "is outside agent-runtime/"),
        ("absolute", "is outside agent-runtime/"),
        ("symlink", "is not a regular file"),
        ("tampered", "does not match its SHA-256"),
        ("missing", "listed files are missing"),
        ("list-not-first", "its first member must be cowork-files.json"),
        ("device", "is not a regular file"),
    ],
)
def test_publish_refuses_a_bundle_that_breaks_its_file_list(
    tmp_path: Path, keys: Keys, site: Path, change: str, words: str
) -> None:
    before = _snapshot(site)
    result = cli("publish", _forged(tmp_path, change), *keys.site(site), *NEW)
    _refused(before, site, result, words)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (
            ["rollout", "--channel", "nightly", "--version", "1", "--percent", "5"],
            2,
            "must be one of stable, beta",
        ),
        (["rollout", "--channel", "beta", "--version", "1", "--percent", "101"], 2, "from 0 to 100"),
        (["rollout", "--channel", "beta", "--version", "9.9", "--percent", "5"], 1, "9.9 is not on beta"),
        (["promote", "--version", "9.9"], 1, "9.9 is not on beta"),
        (["revoke", "release"], 2, "revoke release needs --version"),
        (["revoke", "release", "--version", "9.9"], 1, "9.9 is not on any channel"),
        (["sign", "manifest", "--expires-days", "0"], 2, "above 0"),
        (["sign", "manifest", "--root-key", "x"], 2, "takes no --root-key"),
    ],
)
def test_bad_input_gets_one_clear_line_and_nothing_is_written(
    keys: Keys, site: Path, args: list[str], code: int, words: str
) -> None:
    before = _snapshot(site)
    result = cli(*args, *keys.site(site))
    assert result.code == code, result
    assert words in result.err
    assert result.err.startswith("cowork-release: error: ")
    assert result.err.count("\n") == 1, result.err  # usage errors too: no usage dump
    assert _snapshot(site) == before


def test_the_site_roots_and_key_may_come_from_the_environment(keys: Keys, site: Path) -> None:
    env = {
        **os.environ,
        "COWORK_RELEASE_SITE": str(site),
        "COWORK_RELEASE_ROOTS": str(keys.roots),
        "COWORK_RELEASE_KEY": str(keys.release),
    }
    assert "valid — manifest version 1" in cli_process("verify", env=env).out
    assert cli_process("sign", "manifest", env=env).out == "signed the manifest: manifest version 2\n"
    missing = cli_process("verify", env={k: v for k, v in env.items() if k != "COWORK_RELEASE_ROOTS"})
    assert (missing.code, missing.err) == (
        1,
        "cowork-release: error: --roots is required (or set COWORK_RELEASE_ROOTS)\n",
    )


def test_a_site_without_a_manifest_is_started_by_the_delegation(tmp_path: Path, keys: Keys) -> None:
    empty = tmp_path / "empty"
    result = cli("publish", _bundle(tmp_path), *keys.site(empty), *NEW)
    assert result.err.endswith(
        f"{empty} has no manifest yet: start it with `cowork-release sign delegation`\n"
    )
    assert not (empty / "bundles").exists()


# ---------------------------------------------------------------- the directory site's writes


def test_a_failed_write_leaves_the_old_manifest_whole(
    keys: Keys, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _snapshot(site)

    def crash(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    result = cli("sign", "manifest", *keys.site(site))
    assert (
        result.err
        == f"cowork-release: error: cannot write {site / 'manifest.json'}: No space left on device\n"
    )
    assert _snapshot(site) == before
    assert [p.name for p in site.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_a_manifest_changed_during_an_edit_is_not_overwritten(site: Path) -> None:
    directory = DirectorySite(site)
    seen = directory.read_manifest()
    (site / "manifest.json").write_text((site / "manifest.json").read_text() + " ")  # someone else's edit
    with pytest.raises(ReleaseError, match="changed while this command ran"):
        directory.write_manifest(b"{}", replacing=seen)
    with pytest.raises(ReleaseError, match="changed while this command ran"):
        directory.write_manifest(b"{}", replacing=None)  # "create" when one exists
