"""Path rules (seed 000 §8.3) for the path forms Win32 accepts, checked on every platform through the
pure functions: drive and UNC roots, ``\\\\?\\`` and ``\\\\.\\`` prefixes, drive-relative and
root-relative paths, components Win32 trims (trailing dots and spaces) or cannot be a file name
(only dots or spaces), alternate data streams and 8.3 short names. Each refusal is asserted by its
reason: the user sees it in the denied tool call."""

from __future__ import annotations

import pytest

from agent_runtime.agent_host.policy import Allowed, Denied, ToolCallFacts
from agent_runtime.agent_host.policy.paths import PathError, PathRules, path_key
from contracts.enums import ApprovalMode, Capability, OsFamily
from tests.agent_runtime.agent_host.policy.bundles import NOW, enforcer

WIN = OsFamily.WINDOWS


def key(path: str) -> str:
    return path_key(path, WIN, fold=True)


# ------------------------------------------------------------------ the same file, written differently


@pytest.mark.parametrize(
    ("path", "same_as"),
    [
        ("C:\\Users\\u\\notes.txt", "c:/users/u/notes.txt"),
        ("c:/Users/U/NOTES.TXT", "C:\\users\\u\\notes.txt"),
        ("C:\\Users\\\\u\\\\\\notes.txt", "C:\\Users\\u\\notes.txt"),  # repeated separators are one
        ("C:\\Users\\u\\notes.txt.", "C:\\Users\\u\\notes.txt"),  # Win32 drops trailing dots...
        ("C:\\Users\\u\\notes.txt . .", "C:\\Users\\u\\notes.txt"),  # ...and spaces
        ("C:\\secret.\\x", "C:\\secret\\x"),
        ("C:\\secret \\x", "C:\\secret\\x"),
        ("\\\\?\\C:\\Users\\u", "C:\\Users\\u"),  # the long-path prefix names the same file
        ("\\\\?\\UNC\\server\\share\\dir", "\\\\server\\share\\dir"),
        ("//server/share/dir", "\\\\SERVER\\Share\\DIR"),
        ("C:\\ÄRGER\\datei", "c:\\ärger\\DATEI"),  # case is ignored beyond ASCII too
    ],
)
def test_every_spelling_of_a_windows_path_has_one_key(path: str, same_as: str) -> None:
    assert key(path) == key(same_as)


def test_keys_end_in_a_separator_so_a_prefix_is_a_whole_component() -> None:
    assert key("C:\\Users\\u") == "c:/users/u/"
    assert key("C:\\") == "c:/"
    assert key("\\\\server\\share") == "\\\\server\\share/"
    assert key("\\\\server\\share\\a") == "\\\\server\\share/a/"


def test_only_trailing_dots_and_spaces_are_trimmed() -> None:
    assert key("C:\\BOX") == "c:/box/"
    assert key("C:\\x. .\\y") == "c:/x/y/"
    assert key("C:\\.x\\ y") == "c:/.x/ y/"  # leading dots and spaces stay


def test_different_roots_and_neighbouring_names_stay_different() -> None:
    assert key("C:\\a") != key("D:\\a")
    assert key("\\\\server\\share\\a") != key("\\\\server\\other\\a")
    assert key("\\\\server\\share\\a") != key("C:\\share\\a")
    assert not key("C:\\Users\\bob2").startswith(key("C:\\Users\\bob"))


# ------------------------------------------------------------------ what is refused, and why


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("", "the path is empty"),
        ("C:\\a\x00b", "the path contains a NUL character"),
        ("\\\\.\\C:\\Windows", "device paths are not file paths"),
        ("\\\\.\\pipe\\name", "device paths are not file paths"),
        ("//./PhysicalDrive0", "device paths are not file paths"),
        ("\\\\?\\\\\\.\\C:\\x", "device paths are not file paths"),  # a device path behind \\?\
        ("\\\\?\\\\\\?\\C:\\x", "device paths are not file paths"),
        ("\\\\server", "a UNC path names a server and a share"),
        ("\\\\server\\", "a UNC path names a server and a share"),
        ("\\\\?\\UNC\\server", "a UNC path names a server and a share"),
        ("C:foo\\bar", "the path is not absolute"),  # drive-relative: the drive's current folder
        ("C:", "the path is not absolute"),
        ("\\Users\\u", "the path is not absolute"),  # root-relative: the current drive
        ("Users\\u", "the path is not absolute"),
        ("1:\\x", "the path is not absolute"),
        ("\\\\?\\GLOBALROOT\\Device\\x", "the path is not absolute"),
        ("C:\\a\\..\\b", "the path is not resolved"),
        ("C:\\a\\.\\b", "the path is not resolved"),
        ("C:\\a\\...\\b", "the path is not resolved"),  # only dots: Win32 trims it to nothing
        ("C:\\a\\ \\b", "the path is not resolved"),  # only a space
        ("C:\\a\\. .\\b", "the path is not resolved"),
        ("C:\\a\\file.txt:secret", "the path names an alternate data stream"),
        ("C:\\a\\file.txt::$DATA", "the path names an alternate data stream"),
        ("C:\\a\\dir:x\\file", "the path names an alternate data stream"),
        ("C:\\PROGRA~1\\app", "the path has an unresolved 8.3 short name (PROGRA~1)"),
        ("C:\\a\\LONGNA~12.TXT", "the path has an unresolved 8.3 short name (LONGNA~12.TXT)"),
    ],
)
def test_a_windows_path_that_cannot_be_checked_is_refused_with_its_reason(path: str, reason: str) -> None:
    with pytest.raises(PathError) as caught:
        key(path)
    assert str(caught.value).startswith(reason)
    if path and "\x00" not in path:
        assert str(caught.value).endswith(path) or "(" in reason


