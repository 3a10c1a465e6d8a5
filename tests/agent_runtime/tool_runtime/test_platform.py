"""Platform adapters (seed 003 §6): Linux, macOS and Windows rules, all tested here through the interface."""

from __future__ import annotations

import ntpath
import posixpath

import pytest

from agent_runtime.tool_runtime import LinuxPlatform, MacOSPlatform, WindowsPlatform, current_platform
from agent_runtime.tool_runtime.errors import ToolFailure
from agent_runtime.tool_runtime.platform.base import Platform
from agent_runtime.tool_runtime.tools.shell.process import command_environment
from contracts.errors import ErrorCode

WINDOWS_ENV = {
    "USERPROFILE": "C:\\Users\\ana",
    "COMSPEC": "C:\\Windows\\system32\\cmd.exe",
    "SystemRoot": "C:\\Windows",
}


def windows(links: dict[str, str] | None = None) -> WindowsPlatform:
    """Windows with a fake file system: ``links`` maps a link path to its target (case-insensitive)."""
    table = {k.lower(): v for k, v in (links or {}).items()}

    def realpath(path: str) -> str:
        path = ntpath.normpath(path)
        for link, target in table.items():
            if path.lower() == link or path.lower().startswith(link + "\\"):
                return ntpath.normpath(target + path[len(link) :])
        return path

    return WindowsPlatform(environ=WINDOWS_ENV, realpath=realpath)


def problem(platform: Platform, raw: str, root: str | None = None, **options: bool) -> str:
    with pytest.raises(ToolFailure) as caught:
        platform.normalize_path(raw, field="arguments.path", workspace_root=root, **options)
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    return caught.value.message


def test_this_os_gets_its_adapter() -> None:
    assert isinstance(current_platform(), LinuxPlatform)


# ---------------------------------------------------------------- Windows paths


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("C:\\Users\\ana\\project\\a.txt", "C:\\Users\\ana\\project\\a.txt"),
        ("C:/Users/ana/project/a.txt", "C:\\Users\\ana\\project\\a.txt"),
        ("c:\\users\\ana\\.\\project\\sub\\..\\a.txt", "c:\\users\\ana\\project\\a.txt"),
        ("~\\project\\a.txt", "C:\\Users\\ana\\project\\a.txt"),
        ("~/project/a.txt", "C:\\Users\\ana\\project\\a.txt"),
        ("\\\\server\\share\\docs\\a.txt", "\\\\server\\share\\docs\\a.txt"),
        (
            "\\\\?\\C:\\Users\\ana\\" + "d" * 200 + "\\" + "e" * 200,
            "\\\\?\\C:\\Users\\ana\\" + "d" * 200 + "\\" + "e" * 200,
        ),
    ],
)
def test_windows_paths_are_normalised(raw: str, expected: str) -> None:
    assert windows().normalize_path(raw, field="arguments.path", workspace_root="C:\\Users\\ana") == expected


def test_windows_symlinks_are_resolved_through_the_adapter() -> None:
    platform = windows({"C:\\Users\\ana\\link": "D:\\data"})
    assert platform.normalize_path("C:\\Users\\ana\\link\\x.txt", field="f") == "D:\\data\\x.txt"


