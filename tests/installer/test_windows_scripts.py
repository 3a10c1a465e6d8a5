"""The Windows packaging: installer/windows/sign and build-installer run for real in bash against fake
signtool / ISCC, and the Inno Setup script checked for what users rely on.

What matters: Authenticode signatures use SHA-256 and an RFC 3161 timestamp, the certificate password
never reaches the log, Git Bash's path conversion cannot mangle signtool's or ISCC's options, the
installer is per-user (no administrator rights), and uninstalling asks before deleting the user's data —
the data platformdirs actually puts there — and never deletes it in a silent uninstall.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.installer.fakes import (
    REPO_ROOT,
    WINDOWS_DIR,
    FakeTools,
    secrets_absent,
    single_warning,
    write,
)

SIGN = WINDOWS_DIR / "sign"
BUILD_INSTALLER = WINDOWS_DIR / "build-installer"
ISS = WINDOWS_DIR / "cowork.iss"
SCRIPTS = (SIGN, BUILD_INSTALLER)

CERT_PASSWORD = "pfx-p@ss word;with$chars"


@pytest.fixture
def tools(tmp_path: Path) -> FakeTools:
    return FakeTools(tmp_path)


@pytest.fixture
def certificate(tmp_path: Path) -> Path:
    return write(tmp_path / "codesign.pfx", b"0\x82 fake pfx")


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    app = tmp_path / "dist" / "Cowork"
    write(app / "Cowork.exe", b"MZ window")
    write(app / "cowork-cli.exe", b"MZ console")
    write(app / "runtime" / "cowork-files.json", b"{}")
    return app


# ---------------------------------------------------------------- the scripts as files


# ---------------------------------------------------------------- sign


def test_sign_without_certificate_warns_and_calls_nothing(tools: FakeTools, app_dir: Path) -> None:
    result = tools.run(SIGN, app_dir / "Cowork.exe")
    assert result.returncode == 0
    warning = single_warning(result)
    assert "COWORK_WINDOWS_CERT_FILE" in warning
    assert "unsigned" in warning
    assert tools.calls() == []


def test_sign_uses_sha256_and_an_rfc3161_timestamp_then_verifies(
    tools: FakeTools, app_dir: Path, certificate: Path
) -> None:
    files = [app_dir / "Cowork.exe", app_dir / "cowork-cli.exe"]
    result = tools.run(
        SIGN, *files, COWORK_WINDOWS_CERT_FILE=str(certificate), COWORK_WINDOWS_CERT_PASSWORD=CERT_PASSWORD
    )
    assert result.returncode == 0, result.stderr

    sign, verify = tools.calls("signtool")
    assert sign.argv == [
        "sign",
        "/fd",
        "sha256",
        "/tr",
        "http://timestamp.digicert.com",
        "/td",
        "sha256",
        "/f",
        str(certificate),
        "/p",
        CERT_PASSWORD,
        "/d",
        "Cowork",
        *map(str, files),
    ]
    assert verify.argv == ["verify", "/pa", *map(str, files)]
    # Git Bash must not turn "/fd" into "C:/Program Files/Git/fd".
    for call in (sign, verify):
        assert call.env["MSYS2_ARG_CONV_EXCL"] == "*"
        assert call.env["MSYS_NO_PATHCONV"] == "1"
    secrets_absent(result, CERT_PASSWORD)


def test_sign_uses_the_configured_timestamp_server_and_no_password_when_none(
    tools: FakeTools, app_dir: Path, certificate: Path
) -> None:
    result = tools.run(
        SIGN,
        app_dir / "Cowork.exe",
        COWORK_WINDOWS_CERT_FILE=str(certificate),
        COWORK_WINDOWS_TIMESTAMP_URL="http://timestamp.sectigo.com",
    )
    assert result.returncode == 0, result.stderr
    sign = tools.calls("signtool")[0].argv
    assert sign[sign.index("/tr") + 1] == "http://timestamp.sectigo.com"
    assert "/p" not in sign


def test_sign_finds_the_newest_x64_signtool_of_the_windows_sdk(
    tools: FakeTools, app_dir: Path, certificate: Path, tmp_path: Path
) -> None:
    tools.remove("signtool")
    kits = tmp_path / "Program Files (x86)" / "Windows Kits" / "10" / "bin"
    FakeTools.install_at(kits / "10.0.19041.0" / "x64" / "signtool.exe")
    newest = FakeTools.install_at(kits / "10.0.22621.0" / "x64" / "signtool.exe")
    FakeTools.install_at(kits / "10.0.26100.0" / "arm64" / "signtool.exe")

    result = tools.run(
        SIGN,
        app_dir / "Cowork.exe",
        COWORK_WINDOWS_CERT_FILE=str(certificate),
        **{"ProgramFiles(x86)": str(tmp_path / "Program Files (x86)")},
    )
    assert result.returncode == 0, result.stderr
    calls = tools.calls()
    assert [call.argv[0] for call in calls] == ["sign", "verify"]
    assert {call.program for call in calls} == {str(newest)}


def test_sign_hands_signtool_windows_paths_under_git_bash(
    tools: FakeTools, app_dir: Path, certificate: Path
) -> None:
    tools.add("cygpath")
    result = tools.run(SIGN, app_dir / "Cowork.exe", COWORK_WINDOWS_CERT_FILE=str(certificate))
    assert result.returncode == 0, result.stderr
    sign = tools.calls("signtool")[0].argv
    assert sign[-1] == "C:" + str(app_dir / "Cowork.exe").replace("/", "\\")
    assert sign[sign.index("/f") + 1] == "C:" + str(certificate).replace("/", "\\")


def test_sign_without_signtool_is_a_clear_error(tools: FakeTools, app_dir: Path, certificate: Path) -> None:
    tools.remove("signtool")
    result = tools.run(SIGN, app_dir / "Cowork.exe", COWORK_WINDOWS_CERT_FILE=str(certificate))
    assert result.returncode == 1
    assert "signtool.exe not found" in result.stderr


def test_sign_rejects_a_missing_file_and_a_missing_certificate(
    tools: FakeTools, app_dir: Path, tmp_path: Path
) -> None:
    missing_file = tools.run(SIGN, app_dir / "Nope.exe", COWORK_WINDOWS_CERT_FILE=str(tmp_path))
    assert missing_file.returncode == 2
    assert "usage:" in missing_file.stderr
    no_arguments = tools.run(SIGN)
    assert no_arguments.returncode == 2
    missing_cert = tools.run(
        SIGN, app_dir / "Cowork.exe", COWORK_WINDOWS_CERT_FILE=str(tmp_path / "absent.pfx")
    )
    assert missing_cert.returncode == 1
    assert "COWORK_WINDOWS_CERT_FILE" in missing_cert.stderr
    assert tools.calls() == []


def test_sign_fails_when_signtool_fails(tools: FakeTools, app_dir: Path, certificate: Path) -> None:
    result = tools.run(
        SIGN,
        app_dir / "Cowork.exe",
        COWORK_WINDOWS_CERT_FILE=str(certificate),
        COWORK_WINDOWS_CERT_PASSWORD=CERT_PASSWORD,
        FAKE_FAIL="signtool",
    )
    assert result.returncode != 0
    assert [call.argv[0] for call in tools.calls()] == ["sign"]
    secrets_absent(result, CERT_PASSWORD)


# ---------------------------------------------------------------- build-installer


def test_build_installer_compiles_the_script_with_the_defines(
    tools: FakeTools, app_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = tools.run(BUILD_INSTALLER, app_dir, "0.1.0", out)
    assert result.returncode == 0, result.stderr
    installer = out / "Cowork-0.1.0-windows-x64-setup.exe"
    assert result.stdout.strip() == str(installer)
    assert installer.is_file()

    (call,) = tools.calls("iscc")
    assert call.argv == [
        "/DAppVersion=0.1.0",
        "/DAppNumericVersion=0.1.0",
        f"/DAppSourceDir={app_dir}",
        f"/DAppOutputDir={out}",
        str(ISS),
    ]
    assert call.env["MSYS2_ARG_CONV_EXCL"] == "*"


def build_with_certificate(
    tools: FakeTools, app_dir: Path, certificate: Path, tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    """build-installer with a certificate and its password configured."""
    return tools.run(
        BUILD_INSTALLER,
        app_dir,
        "0.1.0",
        tmp_path / "out",
        COWORK_WINDOWS_CERT_FILE=str(certificate),
        COWORK_WINDOWS_CERT_PASSWORD=CERT_PASSWORD,
    )


def test_build_installer_gives_a_prerelease_a_numeric_file_version(
    tools: FakeTools, app_dir: Path, tmp_path: Path
) -> None:
    result = tools.run(BUILD_INSTALLER, app_dir, "1.4.0b2", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    argv = tools.calls("iscc")[0].argv
    assert "/DAppVersion=1.4.0b2" in argv
    assert "/DAppNumericVersion=1.4.0" in argv


def test_build_installer_signs_the_uninstaller_through_the_sign_script_when_a_certificate_is_set(
    tools: FakeTools, app_dir: Path, certificate: Path, tmp_path: Path
) -> None:
    result = build_with_certificate(tools, app_dir, certificate, tmp_path)
    assert result.returncode == 0, result.stderr
    argv = tools.calls("iscc")[0].argv
    assert "/DSignUninstaller" in argv
    (sign_tool,) = [arg for arg in argv if arg.startswith("/Scowork=")]
    # ISCC runs: "<bash>" "<installer/windows/sign>" "<file>" ($q is its quote, $f the quoted file).
    bash, script, _file = re.fullmatch(r"/Scowork=\$q(.+)\$q \$q(.+)\$q (\$f)", sign_tool).groups()
    assert Path(bash).name == "bash"
    assert script == str(SIGN)
    assert CERT_PASSWORD not in " ".join(argv), "the password stays in the environment"
    secrets_absent(result, CERT_PASSWORD)


def test_build_installer_leaves_the_uninstaller_unsigned_with_a_warning_when_the_password_is_missing(
    tools: FakeTools, app_dir: Path, certificate: Path, tmp_path: Path
) -> None:
    # A .pfx without its password could only fail halfway through the compile: warn and build.
    result = tools.run(
        BUILD_INSTALLER, app_dir, "0.1.0", tmp_path / "out", COWORK_WINDOWS_CERT_FILE=str(certificate)
    )
    assert result.returncode == 0, result.stderr
    assert "warning: " in result.stderr
    assert "uninstaller" in result.stderr
    argv = tools.calls("iscc")[0].argv
    assert not [arg for arg in argv if arg.startswith(("/S", "/DSignUninstaller"))]


def test_build_installer_without_inno_setup_is_a_clear_error(
    tools: FakeTools, app_dir: Path, tmp_path: Path
) -> None:
    tools.remove("iscc")
    result = tools.run(BUILD_INSTALLER, app_dir, "0.1.0", tmp_path / "out")
    assert result.returncode == 1
    assert "Inno Setup 6 not found" in result.stderr


def test_build_installer_finds_iscc_in_program_files(tools: FakeTools, app_dir: Path, tmp_path: Path) -> None:
    tools.remove("iscc")
    program_files = tmp_path / "Program Files (x86)"
    iscc = FakeTools.install_at(program_files / "Inno Setup 6" / "ISCC.exe")
    result = tools.run(
        BUILD_INSTALLER, app_dir, "0.1.0", tmp_path / "out", **{"ProgramFiles(x86)": str(program_files)}
    )
    assert result.returncode == 0, result.stderr
    assert [call.program for call in tools.calls()] == [str(iscc)]


@pytest.mark.parametrize(
    ("case", "version"),
    [("no-cowork-exe", "0.1.0"), ("bad-version", "1.0/../../x"), ("empty-version", "")],
)
def test_build_installer_rejects_bad_arguments(
    tools: FakeTools, app_dir: Path, tmp_path: Path, case: str, version: str
) -> None:
    source = tmp_path if case == "no-cowork-exe" else app_dir
    result = tools.run(BUILD_INSTALLER, source, version, tmp_path / "out")
    assert result.returncode == 2
    assert "usage:" in result.stderr
    assert tools.calls() == []


def test_build_installer_fails_when_iscc_fails(tools: FakeTools, app_dir: Path, tmp_path: Path) -> None:
    result = tools.run(BUILD_INSTALLER, app_dir, "0.1.0", tmp_path / "out", FAKE_FAIL="iscc")
    assert result.returncode != 0
    assert result.stdout == ""


# ---------------------------------------------------------------- cowork.iss


def iss_sections() -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = ""
    for raw in ISS.read_text(encoding="ascii").splitlines():
        line = raw.strip()
        if re.fullmatch(r"\[[A-Za-z]+\]", line):
            current = line[1:-1]
            sections.setdefault(current, [])
        elif current and line and not line.startswith(";"):
            sections[current].append(raw)
    return sections


def setup_directives() -> dict[str, str]:
    directives = {}
    for line in iss_sections()["Setup"]:
        if "=" in line and not line.lstrip().startswith("#"):
            key, value = line.split("=", 1)
            directives[key.strip()] = value.strip()
    return directives


def code_block(name: str) -> str:
    code = "\n".join(iss_sections()["Code"])
    match = re.search(rf"^(procedure|function) {name}\b.*?^end;$", code, re.M | re.S)
    assert match, f"{name} not found in [Code]"
    return match.group(0)


def test_iss_is_plain_ascii() -> None:
    # Inno Setup reads a script without a byte-order mark in the system's ANSI code page.
    ISS.read_bytes().decode("ascii")


def test_iss_installs_per_user_without_administrator_rights_on_x64() -> None:
    setup = setup_directives()
    assert setup["PrivilegesRequired"] == "lowest"
    assert "PrivilegesRequiredOverridesAllowed" not in setup
    assert setup["DefaultDirName"] == r"{localappdata}\Programs\Cowork"
    assert setup["ArchitecturesAllowed"] == "x64compatible"
    assert setup["ArchitecturesInstallIn64BitMode"] == "x64compatible"
    assert setup["Compression"].startswith("lzma2")
    assert setup["CloseApplications"] == "yes"
    assert re.fullmatch(r"\{\{[0-9A-F]{8}(-[0-9A-F]{4}){3}-[0-9A-F]{12}\}", setup["AppId"])
    assert setup["OutputBaseFilename"] == "Cowork-{#AppVersion}-windows-x64-setup"
    assert (ISS.parent / setup["SetupIconFile"].replace("\\", "/")).resolve().is_file()


def test_iss_start_menu_shortcut_and_optional_desktop_icon() -> None:
    icons = iss_sections()["Icons"]
    assert any(
        line.startswith('Name: "{autoprograms}\\Cowork"; Filename: "{app}\\Cowork.exe"') for line in icons
    )
    desktop = [line for line in icons if "{autodesktop}" in line]
    assert desktop
    assert all("Tasks: desktopicon" in line for line in desktop)
    assert any("Flags: unchecked" in line for line in iss_sections()["Tasks"] if "desktopicon" in line)


def test_iss_uses_only_the_defines_build_installer_passes(
    tools: FakeTools, app_dir: Path, certificate: Path, tmp_path: Path
) -> None:
    result = build_with_certificate(tools, app_dir, certificate, tmp_path)
    assert result.returncode == 0, result.stderr
    passed = {arg[2:].split("=", 1)[0] for arg in tools.calls("iscc")[0].argv if arg.startswith("/D")}
    text = ISS.read_text(encoding="ascii")
    used = set(re.findall(r"\{#(\w+)\}", text)) | set(re.findall(r"^#ifn?def (\w+)", text, re.M))
    assert used <= passed, f"defines the script expects but build-installer does not pass: {used - passed}"


def test_iss_data_folder_is_the_one_platformdirs_gives_cowork_on_windows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import platformdirs.windows as windows

    folders = {
        "CSIDL_LOCAL_APPDATA": r"C:\Users\ada\AppData\Local",
        "CSIDL_APPDATA": r"C:\Users\ada\AppData\Roaming",
    }
    monkeypatch.setattr(windows, "get_win_folder", lambda name: folders[name])
    monkeypatch.setattr(windows.os.path, "normpath", lambda path: path)
    monkeypatch.setattr(windows.os.path, "join", lambda *parts: "\\".join(parts))
    dirs = windows.Windows(appname="Cowork", appauthor=False, roaming=False)
    data_dir = folders["CSIDL_LOCAL_APPDATA"] + r"\Cowork"
    # Everything Cowork writes (desktop, runtime and local backend all ask for these) sits in one folder.
    for path in (
        dirs.user_data_dir,
        dirs.user_config_dir,
        dirs.user_state_dir,
        dirs.user_log_dir,
        dirs.user_cache_dir,
    ):
        assert path == data_dir or path.startswith(data_dir + "\\"), path

    assert "ExpandConstant('{localappdata}\\Cowork')" in code_block("CoworkDataDir")


def test_iss_asks_before_deleting_user_data_and_never_in_a_silent_uninstall() -> None:
    body = code_block("CurUninstallStepChanged")
    # After the program's files are gone, not before.
    assert re.search(r"if CurUninstallStep <> usPostUninstall then\s+Exit;", body)
    silent_exit = re.search(r"if UninstallSilent\(\) or not DirExists\(DataDir\) then\s+Exit;", body)
    question = re.search(
        r"MsgBox\(FmtMessage\(CustomMessage\('RemoveUserData'\).*MB_YESNO or MB_DEFBUTTON2\) = IDYES", body
    )
    delete = body.find("DelTree(DataDir")
    assert silent_exit
    assert question
    assert delete > 0
    assert silent_exit.end() < question.start() < delete, "data is deleted only after a Yes, never silently"
    assert body.count("DelTree") == 1
    # Nothing else in the script deletes the data folder behind the user's back.
    sections = iss_sections()
    assert "UninstallDelete" not in sections
    assert all("{localappdata}\\Cowork" not in line for line in sections["InstallDelete"])


def test_iss_uninstaller_stops_for_a_running_cowork() -> None:
    body = code_block("InitializeUninstall")
    assert "while CoworkIsRunning() do" in body
    assert re.search(r"if UninstallSilent\(\) then\s+begin.*?Result := False;", body, re.S)
    assert "MB_OKCANCEL" in body
    running = code_block("CoworkIsRunning")
    assert "AddBackslash(ExpandConstant('{app}'))" in running


def test_iss_uninstaller_does_not_take_itself_for_a_running_cowork() -> None:
    # Inno Setup uninstalls in two processes: {app}\unins000.exe copies itself to a temporary folder,
    # starts the copy (which runs InitializeUninstall) and waits for it to finish. Counted as Cowork,
    # it would keep every uninstall asking to close Cowork, and stop every silent one.
    running = code_block("CoworkIsRunning")
    assert re.search(r"Uninstaller := Uppercase\(ExpandConstant\('\{uninstallexe\}'\)\);", running)
    (condition,) = re.findall(r"if (.+) then\s+begin\s+Log\('Cowork is running", running)
    assert "= AppPrefix" in condition
    assert re.search(r"\bExePath <> Uninstaller\b", condition)
    assert " and " in condition
    assert " or " not in condition


def test_iss_code_comments_hold_no_braces() -> None:
    # Pascal's { } comments do not nest: a constant such as {app} written in one ends it early, and the
    # rest of the comment is compiled as code.
    code = "\n".join(iss_sections()["Code"])
    code = re.sub(r"'[^'\n]*'", "''", code)  # string literals may hold braces ({app} constants)
    for comment in re.findall(r"\{([^}]*)\}", code):
        assert "{" not in comment, f"a brace inside a comment: {{{comment}}}"


def test_iss_is_compiled_from_the_repository_layout() -> None:
    # build-installer finds the script beside itself; the icon it names is the one draw_icon.py makes.
    assert ISS.parent == BUILD_INSTALLER.parent
    assert (REPO_ROOT / "installer" / "icons" / "cowork.ico").is_file()
