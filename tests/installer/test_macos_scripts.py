"""The macOS packaging scripts (installer/macos/*), run for real in bash against fake Apple tools.

What a release depends on: code is signed inside-out with a timestamp and the hardened runtime, only
real Mach-O files are signed (found by their bytes), the bundled agent runtime's already-hashed files
are left alone, a failed notarisation fails the job and shows Apple's log, the disk image replaces the
old one whole, and no secret ever reaches the job's log. Without credentials every script warns once,
calls nothing and succeeds, so unsigned test builds still work.
"""

from __future__ import annotations

import base64
import json
import plistlib
from pathlib import Path

import pytest

from tests.installer.fakes import (
    HDIUTIL_BUSY,
    MACOS_DIR,
    MH_BUNDLE,
    MH_DYLIB,
    MH_EXECUTE,
    NOTARY_LOG,
    Call,
    FakeTools,
    fat_macho,
    java_class,
    macho,
    secrets_absent,
    single_warning,
    write,
)

SIGN = MACOS_DIR / "sign"
NOTARIZE = MACOS_DIR / "notarize"
DMG = MACOS_DIR / "dmg"
IMPORT_CERTIFICATE = MACOS_DIR / "import-certificate"
ENTITLEMENTS = MACOS_DIR / "entitlements.plist"
SCRIPTS = (SIGN, NOTARIZE, DMG, IMPORT_CERTIFICATE)

IDENTITY = "Developer ID Application: Example Ltd (TEAMID1234)"
API_KEY = {
    "COWORK_NOTARY_KEY_ID": "KEYID12345",
    "COWORK_NOTARY_ISSUER_ID": "69a6de7e-0000-1111-2222-333344445555",
}
APPLE_ID = {
    "COWORK_NOTARY_APPLE_ID": "release@example.com",
    "COWORK_NOTARY_TEAM_ID": "TEAMID1234",
    "COWORK_NOTARY_PASSWORD": "abcd-efgh-ijkl-mnop",
}


@pytest.fixture
def tools(tmp_path: Path) -> FakeTools:
    return FakeTools(tmp_path)


# ---------------------------------------------------------------- the scripts as files


def test_entitlements_relax_only_what_a_frozen_python_needs() -> None:
    with ENTITLEMENTS.open("rb") as handle:
        entitlements = plistlib.load(handle)
    assert entitlements == {"com.apple.security.cs.allow-unsigned-executable-memory": True}


@pytest.mark.parametrize(
    ("script", "args"),
    [
        (SIGN, []),
        (NOTARIZE, []),
        (NOTARIZE, ["a.dmg", "b.dmg"]),
        (DMG, ["Cowork.app"]),
        (IMPORT_CERTIFICATE, ["unexpected"]),
    ],
    ids=["sign", "notarize-none", "notarize-two", "dmg-one", "import-certificate-extra"],
)
def test_wrong_number_of_arguments_is_a_usage_error(tools: FakeTools, script: Path, args: list[str]) -> None:
    result = tools.run(script, *args, COWORK_MACOS_SIGN_IDENTITY=IDENTITY, **API_KEY)
    assert result.returncode == 2
    assert "usage: installer/macos/" in result.stderr
    assert tools.calls() == []


# ---------------------------------------------------------------- sign