def test_windows_deletes_keep_the_final_link_unresolved() -> None:
    platform = windows({"C:\\Users\\ana\\link": "D:\\data"})
    assert (
        platform.normalize_path("C:\\Users\\ana\\link", field="f", resolve_final=False)
        == "C:\\Users\\ana\\link"
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("project\\a.txt", "must be an absolute path"),
        ("\\project\\a.txt", "must be an absolute path"),
        ("C:project\\a.txt", "must be an absolute path"),
        ("\\\\.\\PhysicalDrive0", "must be an absolute path"),
        ("C:\\Users\\ana\\CON", "reserves for a device"),
        ("C:\\Users\\ana\\nul.txt", "reserves for a device"),
        ("C:\\Users\\ana\\Com1.log", "reserves for a device"),
        ("C:\\Users\\ana\\LPT9", "reserves for a device"),
        ("C:\\Users\\ana\\a.txt:secret", "characters Windows does not allow"),
        ("C:\\Users\\ana\\what?.txt", "characters Windows does not allow"),
        ("C:\\Users\\ana\\a<b", "characters Windows does not allow"),
        ("C:\\Users\\ana\\trailing.", "ending in a dot or space"),
        ("C:\\Users\\ana\\trailing ", "ending in a dot or space"),
        ("C:\\Users\\ana\\a\x00b", "must not contain NUL bytes"),
        ("C:\\" + "x\\" * 140, "this OS allows at most 259"),
        ("\\\\?\\C:\\" + "y\\" * 17000, "this OS allows at most 32767"),
    ],
)
def test_bad_windows_paths_are_refused(raw: str, message: str) -> None:
    assert message in problem(windows(), raw)


def test_windows_compares_paths_without_case() -> None:
    platform = windows()
    assert platform.is_within("c:\\USERS\\Ana\\Project\\x", "C:\\Users\\ana\\project")
    # Climbing out is judged case-insensitively as well.
    assert "climbs out" in problem(
        platform, "C:\\USERS\\ANA\\PROJECT\\..\\..\\bob\\x", "C:\\Users\\ana\\project"
    )
    assert platform.normalize_path(
        "C:\\USERS\\ANA\\PROJECT\\sub\\..\\x", field="f", workspace_root="c:\\users\\ana\\project"
    )


def test_windows_applies_dotdot_before_links_as_win32_does() -> None:
    # Win32 normalises ".." lexically before the file system sees the path, unlike POSIX.
    platform = windows({"C:\\ws\\link": "D:\\elsewhere\\deep"})
    assert (
        platform.normalize_path("C:\\ws\\link\\..\\x.txt", field="f", workspace_root="C:\\ws")
        == "C:\\ws\\x.txt"
    )


def test_windows_runs_commands_through_cmd_exe_verbatim() -> None:
    shell = windows().shell_command('echo "a & b" > out.txt')
    assert shell.argv == ("C:\\Windows\\system32\\cmd.exe", "/d", "/s", "/c", 'echo "a & b" > out.txt')
    assert shell.command_line == '"C:\\Windows\\system32\\cmd.exe" /d /s /c "echo "a & b" > out.txt"'


def test_windows_without_comspec_finds_cmd_under_the_system_root() -> None:
    platform = WindowsPlatform(environ={"SystemRoot": "D:\\Win"})
    assert platform.shell_command("dir").argv[0] == "D:\\Win\\System32\\cmd.exe"


def test_windows_kills_a_tree_with_taskkill() -> None:
    assert windows().kill_tree_command(4242) == (
        "C:\\Windows\\System32\\taskkill.exe",
        "/T",
        "/F",
        "/PID",
        "4242",
    )


def test_windows_limits_commands_to_what_cmd_accepts() -> None:
    assert windows().command_problem("x" * 8189) is None
    assert "at most 8189" in (windows().command_problem("x" * 8190) or "")


def test_windows_falls_back_to_cp1252() -> None:
    assert windows().fallback_encodings("utf-8") == ("utf-8", "cp1252", "iso8859-1")


def test_secrets_are_removed_from_a_windows_style_environment_whatever_their_case() -> None:
    env = command_environment({"Cowork_Rpc_Secret": "s", "Path": "C:\\bin"}, "run-1")
    assert env == {"Path": "C:\\bin", "COWORK_TOOL_RUN_ID": "run-1"}


# ---------------------------------------------------------------- macOS and Linux