@pytest.mark.parametrize("path", ["C:\\a~b\\x", "C:\\~\\x", "C:\\a\\x~y"])
def test_a_tilde_without_a_digit_after_it_is_an_ordinary_name(path: str) -> None:
    assert key(path).startswith("c:/")


def test_the_8_3_rule_applies_after_trailing_dots_are_trimmed() -> None:
    with pytest.raises(PathError, match=r"8\.3 short name \(PROGRA~1\)"):
        key("C:\\PROGRA~1.\\x")


# ------------------------------------------------------------------ through the enforcer


def _read(path: str) -> ToolCallFacts:
    return ToolCallFacts("ReadFile", {"path": path}, resolved_path=path, workspace_roots=("C:\\proj",))


def _check(policy: object, facts: ToolCallFacts) -> object:
    return policy.check(facts, Capability.FILE_READ, now=NOW, approval_mode=ApprovalMode.NEVER)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "path",
    [
        "C:\\Users\\u\\Secret\\a.txt",
        "c:/users/U/SECRET/a.txt",
        "C:\\Users\\u\\Secret.\\a.txt",
        "C:\\Users\\u\\Secret  \\a.txt",
        "\\\\?\\C:\\Users\\u\\Secret\\a.txt",
        "C:\\Users\\u\\Secret",
    ],
)
def test_a_blocked_windows_folder_is_blocked_however_the_path_is_written(path: str) -> None:
    policy = enforcer(
        {"name": "File.Read", "allowedPaths": ["C:\\"], "blockedPaths": ["C:\\Users\\u\\Secret"]},
        os_family=WIN,
    )
    outcome = _check(policy, _read(path))
    assert outcome == Denied(f"Path is blocked: {path}")


def test_a_blocked_unc_share_is_blocked_through_the_long_path_prefix() -> None:
    policy = enforcer({"name": "File.Read", "blockedPaths": ["\\\\fs\\hr"]}, os_family=WIN)
    for path in ("\\\\fs\\hr\\pay.xlsx", "\\\\?\\UNC\\FS\\HR\\pay.xlsx", "//fs/hr/pay.xlsx"):
        assert _check(policy, _read(path)) == Denied(f"Path is blocked: {path}")
    assert isinstance(_check(policy, _read("\\\\fs\\hr2\\pay.xlsx")), Allowed)


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("\\\\.\\C:\\Users\\u\\a.txt", "device paths are not file paths"),
        ("C:proj\\a.txt", "the path is not absolute (it needs a drive letter or a UNC share)"),
        ("C:\\proj\\...\\a.txt", "the path is not resolved (it has . or .. components)"),
        ("C:\\proj\\a.txt:hidden", "the path names an alternate data stream"),
    ],
)
def test_a_windows_path_the_policy_cannot_check_is_denied_with_the_reason(path: str, reason: str) -> None:
    policy = enforcer({"name": "File.Read", "blockedPaths": ["D:\\x"]}, os_family=WIN)
    assert _check(policy, _read(path)) == Denied(f"The path cannot be checked: {reason}: {path}.")


def test_windows_allowed_entries_ignore_case_like_the_file_system() -> None:
    policy = enforcer({"name": "File.Read", "allowedPaths": ["C:\\Proj"]}, os_family=WIN)
    assert isinstance(_check(policy, _read("c:\\PROJ\\a.txt")), Allowed)
    assert _check(policy, _read("C:\\Project\\a.txt")) == Denied(
        "Path not in allowed paths: C:\\Project\\a.txt"
    )


def test_a_bad_windows_entry_is_named_in_the_load_error() -> None:
    from agent_runtime.agent_host.policy import PolicyBundleInvalid

    with pytest.raises(PolicyBundleInvalid) as caught:
        enforcer(
            {"name": "File.Read", "blockedPaths": ["C:\\ok", "\\\\.\\pipe\\x"]},
            os_family=WIN,
        )
    assert caught.value.shape.details["entry"] == "\\\\.\\pipe\\x"
    assert "device paths are not file paths" in caught.value.shape.message


def test_rules_built_for_windows_fold_allowed_entries_too() -> None:
    assert PathRules(["C:\\A"], WIN, blocked=False).folds
    assert not PathRules(["/a"], OsFamily.LINUX, blocked=False).folds
    assert PathRules(["/a"], OsFamily.MACOS, blocked=True).folds
