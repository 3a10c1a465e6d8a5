"""``cowork-release``: build, package, sign and publish agent-runtime bundles; manage the manifest.

Every command runs without prompts (CI-friendly), prints one line saying what it did, and on bad
input prints one ``cowork-release: error: …`` line and exits 1 (2 for a usage error) having written
nothing. ``--site``, ``--roots`` and ``--release-key`` may come from ``COWORK_RELEASE_SITE``,
``COWORK_RELEASE_ROOTS`` and ``COWORK_RELEASE_KEY``; a key passphrase is read from the environment
variable ``--passphrase-env`` names, never from a prompt or the command line.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NoReturn
from urllib.parse import urljoin

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from contracts.release import (
    CHANNELS,
    PLATFORMS,
    BundleRef,
    Platform,
    ReleaseDocument,
    ReleaseManifest,
    ReleaseVerificationError,
    RootKeySet,
    current_platform,
    verify_release_document,
)
from cowork_release import edits
from cowork_release.app import DEFAULT_APP_SPEC, build_app
from cowork_release.buildinfo import read_build_info
from cowork_release.bundle import file_sha256, inspect_bundle, package
from cowork_release.errors import ReleaseError
from cowork_release.freeze import DEFAULT_OUT, DEFAULT_SPEC, freeze
from cowork_release.keys import (
    generate_release_key,
    generate_root_keys,
    load_private_key,
    load_public_key,
    load_root_set,
)
from cowork_release.sites import BUNDLE_DIR, Site, open_site

__all__ = ["main"]

PROG = "cowork-release"
EXIT_ERROR = 1
EXIT_USAGE = 2


# ---------------------------------------------------------------- argument types


def _percent(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 100:
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to 100, not {text!r}")
    return int(text)


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return int(text)


def _days(text: str) -> timedelta:
    try:
        days = float(text)
    except ValueError:
        days = -1.0
    if not 0 < days <= 3650:
        raise argparse.ArgumentTypeError(f"must be a number of days above 0 and at most 3650, not {text!r}")
    return timedelta(days=days)


def _choice(values: Sequence[str]) -> Callable[[str], str]:
    def check(text: str) -> str:
        if text not in values:
            raise argparse.ArgumentTypeError(f"must be one of {', '.join(values)}, not {text!r}")
        return text

    return check


# ---------------------------------------------------------------- shared options


def _passphrase(args: argparse.Namespace) -> bytes | None:
    name: str | None = args.passphrase_env
    if name is None:
        return None
    value = os.environ.get(name)
    if not value:
        raise ReleaseError(f"--passphrase-env names {name}, which is not set")
    return value.encode("utf-8")


def _required(args: argparse.Namespace, attribute: str, flag: str, variable: str) -> str:
    value: str | None = getattr(args, attribute) or os.environ.get(variable) or None
    if value is None:
        raise ReleaseError(f"{flag} is required (or set {variable})")
    return value


def _site(args: argparse.Namespace) -> Site:
    return open_site(_required(args, "site", "--site", "COWORK_RELEASE_SITE"))


def _roots(args: argparse.Namespace) -> RootKeySet:
    return load_root_set(Path(_required(args, "roots", "--roots", "COWORK_RELEASE_ROOTS")))


def _release_key(args: argparse.Namespace) -> Ed25519PrivateKey:
    path = _required(args, "release_key", "--release-key", "COWORK_RELEASE_KEY")
    return load_private_key(Path(path), _passphrase(args))


def _now() -> datetime:
    return datetime.now(UTC)


def _add_site(parser: argparse.ArgumentParser, *, signing: bool = True) -> None:
    parser.add_argument("--site", help="a directory, s3://bucket/prefix (or, to verify, an http(s) URL)")
    parser.add_argument("--roots", help="the pinned root key set, root-keys.json")
    if signing:
        parser.add_argument("--release-key", help="the release signing key (a .key file)")
        parser.add_argument(
            "--expires-days", type=_days, default=timedelta(days=30), help="manifest lifetime (default 30)"
        )
        parser.add_argument(
            "--passphrase-env", metavar="VAR", help="environment variable holding the key passphrase"
        )


# ---------------------------------------------------------------- commands


def _keygen(args: argparse.Namespace) -> str:
    if args.kind == "root":
        generated, set_path = generate_root_keys(
            Path(args.out), count=args.count, threshold=args.threshold, passphrase=_passphrase(args)
        )
        ids = ", ".join(key.key_id for key in generated)
        return f"wrote {len(generated)} root keys ({ids}) and {set_path} (threshold {args.threshold})"
    key = generate_release_key(Path(args.out), passphrase=_passphrase(args))
    return f"wrote release key {key.key_id}: {key.private_path} and {key.public_path}"


def _build(args: argparse.Namespace) -> str:
    frozen = freeze(Path(args.spec), Path(args.out))
    info = read_build_info(frozen.dist) or {}
    return f"built {frozen.dist} (from {info.get('lockFile')}, sha256 {info.get('lockSha256')})"


def _app(args: argparse.Namespace) -> str:
    if args.channel is not None and args.manifest_url is None:
        raise ReleaseError("--channel needs --manifest-url (without it the app checks for no updates)")
    built = build_app(
        Path(args.runtime_bundle),
        Path(args.out),
        spec=Path(args.spec),
        manifest_url=args.manifest_url,
        channel=args.channel or "stable",
    )
    runtime = built.runtime.files
    lines = [
        f"built {built.app} (Cowork {built.version}, runtime {runtime.runtime_version} {runtime.platform})"
    ]
    if built.update_config is not None:
        lines.append(f"wrote {built.update_config}")
    if built.tarball is not None:
        size = built.tarball.stat().st_size
        lines.append(f"wrote {built.tarball} ({size:,} bytes, sha256 {file_sha256(built.tarball)})")
    return "\n".join(lines)


def _package(args: argparse.Namespace) -> str:
    platform = args.platform or current_platform()
    if platform is None:
        raise ReleaseError("this machine is not a bundle platform: say which with --platform")
    info = package(Path(args.dist), runtime_version=args.version, platform=platform, out_dir=Path(args.out))
    return f"wrote {info.path} ({info.size:,} bytes, {len(info.files.files)} files, sha256 {info.sha256})"


def _edit(
    args: argparse.Namespace,
    change: Callable[[ReleaseManifest, datetime], edits.Change],
    *,
    upload: Callable[[Site], int] | None = None,
) -> str:
    """The common path of every manifest edit (edits' docstring): read, verify, change, seal, write.
    ``upload`` (publish) puts the bundles on the site once the change is sealed, before the manifest
    that names them is written; how many it uploaded is told when the manifest stays as it was."""
    site, roots, key = _site(args), _roots(args), _release_key(args)
    now = _now()
    stored = site.read_manifest()
    document = edits.load_published(stored, roots, now=now, where=site.location)
    if document is None:
        raise ReleaseError(f"{site.location} has no manifest yet: start it with `{PROG} sign delegation`")
    edits.check_signer(document.delegation.signed, key, now=now)
    result = change(document.manifest.signed, now)
    data = edits.seal(document.delegation, result.manifest, key, roots, now=now) if result.manifest else None
    uploaded = "" if upload is None else f" ({upload(site)} uploaded)"
    if data is None or result.manifest is None:
        return result.summary + uploaded
    site.write_manifest(data, replacing=stored)
    return f"{result.summary}: manifest version {result.manifest.manifest_version}"


def _publish(args: argparse.Namespace) -> str:
    bundles = [inspect_bundle(Path(path)) for path in args.bundles]
    versions = {info.files.runtime_version for info in bundles}
    if len(versions) != 1:
        raise ReleaseError(f"the bundles are of different versions: {', '.join(sorted(versions))}")
    platforms = [info.files.platform for info in bundles]
    if len(set(platforms)) != len(platforms):
        raise ReleaseError("two bundles are for the same platform")
    notes = args.notes
    if args.notes_file is not None:
        try:
            notes = Path(args.notes_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ReleaseError(f"cannot read --notes-file {args.notes_file}: {exc}") from None
    refs: dict[Platform, BundleRef] = {}
    for info in bundles:
        relative = f"{BUNDLE_DIR}/{info.path.name}"
        url = urljoin(args.base_url.rstrip("/") + "/", relative) if args.base_url else relative
        refs[info.files.platform] = BundleRef(url=url, sha256=info.sha256, size=info.size)
    fields = edits.ReleaseFields(
        protocol_versions=args.protocol,
        min_desktop_version=args.min_desktop,
        release_notes=notes,
        rollout_percent=args.rollout,
    )
    version = versions.pop()
    return _edit(
        args,
        lambda manifest, now: edits.add_bundles(
            manifest, args.channel, version, refs, fields, now=now, expires=args.expires_days
        ),
        # Bundles first: the manifest never names a bundle that is not there yet.
        upload=lambda site: sum(site.put_bundle(info.path, info.sha256) for info in bundles),
    )


def _sign_delegation(args: argparse.Namespace, revoke: Sequence[str] = ()) -> str:
    site, roots = _site(args), _roots(args)
    passphrase = _passphrase(args)
    if not args.root_key:
        raise ReleaseError("--root-key is required (once per root key signing)")
    root_keys = [load_private_key(Path(path), passphrase) for path in args.root_key]
    added = [load_public_key(Path(path)) for path in getattr(args, "add_key", None) or []]
    release_key = _release_key(args) if args.release_key or os.environ.get("COWORK_RELEASE_KEY") else None
    now = _now()
    stored = site.read_manifest()
    document = edits.load_published(stored, roots, now=now, where=site.location)
    previous = document.delegation.signed if document else None
    delegation = edits.delegate(
        previous,
        roots,
        root_keys,
        add=added,
        revoke=revoke,
        key_expires=args.key_expires_days,
        expires=args.delegation_expires_days,
        now=now,
    )
    if document is None:
        if release_key is None:
            raise ReleaseError(
                "the site has no manifest yet: give --release-key to sign the first, empty one"
            )
        manifest = edits.empty_manifest(now=now, expires=args.expires_days)
        data = edits.seal(delegation, manifest, release_key, roots, now=now)
    elif release_key is None:
        # The manifest keeps its signature; the result must still verify (a revoked signer will not).
        unchanged = ReleaseDocument(delegation=delegation, manifest=document.manifest)
        data = (unchanged.model_dump_json(by_alias=True, exclude_none=True, indent=2) + "\n").encode()
        manifest = document.manifest.signed
        try:
            verify_release_document(data, roots, now=now)
        except ReleaseVerificationError as exc:
            raise ReleaseError(
                f"the manifest would no longer verify ({exc}): give --release-key to re-sign it; "
                "nothing was written"
            ) from None
    else:
        manifest = edits.renew(document.manifest.signed, now=now, expires=args.expires_days)
        data = edits.seal(delegation, manifest, release_key, roots, now=now)
    site.write_manifest(data, replacing=stored)
    what = f"revoked release key {', '.join(revoke)}" if revoke else "signed the release key delegation"
    keys = ", ".join(key.key_id for key in delegation.signed.keys)
    return (
        f"{what}: delegation version {delegation.signed.version} (keys {keys}), "
        f"manifest version {manifest.manifest_version}"
    )


def _sign(args: argparse.Namespace) -> str:
    if args.what == "delegation":
        return _sign_delegation(args)
    return _edit(
        args,
        lambda manifest, now: edits.Change(
            edits.renew(manifest, now=now, expires=args.expires_days), "signed the manifest"
        ),
    )


def _promote(args: argparse.Namespace) -> str:
    return _edit(
        args, lambda m, now: edits.promote(m, args.version, args.rollout, now=now, expires=args.expires_days)
    )


def _rollout(args: argparse.Namespace) -> str:
    return _edit(
        args,
        lambda m, now: edits.set_rollout(
            m, args.channel, args.version, args.percent, now=now, expires=args.expires_days
        ),
    )


def _revoke(args: argparse.Namespace) -> str:
    if args.what == "key":
        return _sign_delegation(args, revoke=[args.key_id])
    return _edit(
        args,
        lambda m, now: edits.revoke_release(
            m, args.version, args.channel, now=now, expires=args.expires_days
        ),
    )


def _describe(manifest: ReleaseManifest) -> list[str]:
    lines = []
    for channel in CHANNELS:
        for release in reversed(manifest.channels.get(channel, [])):
            state = "revoked" if release.revoked else f"{release.rollout_percent}%"
            platforms = ", ".join(sorted(release.bundles))
            lines.append(f"  {channel}: {release.runtime_version} ({platforms}) {state}")
    return lines or ["  no releases"]


def _check_bundles(site: Site, manifest: ReleaseManifest) -> int:
    checked: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="cowork-release-") as scratch:
        for release in (r for releases in manifest.channels.values() for r in releases):
            for platform, ref in release.bundles.items():
                if ref.url in checked:
                    continue
                target = Path(scratch) / Path(ref.url).name
                site.fetch(ref.url, target, limit=ref.size)
                if (file_sha256(target), target.stat().st_size) != (ref.sha256, ref.size):
                    raise ReleaseError(f"{ref.url} does not match the SHA-256 and size the manifest declares")
                info = inspect_bundle(target)
                if (info.files.runtime_version, info.files.platform) != (release.runtime_version, platform):
                    raise ReleaseError(
                        f"{ref.url} holds {info.files.runtime_version} for {info.files.platform}"
                    )
                target.unlink()
                checked.add(ref.url)
    return len(checked)


def _verify(args: argparse.Namespace) -> str:
    site, roots = _site(args), _roots(args)
    stored = site.read_manifest()
    if stored is None:
        raise ReleaseError(f"{site.location} has no manifest")
    try:
        manifest = verify_release_document(stored.data, roots, now=_now())
    except ReleaseVerificationError as exc:
        raise ReleaseError(f"{site.location}: {exc.code}: {exc}") from None
    document = ReleaseDocument.model_validate_json(stored.data)
    delegation = document.delegation.signed
    lines = [
        f"{site.location}: valid — manifest version {manifest.manifest_version}, "
        f"expires {manifest.expires_at.isoformat()}; delegation version {delegation.version}, "
        f"expires {delegation.expires_at.isoformat()}, release keys "
        f"{', '.join(key.key_id for key in delegation.keys)}"
        + (f", revoked {', '.join(delegation.revoked_key_ids)}" if delegation.revoked_key_ids else ""),
        *_describe(manifest),
    ]
    if args.check_bundles:
        count = _check_bundles(site, manifest)
        noun = "bundle" if count == 1 else "bundles"
        lines.append(f"  {count} {noun} downloaded and checked: SHA-256, size and every file")
    return "\n".join(lines)


# ---------------------------------------------------------------- the parser


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line too (argparse would print the whole usage first), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{PROG}: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    keygen = commands.add_parser("keygen", help="create root keys or a release signing key")
    keygen.add_argument("kind", type=_choice(["root", "release"]), help="root or release")
    keygen.add_argument("--out", required=True, help="root: a directory; release: the NAME.key file")
    keygen.add_argument("--count", type=_positive_int, default=3, help="root keys to create (default 3)")
    keygen.add_argument(
        "--threshold", type=_positive_int, default=2, help="root signatures required (default 2)"
    )
    keygen.add_argument(
        "--passphrase-env", metavar="VAR", help="encrypt with the passphrase in this variable"
    )
    keygen.set_defaults(run=_keygen)

    build = commands.add_parser("build", help="freeze the runtime with PyInstaller (onedir)")
    build.add_argument("--spec", default=str(DEFAULT_SPEC), help="the PyInstaller spec")
    build.add_argument("--out", default=str(DEFAULT_OUT), help="work and dist directories go here")
    build.set_defaults(run=_build)

    pack = commands.add_parser(
        "package", help="pack the onedir tree into agent-runtime-VERSION-PLATFORM.tar.gz"
    )
    pack.add_argument("--dist", default=str(DEFAULT_OUT / "dist" / "agent-runtime"), help="the onedir tree")
    pack.add_argument("--version", required=True, help="the runtime version (PEP 440)")
    pack.add_argument("--platform", type=_choice(PLATFORMS), help="default: this machine's")
    pack.add_argument("--out", default=str(DEFAULT_OUT / "bundles"), help="directory for the bundle")
    pack.set_defaults(run=_package)

    app = commands.add_parser(
        "app", help="build the desktop app (PyInstaller) with a runtime bundle inside; on Linux, its tarball"
    )
    app.add_argument("--runtime-bundle", required=True, help="agent-runtime-VERSION-PLATFORM.tar.gz to ship")
    app.add_argument("--out", required=True, help="directory for Cowork/ (Cowork.app) and the tarball")
    app.add_argument("--manifest-url", help="the release manifest the app checks for runtime updates")
    app.add_argument("--channel", type=_choice(CHANNELS), help="stable or beta (default stable)")
    app.add_argument("--spec", default=str(DEFAULT_APP_SPEC), help="the PyInstaller spec of the app")
    app.set_defaults(run=_app)

    sign = commands.add_parser("sign", help="sign the release key delegation (root keys) or the manifest")
    sign.add_argument("what", type=_choice(["delegation", "manifest"]), help="delegation or manifest")
    _add_site(sign)
    _add_delegation_options(sign, adding="to delegate or renew")
    sign.set_defaults(run=_sign)

    publish = commands.add_parser("publish", help="upload bundles and add their release to a channel")
    publish.add_argument("bundles", nargs="+", help="bundle files of one version")
    _add_site(publish)
    publish.add_argument(
        "--channel", type=_choice(CHANNELS), default="beta", help="stable or beta (default beta)"
    )
    publish.add_argument("--protocol", help="JSON-RPC protocol range the runtime speaks, e.g. '>=1.0,<2'")
    publish.add_argument("--min-desktop", help="the oldest desktop version the runtime works with")
    notes = publish.add_mutually_exclusive_group()
    notes.add_argument("--notes", help="release notes")
    notes.add_argument("--notes-file", help="release notes from a UTF-8 file")
    publish.add_argument(
        "--rollout", type=_percent, help="percentage of installs offered it (new release: 100)"
    )
    publish.add_argument("--base-url", help="absolute bundle URLs under this base instead of relative ones")
    publish.set_defaults(run=_publish)

    verify = commands.add_parser("verify", help="verify a published manifest against the root keys")
    _add_site(verify, signing=False)
    verify.add_argument("--check-bundles", action="store_true", help="also download and check every bundle")
    verify.set_defaults(run=_verify)

    promote = commands.add_parser("promote", help="offer a beta release on stable")
    _add_site(promote)
    promote.add_argument("--version", required=True, help="the runtime version")
    promote.add_argument("--rollout", type=_percent, help="percentage on stable (default: beta's)")
    promote.set_defaults(run=_promote)

    rollout = commands.add_parser("rollout", help="set the percentage of installs a release is offered to")
    _add_site(rollout)
    rollout.add_argument("--channel", type=_choice(CHANNELS), required=True, help="stable or beta")
    rollout.add_argument("--version", required=True, help="the runtime version")
    rollout.add_argument("--percent", type=_percent, required=True, help="0 to 100")
    rollout.set_defaults(run=_rollout)

    revoke = commands.add_parser("revoke", help="revoke a release, or a release signing key")
    revoke.add_argument("what", type=_choice(["release", "key"]), help="release or key")
    _add_site(revoke)
    revoke.add_argument("--version", help="release: the runtime version")
    revoke.add_argument("--channel", type=_choice(CHANNELS), help="release: only on this channel")
    revoke.add_argument("--key-id", help="key: the release key's id")
    _add_delegation_options(revoke, adding="to delegate instead", scope="key: ")
    revoke.set_defaults(run=_revoke)
    return parser


def _add_delegation_options(parser: argparse.ArgumentParser, *, adding: str, scope: str = "") -> None:
    """What signs a release key delegation (``sign delegation``, ``revoke key``): the root keys, and
    the release keys it adds; ``scope`` starts each help text (the subcommand's form it applies to)."""
    parser.add_argument(
        "--root-key", action="append", help=f"{scope}a root private key (repeat up to the threshold)"
    )
    parser.add_argument("--add-key", action="append", help=f"{scope}a release public key (.pub) {adding}")
    parser.add_argument(
        "--key-expires-days",
        type=_days,
        default=timedelta(days=365),
        help=f"{scope}added keys' lifetime (default 365)",
    )
    parser.add_argument(
        "--delegation-expires-days",
        type=_days,
        default=timedelta(days=365),
        help=f"{scope}delegation lifetime (default 365)",
    )


def _check_combinations(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.command == "revoke":
        needed = "--version" if args.what == "release" else "--key-id"
        if getattr(args, needed[2:].replace("-", "_")) is None:
            parser.error(f"revoke {args.what} needs {needed}")
    if args.command == "sign" and args.what == "manifest" and (args.root_key or args.add_key):
        parser.error("sign manifest takes no --root-key or --add-key (those sign the delegation)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    _check_combinations(parser, args)
    try:
        print(args.run(args))
    except ReleaseError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
