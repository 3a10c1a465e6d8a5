"""macOS and Linux (seed 003 §6): POSIX paths, the user's POSIX shell, signals for the process tree."""

from __future__ import annotations

import locale
import os
import posixpath
from collections.abc import Callable, Mapping

from agent_runtime.tool_runtime.platform.base import Platform, ShellCommand
from agent_runtime.tool_runtime.platform.encoding import codec_name

__all__ = ["LinuxPlatform", "MacOSPlatform", "PosixPlatform"]

# Shells whose ``-c`` language is the POSIX one the model writes. A ``$SHELL`` of fish, nushell, tcsh
# or xonsh would misread ordinary commands, so those users get the system shell instead.
POSIX_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "oksh", "loksh"})


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


class PosixPlatform(Platform):
    """What macOS and Linux share; the two variants differ in shell, case rules and path limit."""

    sep = "/"
    default_shell: str

    def __init__(
        self,
        *,
        environ: Mapping[str, str] | None = None,
        realpath: Callable[[str], str] | None = None,
        is_executable: Callable[[str], bool] = _is_executable,
    ) -> None:
        super().__init__(environ=environ, realpath=realpath)
        self._is_executable = is_executable

    def _default_realpath(self, path: str) -> str:
        return os.path.realpath(path)

    def home(self) -> str:
        home = self._environ.get("HOME")
        return home if home and home.startswith("/") else super().home()

    def _to_native(self, path: str) -> str:
        return path

    def is_absolute(self, path: str) -> bool:
        return path.startswith("/")

    def normpath(self, path: str) -> str:
        normal = posixpath.normpath(path)
        # POSIX lets "//" at the start mean something else; no macOS or Linux path relies on it.
        return "/" + normal.lstrip("/") if normal.startswith("//") else normal

    def split(self, path: str) -> tuple[str, str]:
        return posixpath.split(path)

    def join(self, parent: str, name: str) -> str:
        return posixpath.join(parent, name)

    def split_components(self, path: str) -> list[str]:
        return [part for part in path.split("/") if part]

    def path_length_limit(self, path: str) -> int:
        return self.max_path_length

    def shell_command(self, command: str) -> ShellCommand:
        return ShellCommand(argv=(self.shell(), "-c", command))

    def shell(self) -> str:
        """``$SHELL`` when it is an executable POSIX shell, otherwise the platform's default."""
        shell = self._environ.get("SHELL", "")
        if shell.startswith("/") and posixpath.basename(shell) in POSIX_SHELLS and self._is_executable(shell):
            return shell
        return self.default_shell

    def kill_tree_command(self, pid: int) -> tuple[str, ...] | None:
        # POSIX kills the tree with signals to the process group (see tools/shell/process.py).
        return None


class MacOSPlatform(PosixPlatform):
    name = "macos"
    # APFS and HFS+ are case-insensitive (and case-preserving) by default, so "/Users/a/WS" and
    # "/Users/a/ws" are one directory; the seed's table says case-sensitive, which would make the
    # workspace-containment check refuse the same folder spelled in another case.
    case_sensitive = False
    max_path_length = 1023  # PATH_MAX is 1024 with the terminating NUL
    default_shell = "/bin/zsh"
    # ARG_MAX (1 MiB) covers the arguments and the environment together; leave the environment room.
    max_command_bytes = 256 * 1024

    def default_encoding(self) -> str | None:
        return "mac_roman"


class LinuxPlatform(PosixPlatform):
    name = "linux"
    case_sensitive = True
    max_path_length = 4095  # PATH_MAX is 4096 with the terminating NUL
    default_shell = "/bin/sh"
    max_command_bytes = 128 * 1024 - 1  # MAX_ARG_STRLEN, the limit on one argument, less its NUL

    def __init__(
        self,
        *,
        environ: Mapping[str, str] | None = None,
        realpath: Callable[[str], str] | None = None,
        is_executable: Callable[[str], bool] = _is_executable,
        locale_encoding: str | None = None,
    ) -> None:
        super().__init__(environ=environ, realpath=realpath, is_executable=is_executable)
        self._locale_encoding = locale_encoding

    def default_encoding(self) -> str | None:
        encoding = self._locale_encoding or locale.getpreferredencoding(False)
        try:
            name = codec_name(encoding)
        except LookupError:
            return None
        # A UTF-8 or plain-ASCII ("C" locale) default adds nothing before latin-1.
        return None if name in ("utf-8", "ascii") else name