def test_macos_uses_the_users_posix_shell_or_zsh() -> None:
    assert MacOSPlatform(environ={"SHELL": "/bin/bash"}, is_executable=lambda p: True).shell() == "/bin/bash"
    assert MacOSPlatform(environ={}, is_executable=lambda p: True).shell() == "/bin/zsh"
    # fish would misread the POSIX commands the model writes.
    fish = MacOSPlatform(environ={"SHELL": "/opt/homebrew/bin/fish"}, is_executable=lambda p: True)
    assert fish.shell_command("ls").argv == ("/bin/zsh", "-c", "ls")


def test_linux_uses_shell_when_it_exists_else_bin_sh() -> None:
    assert (
        LinuxPlatform(environ={"SHELL": "/usr/bin/zsh"}, is_executable=lambda p: True).shell()
        == "/usr/bin/zsh"
    )
    assert (
        LinuxPlatform(environ={"SHELL": "/usr/bin/zsh"}, is_executable=lambda p: False).shell() == "/bin/sh"
    )
    assert LinuxPlatform(environ={"SHELL": "zsh"}, is_executable=lambda p: True).shell() == "/bin/sh"


@pytest.mark.parametrize("raw", ["~root", "~root/.ssh/id_rsa", "~other\\notes.txt", "~.ssh", "~~/x"])
def test_a_path_naming_another_accounts_home_is_refused_on_every_os(raw: str) -> None:
    # Only "~" and "~/…" (on Windows "~\\…" too) are the user's own home; "~name" is another account's.
    for platform in (
        LinuxPlatform(environ={"HOME": "/home/ana"}, realpath=posixpath.normpath),
        MacOSPlatform(environ={"HOME": "/Users/ana"}, realpath=posixpath.normpath),
        windows(),
    ):
        message = problem(platform, raw)
        assert message.startswith("arguments.path ")
        assert "another account's home folder" in message
        assert "'~/" in message  # says what to write instead


def test_windows_accepts_its_own_home_with_either_separator() -> None:
    assert windows().normalize_path("~", field="f") == "C:\\Users\\ana"
    assert windows().normalize_path("~\\a.txt", field="f") == "C:\\Users\\ana\\a.txt"


def test_posix_kills_trees_with_signals_not_a_command() -> None:
    assert LinuxPlatform().kill_tree_command(1) is None


def test_macos_paths_are_limited_to_1023_characters_and_compared_without_case() -> None:
    mac = MacOSPlatform(environ={"HOME": "/Users/ana"}, realpath=posixpath.normpath)
    assert "at most 1023" in problem(mac, "/Users/" + "abcdefg/" * 130)
    assert mac.is_within("/Users/ana/WS/x", "/Users/ana/ws")
    assert mac.normalize_path("~/ws/../notes.txt", field="f") == "/Users/ana/notes.txt"


def test_linux_paths_are_limited_to_4095_characters_and_case_sensitive() -> None:
    linux = LinuxPlatform(realpath=posixpath.normpath)
    assert linux.normalize_path("/" + "abcdefg/" * 500, field="f")
    assert "at most 4095" in problem(linux, "/" + "abcdefg/" * 520)
    assert not linux.is_within("/home/ana/WS/x", "/home/ana/ws")


def test_a_leading_double_slash_is_one_root() -> None:
    assert LinuxPlatform().normalize_path("//etc//hosts", field="f") == "/etc/hosts"


def test_macos_falls_back_to_mac_roman() -> None:
    assert MacOSPlatform().fallback_encodings("utf-8") == ("utf-8", "mac-roman", "iso8859-1")


@pytest.mark.parametrize(
    ("locale_encoding", "chain"),
    [
        ("UTF-8", ("utf-8", "iso8859-1")),
        ("ANSI_X3.4-1968", ("utf-8", "iso8859-1")),
        ("EUC-JP", ("utf-8", "euc_jp", "iso8859-1")),
    ],
)
def test_linux_falls_back_to_a_non_utf8_locale_encoding(locale_encoding: str, chain: tuple[str, ...]) -> None:
    assert LinuxPlatform(locale_encoding=locale_encoding).fallback_encodings("utf-8") == chain