def build_app(root: Path) -> dict[str, Path]:
    """A Cowork.app shaped like PyInstaller's, with the runtime unpacked into it and decoys."""
    app = root / "Cowork.app"
    contents = app / "Contents"
    write(contents / "Info.plist", plistlib.dumps({"CFBundleIdentifier": "dev.cowork.desktop"}))
    frameworks = contents / "Frameworks"
    qtcore = frameworks / "PySide6" / "Qt" / "lib" / "QtCore.framework"
    files = {
        "app": app,
        "cowork": write(contents / "MacOS" / "Cowork", macho(MH_EXECUTE), executable=True),
        "cli": write(contents / "MacOS" / "cowork-cli", macho(MH_EXECUTE, big_endian=True), executable=True),
        "libpython": write(frameworks / "libpython3.11.dylib", macho(MH_DYLIB)),
        "extension": write(frameworks / "PySide6" / "QtCore.abi3.so", macho(MH_BUNDLE, bits=32)),
        "universal": write(
            frameworks / "lib-dynload" / "_ctypes.cpython-311-darwin.so", fat_macho(MH_BUNDLE)
        ),
        "no_suffix": write(frameworks / "libqcocoa", macho(MH_DYLIB)),
        "helper": write(frameworks / "helper", fat_macho(MH_EXECUTE), executable=True),
        "qtcore_binary": write(qtcore / "Versions" / "A" / "QtCore", macho(MH_DYLIB)),
        "qtcore": qtcore,
    }
    write(qtcore / "Versions" / "A" / "Resources" / "Info.plist", b"<plist/>")
    (qtcore / "Versions" / "Current").symlink_to("A")
    (qtcore / "QtCore").symlink_to("Versions/Current/QtCore")
    (qtcore / "Resources").symlink_to("Versions/Current/Resources")
    # PyInstaller links binaries into Resources and data into Frameworks: links are never signed.
    (contents / "Resources").mkdir()
    (contents / "Resources" / "libpython3.11.dylib").symlink_to("../Frameworks/libpython3.11.dylib")
    # Decoys: names that look like code, contents that are not, and the fat magic of a Java class.
    write(frameworks / "not-code.dylib", b"just text, named like a library\n" * 4)
    write(frameworks / "Example.class", java_class())
    write(contents / "Resources" / "base_library.zip", b"PK\x03\x04" + bytes(200))
    write(contents / "Resources" / "tiny", b"\xcf\xfa")
    # The agent runtime, signed before its hashes were taken (cowork-files.json): must stay as it is.
    runtime = contents / "Resources" / "runtime"
    write(runtime / "cowork-files.json", b"{}")
    files["runtime_exe"] = write(
        runtime / "agent-runtime" / "agent-runtime", macho(MH_EXECUTE), executable=True
    )
    files["runtime_lib"] = write(runtime / "agent-runtime" / "_internal" / "libssl.3.dylib", macho(MH_DYLIB))
    return files


def signed_paths(calls: list[Call]) -> list[str]:
    return [call.argv[-1] for call in calls if "--sign" in call.argv]


def test_sign_without_identity_warns_and_signs_nothing(tools: FakeTools, tmp_path: Path) -> None:
    files = build_app(tmp_path)
    result = tools.run(SIGN, files["app"])
    assert result.returncode == 0
    warning = single_warning(result)
    assert "COWORK_MACOS_SIGN_IDENTITY" in warning
    assert "unsigned" in warning
    assert tools.calls() == []


def test_sign_refuses_a_path_that_does_not_exist(tools: FakeTools, tmp_path: Path) -> None:
    result = tools.run(SIGN, tmp_path / "Missing.app", COWORK_MACOS_SIGN_IDENTITY=IDENTITY)
    assert result.returncode == 2
    assert "does not exist" in result.stderr
    assert "usage:" in result.stderr
    assert tools.calls() == []


def test_sign_refuses_an_app_without_info_plist(tools: FakeTools, tmp_path: Path) -> None:
    broken = tmp_path / "Broken.app"
    write(broken / "Contents" / "MacOS" / "Broken", macho(MH_EXECUTE), executable=True)
    result = tools.run(SIGN, broken, COWORK_MACOS_SIGN_IDENTITY=IDENTITY)
    assert result.returncode == 2
    assert "Info.plist" in result.stderr
    assert tools.calls() == []


def test_sign_refuses_a_file_that_is_no_code_and_no_disk_image(tools: FakeTools, tmp_path: Path) -> None:
    notes = write(tmp_path / "notes.txt", b"hello\n")
    result = tools.run(SIGN, notes, COWORK_MACOS_SIGN_IDENTITY=IDENTITY)
    assert result.returncode == 2
    assert tools.calls() == []


def test_sign_app_signs_every_mach_o_inside_out_and_nothing_else(tools: FakeTools, tmp_path: Path) -> None:
    files = build_app(tmp_path)
    result = tools.run(SIGN, files["app"], COWORK_MACOS_SIGN_IDENTITY=IDENTITY)
    assert result.returncode == 0, result.stderr

    calls = tools.calls("codesign")
    order = signed_paths(calls)
    nested = ["libpython", "extension", "universal", "no_suffix", "qtcore_binary", "qtcore"]
    programs = ["cowork", "cli", "helper"]
    assert sorted(order) == sorted(str(files[name]) for name in [*nested, *programs, "app"])
    assert len(order) == len(set(order)), "a file was signed twice"

    def position(name: str) -> int:
        return order.index(str(files[name]))

    # Inside-out: the framework's binary before the framework, every library before the programs,
    # the programs before the app, the app last.
    assert position("qtcore_binary") < position("qtcore")
    assert max(position(name) for name in nested) < min(position(name) for name in programs)
    assert max(position(name) for name in programs) < position("app") == len(order) - 1
    # The runtime's files keep the signatures their hashes were taken over.
    assert str(files["runtime_exe"]) not in order
    assert str(files["runtime_lib"]) not in order


