"""``cowork-release app`` without PyInstaller: what it refuses before building, how it unpacks the
runtime bundle into the app, how it packs the Linux tarball, and the app's names, metadata and Qt
selection (``cowork_release.appinfo``, ``qt_trim``). The real build is test_linux_package's."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from contracts.release import PLATFORMS, Platform, current_platform
from cowork_release import appinfo
from cowork_release.app import _unpack_runtime, check_manifest_url, pack_linux_app, reseal_ad_hoc
from cowork_release.bundle import inspect_bundle, package
from cowork_release.errors import ReleaseError
from cowork_release.qt_trim import keep_qt_entry, keep_qt_file, trim_binaries
from desktop.launch.child import CLI_PROGRAM
from desktop.updater.active import BUNDLED_DIR_NAME, UPDATE_CONFIG_NAME, app_resources_dir
from tests.build.support import cli, fake_dist

THIS_PLATFORM: Platform = current_platform() or "linux-x86_64"
OTHER_PLATFORM: Platform = next(p for p in PLATFORMS if p != THIS_PLATFORM)


def bundle_for(tmp_path: Path, platform: Platform, name: str = "dist", extra: bytes = b"") -> Path:
    tree = fake_dist(tmp_path / name, {"_internal/extra.txt": extra} if extra else None)
    if platform == "windows-x64":
        tree.joinpath("agent-runtime").rename(tree / "agent-runtime.exe")
    return package(tree, runtime_version="1.2.3", platform=platform, out_dir=tmp_path / f"{name}-out").path


# ---------------------------------------------------------------- refused before anything is built


def test_a_runtime_bundle_for_another_platform_is_refused_before_building(tmp_path: Path) -> None:
    if current_platform() is None:
        pytest.skip("this machine builds no app")
    bundle = bundle_for(tmp_path, OTHER_PLATFORM)
    result = cli("app", "--runtime-bundle", bundle, "--out", tmp_path / "out", "--spec", tmp_path / "no.spec")
    assert result.code == 1
    assert result.err == (
        f"cowork-release: error: {bundle.name} is a {OTHER_PLATFORM} runtime; this machine builds the "
        f"{THIS_PLATFORM} app (PyInstaller does not cross-compile)\n"
    )
    assert not (tmp_path / "out").exists()


def test_a_damaged_or_missing_runtime_bundle_is_refused(tmp_path: Path) -> None:
    if current_platform() is None:
        pytest.skip("this machine builds no app")
    bundle = bundle_for(tmp_path, THIS_PLATFORM)
    damaged = tmp_path / "damaged" / bundle.name
    damaged.parent.mkdir()
    data = bytearray(bundle.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    for path, problem in ((damaged, "is not a valid bundle"), (tmp_path / "none.tar.gz", "does not exist")):
        result = cli("app", "--runtime-bundle", path, "--out", tmp_path / "out")
        assert result.code == 1
        assert result.err.startswith("cowork-release: error: ")
        assert problem in result.err
        assert result.err.count("\n") == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://releases.example.com/manifest.json", "must be https (http only for this machine"),
        ("ftp://releases.example.com/manifest.json", "must be https"),
        ("file:///etc/manifest.json", "names no host"),
        ("https://user:secret@releases.example.com/m.json", "must not carry credentials"),
        ("https://releases.example.com/a b.json", "must not contain spaces"),
        ("https://releases.example.com:https/m.json", "is not a URL"),
        ("http://127.0.0.1.example.com/m.json", "must be https"),
    ],
)
def test_an_update_url_installed_apps_should_not_fetch_is_refused(
    tmp_path: Path, url: str, problem: str
) -> None:
    bundle = bundle_for(tmp_path, THIS_PLATFORM)
    result = cli("app", "--runtime-bundle", bundle, "--out", tmp_path / "out", "--manifest-url", url)
    assert result.code == 1
    assert result.err.startswith("cowork-release: error: --manifest-url ")
    assert problem in result.err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "url",
    [
        "https://releases.example.com/agent-runtime/manifest.json",
        "http://127.0.0.1:8123/manifest.json",
        "http://127.8.9.10/manifest.json",
        "http://[::1]:8123/manifest.json",
        "http://localhost:8123/manifest.json",
    ],
)
def test_https_or_a_loopback_test_site_is_accepted(url: str) -> None:
    assert check_manifest_url(f" {url} ") == url


def test_a_channel_needs_an_update_url_and_must_be_known(tmp_path: Path) -> None:
    bundle = bundle_for(tmp_path, THIS_PLATFORM)
    result = cli("app", "--runtime-bundle", bundle, "--out", tmp_path / "out", "--channel", "beta")
    assert (result.code, result.err) == (
        1,
        "cowork-release: error: --channel needs --manifest-url (without it the app checks for no updates)\n",
    )
    unknown = cli("app", "--runtime-bundle", bundle, "--out", tmp_path / "out", "--channel", "nightly")
    assert unknown.code == 2
    assert "must be one of stable, beta, not 'nightly'" in unknown.err


# ---------------------------------------------------------------- the runtime inside the app


def test_the_runtime_is_unpacked_exactly_as_its_file_list_says(tmp_path: Path) -> None:
    # This machine's bundle: on Windows a file is executable by its name (.exe), so a Linux program
    # unpacked there could never match its list.
    bundle = inspect_bundle(bundle_for(tmp_path, THIS_PLATFORM))
    into = tmp_path / "Cowork" / "runtime"
    _unpack_runtime(bundle, into)
    assert sorted(p.relative_to(into).as_posix() for p in into.rglob("*") if p.is_file()) == sorted(
        ["cowork-files.json", *(f"agent-runtime/{name}" for name in bundle.files.files)]
    )
    program = into / "agent-runtime" / bundle.files.executable
    assert program.is_file()
    if os.name != "nt":
        assert os.access(program, os.X_OK)
        assert not os.access(into / "agent-runtime" / "_internal" / "base_library.zip", os.X_OK)


def test_a_bundle_swapped_after_it_was_checked_is_not_shipped(tmp_path: Path) -> None:
    """The archive is checked, then read again to unpack: what is unpacked must be what was checked."""
    checked = inspect_bundle(bundle_for(tmp_path, "linux-x86_64"))
    other = bundle_for(tmp_path, "linux-x86_64", name="other", extra=b"not what was checked")
    shutil.copyfile(other, checked.path)
    with pytest.raises(ReleaseError, match="changed while it was being unpacked"):
        _unpack_runtime(checked, tmp_path / "runtime")


def test_an_unpacked_file_that_differs_from_its_list_is_caught(tmp_path: Path) -> None:
    checked = inspect_bundle(bundle_for(tmp_path, "linux-x86_64"))
    with tarfile.open(checked.path, "r:gz") as tar:
        members = []
        for member in tar.getmembers():
            stream = tar.extractfile(member) if member.isreg() else None
            members.append((member, stream.read() if stream is not None else None))
    forged = io.BytesIO()
    with gzip.GzipFile(fileobj=forged, mode="wb") as zipped, tarfile.open(fileobj=zipped, mode="w") as tar:
        for member, content in members:
            if member.name == "agent-runtime/_internal/certifi/cacert.pem":
                content = b"-----BEGIN EVIL CERTIFICATE---\n"[: member.size]
            tar.addfile(member, io.BytesIO(content) if content is not None else None)
    checked.path.write_bytes(forged.getvalue())
    with pytest.raises(ReleaseError, match=r"the unpacked _internal/certifi/cacert\.pem does not match"):
        _unpack_runtime(checked, tmp_path / "runtime")


# ---------------------------------------------------------------- the Linux tarball


def app_tree(root: Path) -> Path:
    app = root / "Cowork"
    (app / "_internal" / "PySide6" / "Qt" / "lib").mkdir(parents=True)
    (app / "Cowork").write_bytes(b"\x7fELF program")
    (app / "cowork-cli").write_bytes(b"\x7fELF program")
    (app / "Cowork").chmod(0o755)
    (app / "cowork-cli").chmod(0o755)
    (app / "_internal" / "PySide6" / "Qt" / "lib" / "libQt6Core.so.6").write_bytes(b"qt core")
    (app / "_internal" / "libQt6Core.so.6").symlink_to("PySide6/Qt/lib/libQt6Core.so.6")
    (app / "update.json").write_text('{"manifestUrl": "https://example.com/m.json"}')
    return app


@pytest.mark.skipif(os.name == "nt", reason="the Linux tarball's modes and links are made on Linux")
def test_the_tarball_holds_the_tree_under_cowork_and_is_the_same_bytes_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    app = app_tree(tmp_path / "a")
    first = pack_linux_app(app, tmp_path / "first.tar.gz")
    os.utime(app / "update.json", (1, 1))  # file times do not leak into the archive
    second = pack_linux_app(app, tmp_path / "second.tar.gz")
    assert hashlib.sha256(first.read_bytes()).digest() == hashlib.sha256(second.read_bytes()).digest()

    with tarfile.open(first, "r:gz") as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert all(name == "Cowork" or name.startswith("Cowork/") for name in members)
        assert {(m.uid, m.gid, m.uname, m.mtime) for m in members.values()} == {(0, 0, "", 1700000000)}
        assert members["Cowork/Cowork"].mode == 0o755
        assert members["Cowork/update.json"].mode == 0o644
        # the second program is the same bytes: stored once
        assert members["Cowork/cowork-cli"].islnk()
        assert members["Cowork/cowork-cli"].linkname == "Cowork/Cowork"
        assert members["Cowork/_internal/libQt6Core.so.6"].issym()
        tar.extractall(tmp_path / "x", filter="data")
    assert (tmp_path / "x" / "Cowork" / "cowork-cli").read_bytes() == b"\x7fELF program"
    assert (tmp_path / "x" / "Cowork" / "_internal" / "libQt6Core.so.6").read_bytes() == b"qt core"


@pytest.mark.parametrize("target", ["/etc/passwd", "../../outside", "PySide6/missing.so"])
def test_a_link_out_of_the_app_or_to_nothing_is_refused(tmp_path: Path, target: str) -> None:
    app = app_tree(tmp_path)
    (tmp_path / "outside").write_text("x")
    (app / "_internal" / "bad").symlink_to(target)
    with pytest.raises(ReleaseError, match="links outside the app or to nothing"):
        pack_linux_app(app, tmp_path / "out.tar.gz")
    assert not (tmp_path / "out.tar.gz").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


# ---------------------------------------------------------------- names and metadata


def test_the_app_s_names_are_the_ones_the_desktop_looks_for() -> None:
    assert appinfo.CLI_NAME == CLI_PROGRAM
    assert (appinfo.RUNTIME_DIR_NAME, appinfo.UPDATE_CONFIG_NAME) == (BUNDLED_DIR_NAME, UPDATE_CONFIG_NAME)
    # Absolute as the desktop sees them (on Windows, "/Applications" is on the current drive).
    mac = Path("/Applications/Cowork.app").resolve()
    assert appinfo.resources_dir(mac, "darwin-arm64") == app_resources_dir(str(mac / "Contents/MacOS/Cowork"))
    linux = Path("/opt/Cowork").resolve()
    assert appinfo.resources_dir(linux, "linux-x86_64") == app_resources_dir(str(linux / "Cowork"))
    assert appinfo.program_name("windows-x64", console=True) == "cowork-cli.exe"


def test_info_plist_and_the_windows_version_resource_carry_the_app_version() -> None:
    plist = appinfo.info_plist("1.4.0")
    assert plist["CFBundleShortVersionString"] == plist["CFBundleVersion"] == "1.4.0"
    assert (plist["CFBundleName"], plist["NSHighResolutionCapable"]) == ("Cowork", True)
    # The spec's COLLECT ends with the console program, which would make PyInstaller mark the .app
    # background-only; the spec's entries are merged last, so this one wins.
    assert plist["LSBackgroundOnly"] is False
    assert {"LSMinimumSystemVersion", "NSHumanReadableCopyright"} <= plist.keys()
    assert appinfo.windows_version_numbers("1.4") == (1, 4, 0, 0)
    assert appinfo.windows_version_numbers("2.0.1rc1") == (2, 0, 1, 0)
    assert appinfo.windows_version_numbers("1.2.3.4") == (1, 2, 3, 4)
    for bad in ("1.2.3.4.5", "70000.0", "not a version"):
        with pytest.raises(ReleaseError):
            appinfo.windows_version_numbers(bad)


def test_the_linux_launcher_entry_starts_the_app() -> None:
    entry = appinfo.desktop_entry().splitlines()
    assert entry[0] == "[Desktop Entry]"
    assert {"Type=Application", "Name=Cowork", "Exec=Cowork", "Icon=cowork", "Terminal=false"} <= set(entry)


# ---------------------------------------------------------------- the Qt files kept


@pytest.mark.parametrize(
    ("system", "path", "kept"),
    [
        ("linux", "PySide6/Qt/lib/libQt6Core.so.6", True),
        ("linux", "PySide6/Qt/lib/libQt6Network.so.6", True),
        ("linux", "PySide6/Qt/lib/libQt6Qml.so.6", False),
        ("linux", "PySide6/Qt/lib/libQt6QuickControls2.so.6", False),
        ("linux", "PySide6/Qt/lib/libQt6Pdf.so.6", False),
        ("linux", "PySide6/Qt/lib/libQt6VirtualKeyboard.so.6", False),
        ("linux", "PySide6/libpyside6qml.abi3.so.6.11", False),
        ("linux", "PySide6/Qt/plugins/platforms/libqxcb.so", True),
        ("linux", "PySide6/Qt/plugins/platforms/libqwayland.so", True),
        ("linux", "PySide6/Qt/plugins/platforms/libqoffscreen.so", True),
        ("linux", "PySide6/Qt/plugins/platforms/libqvnc.so", False),
        ("linux", "PySide6/Qt/plugins/platforminputcontexts/libqtvirtualkeyboardplugin.so", False),
        ("linux", "PySide6/Qt/plugins/platforminputcontexts/libibusplatforminputcontextplugin.so", True),
        ("linux", "PySide6/Qt/plugins/platformthemes/libqgtk3.so", False),
        ("linux", "PySide6/Qt/plugins/imageformats/libqpdf.so", False),
        ("linux", "PySide6/Qt/plugins/sqldrivers/libqsqlite.so", False),
        ("linux", "PySide6/Qt/plugins/tls/libqopensslbackend.so", False),
        ("linux", "PySide6/Qt/translations/qtbase_de.qm", False),
        ("darwin", "PySide6/Qt/lib/QtGui.framework/Versions/A/QtGui", True),
        ("darwin", "PySide6/Qt/lib/QtQml.framework/Versions/A/QtQml", False),
        ("darwin", "PySide6/Qt/lib/QtQuick.framework/Resources/Info.plist", False),
        ("darwin", "PySide6/Qt/plugins/platforms/libqcocoa.dylib", True),
        ("darwin", "PySide6/Qt/plugins/styles/libqmacstyle.dylib", True),
        ("darwin", "PySide6/Qt/plugins/platforms/libqxcb.dylib", False),
        ("win32", "PySide6\\Qt6Widgets.dll", True),
        ("win32", "PySide6\\Qt6Quick.dll", False),
        ("win32", "PySide6\\plugins\\platforms\\qwindows.dll", True),
        ("win32", "PySide6\\plugins\\styles\\qmodernwindowsstyle.dll", True),
        ("win32", "PySide6\\plugins\\networkinformation\\qnetworklistmanager.dll", False),
        ("win32", "PySide6\\translations\\qt_fr.qm", False),
        ("win32", "PySide6\\opengl32sw.dll", False),
        ("linux", "cryptography/hazmat/bindings/_rust.abi3.so", True),
        ("linux", "libssl.so.3", True),
    ],
)
def test_only_the_qt_the_app_uses_is_kept(system: str, path: str, kept: bool) -> None:
    assert keep_qt_file(path, system) is kept


def test_a_link_goes_with_its_target() -> None:
    assert keep_qt_entry(("libQt6Gui.so.6", "PySide6/Qt/lib/libQt6Gui.so.6", "SYMLINK"), "linux")
    assert not keep_qt_entry(("libQt6Qml.so.6", "PySide6/Qt/lib/libQt6Qml.so.6", "SYMLINK"), "linux")


def test_system_libraries_only_a_dropped_plugin_linked_are_dropped_too() -> None:
    def entry(name: str) -> tuple[str, str, str]:
        return (name, f"/src/{name.rsplit('/', 1)[-1]}", "BINARY")

    links = {
        "libqgtk3.so": ["libgtk-3.so.0", "libpango-1.0.so.0", "libglib-2.0.so.0", "libQt6Gui.so.6"],
        "libgtk-3.so.0": ["libpango-1.0.so.0", "libcairo.so.2"],
        "libpango-1.0.so.0": ["libharfbuzz.so.0", "libglib-2.0.so.0"],
        "libqxcb.so": ["libQt6Gui.so.6", "libxcb.so.1"],
        "libQt6Gui.so.6": ["libglib-2.0.so.0", "libfreetype.so.6"],
    }
    binaries = [
        entry("PySide6/Qt/plugins/platformthemes/libqgtk3.so"),
        entry("PySide6/Qt/plugins/platforms/libqxcb.so"),
        entry("PySide6/Qt/lib/libQt6Gui.so.6"),
        *(entry(n) for n in ("libgtk-3.so.0", "libpango-1.0.so.0", "libharfbuzz.so.0", "libcairo.so.2")),
        *(entry(n) for n in ("libglib-2.0.so.0", "libxcb.so.1", "libfreetype.so.6", "libuuid.so.1")),
    ]
    kept = trim_binaries(binaries, "linux", imports=lambda source: links.get(source.rsplit("/", 1)[-1], []))
    assert sorted(name.rsplit("/", 1)[-1] for name, _, _ in kept) == [
        "libQt6Gui.so.6",
        "libfreetype.so.6",
        "libglib-2.0.so.0",  # the GTK theme linked it, and so does QtGui
        "libqxcb.so",
        "libuuid.so.1",  # linked by nothing collected (a ctypes load): not PyInstaller's guess to undo
        "libxcb.so.1",
    ]
    # elsewhere only the Qt files go (here the two Linux plugins): system frameworks and DLLs are
    # never collected there
    on_macos = trim_binaries(binaries, "darwin", imports=lambda source: [])
    assert [
        name for name, _, _ in binaries if (name, f"/src/{name.rsplit('/', 1)[-1]}", "BINARY") not in on_macos
    ] == [
        "PySide6/Qt/plugins/platformthemes/libqgtk3.so",
        "PySide6/Qt/plugins/platforms/libqxcb.so",
    ]


@pytest.mark.skipif(os.name == "nt", reason="a stand-in codesign started by its #! line")
def test_the_macos_app_is_sealed_again_ad_hoc_after_the_runtime_is_added(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = tmp_path / "calls"
    fake = tmp_path / "bin" / "codesign"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n[ "$3" = - ] || exit 1\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    app = tmp_path / "Cowork.app"
    reseal_ad_hoc(app)
    # Only the bundle itself: the programs and libraries inside keep PyInstaller's signatures.
    assert calls.read_text().splitlines() == [f"--force --sign - {app}"]

    fake.write_text("#!/bin/sh\necho 'Cowork.app: code object is not signed at all' >&2\nexit 1\n")
    with pytest.raises(ReleaseError, match=r"could not seal Cowork\.app again: .*not signed at all"):
        reseal_ad_hoc(app)
