"""Windows (seed 003 §6): ntpath rules, cmd.exe, ``taskkill /T /F``, cp1252.

Everything here is pure string work or goes through the injected ``realpath``, so it runs — and is
tested — on any OS; on Windows itself ``realpath`` is ``os.path.realpath``
(``GetFinalPathNameByHandle``).
"""

from __future__ import annotations

import ntpath
import os
import sys
from collections.abc import Callable, Mapping

from agent_runtime.tool_runtime.platform.base import Platform, ShellCommand

__all__ = ["WindowsPlatform"]

LONG_PATH_PREFIX = "\\\\?\\"
MAX_PATH = 259  # MAX_PATH is 260 with the terminating NUL
MAX_LONG_PATH = 32_767

# Device names Windows reserves in every directory, with or without an extension ("nul.txt" is NUL).
_RESERVED_NAMES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{port}{n}" for port in ("COM", "LPT") for n in (*"123456789", "¹", "²", "³")}
)
_INVALID_CHARACTERS = frozenset('<>:"|?*') | {chr(code) for code in range(32)}


def _lexical_realpath(path: str) -> str:
    # Off Windows there is no NTFS to ask; tests inject a realpath that models the links they need.
    return ntpath.normpath(path)


class WindowsPlatform(Platform):
    name = "windows"
    case_sensitive = False
    max_path_length = MAX_PATH
    sep = "\\"
    # cmd.exe handles command lines up to 8191 characters; the quotes around the command take two.
    max_command_bytes = 8189

    def __init__(
        self,
        *,
        environ: Mapping[str, str] | None = None,
        realpath: Callable[[str], str] | None = None,
    ) -> None:
        super().__init__(environ=environ, realpath=realpath)

    def _default_realpath(self, path: str) -> str:
        if sys.platform == "win32":
            return os.path.realpath(path)
        return _lexical_realpath(path)

    def _env(self, name: str) -> str | None:
        # Windows environment names are case-insensitive ("ComSpec", "COMSPEC").
        for key, value in self._environ.items():
            if key.upper() == name.upper():
                return value
        return None

    def home(self) -> str:
        profile = self._env("USERPROFILE")
        if profile:
            return profile
        drive, path = self._env("HOMEDRIVE"), self._env("HOMEPATH")
        if drive and path:
            return drive + path
        return super().home()

    def _to_native(self, path: str) -> str:
        return path.replace("/", "\\")

    def is_absolute(self, path: str) -> bool:
        drive, rest = ntpath.splitdrive(path)
        if not drive or drive.startswith("\\\\.\\"):
            # "\\foo" is relative to the current drive, "C:foo" to that drive's current directory
            # and "\\.\..." names a device: none is an absolute file path.
            return False
        if drive.startswith("\\\\"):
            return rest == "" or rest.startswith("\\")
        return rest.startswith("\\")

    def normpath(self, path: str) -> str:
        if path.startswith(LONG_PATH_PREFIX):
            # The OS takes "\\?\" paths literally (no "." or ".." processing); so do we.
            return path
        return ntpath.normpath(path)

    def split(self, path: str) -> tuple[str, str]:
        return ntpath.split(path)

    def join(self, parent: str, name: str) -> str:
        return ntpath.join(parent, name)

    def split_components(self, path: str) -> list[str]:
        _, rest = ntpath.splitdrive(path)
        return [part for part in rest.split("\\") if part]

    def path_length_limit(self, path: str) -> int:
        return MAX_LONG_PATH if path.startswith(LONG_PATH_PREFIX) else MAX_PATH

    def name_problem(self, name: str) -> str | None:
        if name in (".", ".."):
            return None
        bad = sorted(set(name) & _INVALID_CHARACTERS)
        if bad:
            shown = ", ".join(repr(c) for c in bad)
            return f"has a name with characters Windows does not allow ({shown}): {name!r}"
        if name.endswith((".", " ")):
            # Windows silently drops them, so "a.txt." and "a.txt" would be one file.
            return f"has a name ending in a dot or space, which Windows drops: {name!r}"
        if name.split(".", 1)[0].rstrip(" ").upper() in _RESERVED_NAMES:
            return f"uses a name Windows reserves for a device: {name!r}"
        return None

    def shell_command(self, command: str) -> ShellCommand:
        comspec = self.cmd_exe()
        # /d: skip AutoRun commands from the registry; /s with the outer quotes: cmd strips exactly
        # those two quotes and runs the rest as typed (the rule Node.js relies on too).
        return ShellCommand(
            argv=(comspec, "/d", "/s", "/c", command),
            command_line=f'"{comspec}" /d /s /c "{command}"',
        )

    def cmd_exe(self) -> str:
        comspec = self._env("ComSpec")
        if comspec and self.is_absolute(comspec) and ntpath.basename(comspec).lower() == "cmd.exe":
            return comspec
        return ntpath.join(self._system_root(), "System32", "cmd.exe")

    def _system_root(self) -> str:
        root = self._env("SystemRoot")
        return root if root and self.is_absolute(root) else "C:\\Windows"

    def kill_tree_command(self, pid: int) -> tuple[str, ...] | None:
        taskkill = ntpath.join(self._system_root(), "System32", "taskkill.exe")
        return (taskkill, "/T", "/F", "/PID", str(pid))

    def default_encoding(self) -> str | None:
        return "cp1252"