def test_sign_app_uses_timestamp_hardened_runtime_and_entitlements_for_programs(
    tools: FakeTools, tmp_path: Path
) -> None:
    files = build_app(tmp_path)
    result = tools.run(SIGN, files["app"], COWORK_MACOS_SIGN_IDENTITY=IDENTITY)
    assert result.returncode == 0, result.stderr

    sign_calls = [call for call in tools.calls("codesign") if "--sign" in call.argv]
    entitled = {str(files[name]) for name in ("cowork", "cli", "helper", "app")}
    for call in sign_calls:
        argv = call.argv
        assert argv[argv.index("--sign") + 1] == IDENTITY
        assert {"--force", "--timestamp"} <= set(argv)
        assert argv[argv.index("--options") + 1] == "runtime"
        assert "--deep" not in argv, "--deep must not be used for signing"
        if argv[-1] in entitled:
            assert argv[argv.index("--entitlements") + 1] == str(ENTITLEMENTS)
        else:
            assert "--entitlements" not in argv, f"a library got entitlements: {argv[-1]}"

    verify = [call.argv for call in tools.calls("codesign") if "--verify" in call.argv]
    assert verify == [["--verify", "--strict", "--deep", "--verbose=2", str(files["app"])]]
    assert tools.calls("codesign")[-1].argv == verify[0], "the app is verified after it is signed"


def test_sign_runtime_directory_signs_and_verifies_each_program(tools: FakeTools, tmp_path: Path) -> None:
    runtime = tmp_path / "dist" / "agent-runtime"
    program = write(runtime / "agent-runtime", macho(MH_EXECUTE), executable=True)
    library = write(runtime / "_internal" / "libcrypto.3.dylib", macho(MH_DYLIB))
    extension = write(runtime / "_internal" / "_rust.abi3.so", fat_macho(MH_BUNDLE))
    write(runtime / "_internal" / "base_library.zip", b"PK\x03\x04" + bytes(64))
    # A manifest at the root of what is being signed does not exempt the tree itself.
    write(runtime / "cowork-files.json", b"{}")

    result = tools.run(SIGN, runtime, COWORK_MACOS_SIGN_IDENTITY=IDENTITY)
    assert result.returncode == 0, result.stderr

    calls = tools.calls("codesign")
    order = signed_paths(calls)
    assert sorted(order) == sorted(map(str, (program, library, extension)))
    assert order[-1] == str(program), "the program is signed after its libraries"
    program_call = next(call for call in calls if call.argv[-1] == str(program) and "--sign" in call.argv)
    assert "--entitlements" in program_call.argv
    verified = [call.argv[-1] for call in calls if "--verify" in call.argv]
    assert sorted(verified) == sorted(order)
    assert all("--deep" not in call.argv for call in calls)


def test_sign_disk_image_signs_it_whole_without_runtime_options(tools: FakeTools, tmp_path: Path) -> None:
    image = write(tmp_path / "Cowork-0.1.0-macos-arm64.dmg", b"koly" * 16)
    result = tools.run(SIGN, image, COWORK_MACOS_SIGN_IDENTITY=IDENTITY)
    assert result.returncode == 0, result.stderr
    assert [call.argv for call in tools.calls()] == [
        ["--force", "--timestamp", "--sign", IDENTITY, str(image)],
        ["--verify", "--strict", "--verbose=2", str(image)],
    ]


def test_sign_fails_when_codesign_fails(tools: FakeTools, tmp_path: Path) -> None:
    files = build_app(tmp_path)
    result = tools.run(SIGN, files["app"], COWORK_MACOS_SIGN_IDENTITY=IDENTITY, FAKE_FAIL="codesign")
    assert result.returncode != 0
    assert len(tools.calls("codesign")) == 1, "signing stops at the first failure"


# ---------------------------------------------------------------- notarize


@pytest.fixture
def signed_dmg(tmp_path: Path) -> Path:
    return write(tmp_path / "dist" / "Cowork-0.1.0-macos-arm64.dmg", b"koly" * 16)


@pytest.fixture
def api_key(tmp_path: Path) -> dict[str, str]:
    key = write(tmp_path / "AuthKey_KEYID12345.p8", b"-----BEGIN PRIVATE KEY-----\nsecret\n")
    return {"COWORK_NOTARY_KEY_FILE": str(key), **API_KEY}


def test_notarize_without_credentials_warns_and_calls_nothing(tools: FakeTools, signed_dmg: Path) -> None:
    result = tools.run(NOTARIZE, signed_dmg)
    assert result.returncode == 0
    warning = single_warning(result)
    assert "COWORK_NOTARY_KEY_FILE" in warning
    assert "COWORK_NOTARY_APPLE_ID" in warning
    assert tools.calls() == []


def test_notarize_with_api_key_submits_waits_staples_and_asks_gatekeeper(
    tools: FakeTools, signed_dmg: Path, api_key: dict[str, str]
) -> None:
    result = tools.run(NOTARIZE, signed_dmg, **api_key)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(signed_dmg)

    calls = [(call.tool, call.argv) for call in tools.calls()]
    submit = calls[0][1]
    assert calls[0][0] == "xcrun"
    assert submit[:3] == ["notarytool", "submit", str(signed_dmg)]
    assert "--wait" in submit
    assert submit[submit.index("--key") + 1] == api_key["COWORK_NOTARY_KEY_FILE"]
    assert submit[submit.index("--key-id") + 1] == API_KEY["COWORK_NOTARY_KEY_ID"]
    assert submit[submit.index("--issuer") + 1] == API_KEY["COWORK_NOTARY_ISSUER_ID"]
    assert calls[1:] == [
        ("xcrun", ["stapler", "staple", str(signed_dmg)]),
        ("xcrun", ["stapler", "validate", str(signed_dmg)]),
        (
            "spctl",
            [
                "--assess",
                "--type",
                "open",
                "--context",
                "context:primary-signature",
                "--verbose=2",
                str(signed_dmg),
            ],
        ),
    ]


def test_notarize_with_apple_id_never_prints_the_password(tools: FakeTools, signed_dmg: Path) -> None:
    result = tools.run(NOTARIZE, signed_dmg, **APPLE_ID)
    assert result.returncode == 0, result.stderr
    submit = tools.calls("xcrun")[0].argv
    assert submit[submit.index("--apple-id") + 1] == APPLE_ID["COWORK_NOTARY_APPLE_ID"]
    assert submit[submit.index("--team-id") + 1] == APPLE_ID["COWORK_NOTARY_TEAM_ID"]
    assert submit[submit.index("--password") + 1] == APPLE_ID["COWORK_NOTARY_PASSWORD"]
    secrets_absent(result, APPLE_ID["COWORK_NOTARY_PASSWORD"])


def test_notarize_invalid_fails_with_the_notary_log_and_staples_nothing(
    tools: FakeTools, signed_dmg: Path, api_key: dict[str, str]
) -> None:
    result = tools.run(NOTARIZE, signed_dmg, FAKE_NOTARY_STATUS="Invalid", **APPLE_ID)
    assert result.returncode == 1
    assert "status 'Invalid'" in result.stderr
    assert NOTARY_LOG in result.stderr
    calls = [call.argv[:2] for call in tools.calls()]
    assert calls == [["notarytool", "submit"], ["notarytool", "log"]]
    log_call = tools.calls("xcrun")[1].argv
    assert log_call[2] == "2efe2717-52ef-43a5-96dc-0797e4ca1041"
    assert "--password" in log_call, "the log is fetched with the same credentials"
    secrets_absent(result, APPLE_ID["COWORK_NOTARY_PASSWORD"])


@pytest.mark.parametrize(
    ("present", "named"),
    [
        ({"COWORK_NOTARY_KEY_ID": "KEYID12345"}, "COWORK_NOTARY_KEY_FILE COWORK_NOTARY_ISSUER_ID"),
        ({"COWORK_NOTARY_APPLE_ID": "a@example.com"}, "COWORK_NOTARY_TEAM_ID COWORK_NOTARY_PASSWORD"),
    ],
    ids=["api-key", "apple-id"],
)
def test_notarize_half_configured_is_an_error_naming_what_is_missing(
    tools: FakeTools, signed_dmg: Path, present: dict[str, str], named: str
) -> None:
    result = tools.run(NOTARIZE, signed_dmg, **present)
    assert result.returncode == 1
    assert "half-configured" in result.stderr
    assert named in result.stderr
    assert tools.calls() == []


def test_notarize_app_submits_a_zip_and_staples_the_app(
    tools: FakeTools, tmp_path: Path, api_key: dict[str, str]
) -> None:
    app = build_app(tmp_path)["app"]
    result = tools.run(NOTARIZE, app, **api_key)
    assert result.returncode == 0, result.stderr
    calls = tools.calls()
    zip_call, submit_call = calls[0], calls[1]
    assert zip_call.tool == "ditto"
    assert zip_call.argv[:5] == ["-c", "-k", "--sequesterRsrc", "--keepParent", str(app)]
    assert submit_call.argv[2] == zip_call.argv[-1]
    assert submit_call.argv[2].endswith("Cowork.zip")
    assert [call.argv for call in calls[2:4]] == [
        ["stapler", "staple", str(app)],
        ["stapler", "validate", str(app)],
    ]
    assert calls[4].argv == ["--assess", "--type", "execute", "--verbose=2", str(app)]


def test_notarize_rejects_a_file_it_cannot_notarise(tools: FakeTools, tmp_path: Path) -> None:
    archive = write(tmp_path / "Cowork.tar.gz", b"\x1f\x8b")
    result = tools.run(NOTARIZE, archive, **APPLE_ID)
    assert result.returncode == 2
    assert tools.calls() == []


# ---------------------------------------------------------------- dmg


def test_dmg_packs_the_app_and_an_applications_link_and_replaces_the_old_image(
    tools: FakeTools, tmp_path: Path
) -> None:
    app = build_app(tmp_path)["app"]
    image = write(tmp_path / "dist" / "Cowork-0.1.0-macos-arm64.dmg", b"the previous image")

    result = tools.run(DMG, app, image)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(image)

    # The fake hdiutil wrote, as the image, what the folder it packed held.
    assert json.loads(image.read_text()) == {"Cowork.app": "dir", "Applications": "/Applications"}
    create = next(call.argv for call in tools.calls("hdiutil") if call.argv[0] == "create")
    assert create[create.index("-volname") + 1] == "Cowork"
    assert create[create.index("-format") + 1] == "UDZO"
    assert [call.argv[0] for call in tools.calls("hdiutil")] == ["create", "verify"]
    assert sorted(p.name for p in image.parent.iterdir()) == [image.name], "no partial image left behind"
    assert sorted(p.name for p in tools.tmp.iterdir()) == [], "the staging folder is removed"


def test_dmg_failure_keeps_the_previous_image(tools: FakeTools, tmp_path: Path) -> None:
    app = build_app(tmp_path)["app"]
    image = write(tmp_path / "dist" / "Cowork.dmg", b"the previous image")
    result = tools.run(DMG, app, image, FAKE_FAIL="hdiutil")
    assert result.returncode != 0
    assert image.read_bytes() == b"the previous image"
    assert sorted(p.name for p in image.parent.iterdir()) == ["Cowork.dmg"]
    assert [call.argv[0] for call in tools.calls("hdiutil")] == ["create"], "only a busy image is retried"


def test_dmg_tries_again_while_hdiutil_says_resource_busy(tools: FakeTools, tmp_path: Path) -> None:
    # CI's macOS machines fail `hdiutil create` now and then with "Resource busy" (runner-images#7522).
    tools.add("sleep")  # the waits between tries are recorded, not slept
    app = build_app(tmp_path)["app"]
    image = tmp_path / "dist" / "Cowork.dmg"
    result = tools.run(DMG, app, image, **{HDIUTIL_BUSY: "2"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(image)
    assert json.loads(image.read_text()) == {"Cowork.app": "dir", "Applications": "/Applications"}
    assert [call.argv[0] for call in tools.calls("hdiutil")] == ["create", "create", "create", "verify"]
    assert [call.argv for call in tools.calls("sleep")] == [["2"], ["4"]]
    assert result.stderr.count("Resource busy") == 2
    assert sorted(p.name for p in image.parent.iterdir()) == [image.name]


def test_dmg_gives_up_when_hdiutil_stays_busy(tools: FakeTools, tmp_path: Path) -> None:
    tools.add("sleep")
    app = build_app(tmp_path)["app"]
    image = write(tmp_path / "dist" / "Cowork.dmg", b"the previous image")
    result = tools.run(DMG, app, image, **{HDIUTIL_BUSY: "99"})
    assert result.returncode == 1
    assert [call.argv[0] for call in tools.calls("hdiutil")] == ["create"] * 5
    assert len(tools.calls("sleep")) == 4
    assert image.read_bytes() == b"the previous image"
    assert sorted(p.name for p in image.parent.iterdir()) == ["Cowork.dmg"]


@pytest.mark.parametrize("bad", ["not-an-app", "output-name"])
def test_dmg_rejects_what_is_not_an_app_or_a_dmg_name(tools: FakeTools, tmp_path: Path, bad: str) -> None:
    app = build_app(tmp_path)["app"]
    if bad == "not-an-app":
        result = tools.run(DMG, tmp_path, tmp_path / "out.dmg")
    else:
        result = tools.run(DMG, app, tmp_path / "out.img")
    assert result.returncode == 2
    assert "usage:" in result.stderr
    assert tools.calls() == []


# ---------------------------------------------------------------- import-certificate

P12 = b"0\x82\x0b\x1f\x02\x01\x030\x82\x0a\xe5 a fake pkcs12 blob"
P12_PASSWORD = "correct horse battery staple"


def test_import_certificate_without_variables_warns_and_calls_nothing(tools: FakeTools) -> None:
    result = tools.run(IMPORT_CERTIFICATE)
    assert result.returncode == 0
    assert "COWORK_MACOS_CERTIFICATE_P12" in single_warning(result)
    assert tools.calls() == []


def test_import_certificate_builds_a_keychain_codesign_can_use(tools: FakeTools) -> None:
    encoded = base64.b64encode(P12).decode()
    result = tools.run(
        IMPORT_CERTIFICATE,
        COWORK_MACOS_CERTIFICATE_P12=encoded,
        COWORK_MACOS_CERTIFICATE_PASSWORD=P12_PASSWORD,
        RUNNER_TEMP=str(tools.tmp),
    )
    assert result.returncode == 0, result.stderr
    keychain = result.stdout.strip()
    assert keychain.endswith(".keychain-db")
    assert keychain.startswith(str(tools.tmp))

    calls = tools.calls("security")
    assert [call.argv[0] for call in calls] == [
        "create-keychain",
        "set-keychain-settings",
        "unlock-keychain",
        "import",
        "set-key-partition-list",
        "list-keychains",
        "list-keychains",
        "find-identity",
    ]
    create, _settings, unlock, import_, partition, _listed, search, _find = (call.argv for call in calls)
    keychain_password = create[create.index("-p") + 1]
    assert len(keychain_password) >= 32
    assert unlock[unlock.index("-p") + 1] == keychain_password
    assert partition[partition.index("-k") + 1] == keychain_password
    assert partition[partition.index("-S") + 1] == "apple-tool:,apple:,codesign:"
    assert import_[import_.index("-P") + 1] == P12_PASSWORD
    assert import_[import_.index("-T") + 1] == "/usr/bin/codesign"
    assert calls[3].imported == P12, "the .p12 reaches security import decoded"
    assert search == [
        "list-keychains",
        "-d",
        "user",
        "-s",
        keychain,
        "/Users/runner/Library/Keychains/login.keychain-db",
    ]
    # The decoded certificate does not outlive the script; no secret reached the log.
    assert not any(path.name.endswith(".p12") for path in tools.tmp.rglob("*"))
    secrets_absent(result, P12_PASSWORD, keychain_password, encoded)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"COWORK_MACOS_CERTIFICATE_P12": "not base64 at all!", "COWORK_MACOS_CERTIFICATE_PASSWORD": "x"},
            "base64",
        ),
        ({"COWORK_MACOS_CERTIFICATE_P12": base64.b64encode(P12).decode()}, "PASSWORD is not"),
        ({"COWORK_MACOS_CERTIFICATE_PASSWORD": "x"}, "P12 is not"),
    ],
    ids=["bad-base64", "no-password", "no-certificate"],
)
def test_import_certificate_rejects_broken_configuration(
    tools: FakeTools, env: dict[str, str], message: str
) -> None:
    result = tools.run(IMPORT_CERTIFICATE, **env)
    assert result.returncode == 1
    assert message in result.stderr
    assert tools.calls() == []


def test_import_certificate_fails_when_no_signing_identity_came_with_it(tools: FakeTools) -> None:
    result = tools.run(
        IMPORT_CERTIFICATE,
        COWORK_MACOS_CERTIFICATE_P12=base64.b64encode(P12).decode(),
        COWORK_MACOS_CERTIFICATE_PASSWORD=P12_PASSWORD,
        FAKE_NO_IDENTITY="1",
    )
    assert result.returncode == 1
    assert "no valid code-signing identity" in result.stderr
    assert result.stdout == ""
