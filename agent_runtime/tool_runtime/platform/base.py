"""The OS abstraction the tools stand on (seed 003 §6): paths, the shell, process-tree kill, encodings.

A ``Platform`` owns no global state: the environment, symlink resolution and executable checks are
handed in (defaulting to this process's), so Windows behaviour is testable on Linux through the same
interface, with pure path functions and injected filesystem operations.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from agent_runtime.tool_runtime.errors import ToolFailure
from agent_runtime.tool_runtime.platform.encoding import codec_name
from contracts.errors import ErrorCode

__all__ = ["Platform", "ShellCommand"]

# The longest single name (path component) of the file systems these OSes use: APFS, ext4, NTFS.
MAX_COMPONENT_LENGTH = 255


@dataclass(frozen=True)
class ShellCommand:
    """How to start the platform shell on one command (seed 003 §6.2).

    ``argv`` is the program and its arguments. On Windows ``command_line`` is also set: cmd.exe does
    not parse its command line the way ``CreateProcess`` quoting assumes, so the line is handed over
    verbatim rather than re-quoted from ``argv``.
    """

    argv: tuple[str, ...]
    command_line: str | None = None


class Platform(ABC):
    """Path rules, shell resolution, process-tree kill and encoding fallback of one OS."""

    #: ``"linux"``, ``"macos"`` or ``"windows"``.
    name: str
    #: Whether two paths differing only in case name different files (for containment checks).
    case_sensitive: bool
    #: The longest path the OS accepts, in characters (its limit less the terminating NUL).
    max_path_length: int
    #: The path separator paths are normalised to.
    sep: str

    def __init__(
        self,
        *,
        environ: Mapping[str, str] | None = None,
        realpath: Callable[[str], str] | None = None,
    ) -> None:
        self._environ: Mapping[str, str] = os.environ if environ is None else environ
        self._realpath = realpath if realpath is not None else self._default_realpath

    # ------------------------------------------------------------------ paths (seed 003 §6.1, §8.1)

    def normalize_path(
        self,
        raw: str,
        *,
        field: str,
        workspace_root: str | None = None,
        resolve_final: bool = True,
    ) -> str:
        """Validate and resolve a path argument; a ``ToolFailure(INVALID_REQUEST)`` names the problem.

        Steps of seed 003 §6.1 and §8.1: no NUL bytes, ``~`` expanded (``~name`` refused), separators
        normalised, absolute, valid names, length within the OS limit, no ``..`` climbing out of the
        workspace, symlinks resolved. With ``resolve_final=False`` the last component is kept as
        written (its parent is resolved) so that a symlink itself can be deleted rather than its target.
        """
        if "\x00" in raw:
            raise _invalid(field, "must not contain NUL bytes")
        if not raw.strip():
            raise _invalid(field, "must not be empty")
        expanded = self._to_native(self._expand_user(raw, field))
        if not self.is_absolute(expanded):
            raise _invalid(field, f"must be an absolute path (got {_shown(raw)})")
        self._check_names(expanded, field)
        lexical = self.normpath(expanded)
        self._check_length(lexical, field)
        climbs = ".." in self.split_components(expanded)
        if climbs and workspace_root is not None and not self._within_workspace(lexical, workspace_root):
            raise _invalid(field, f"climbs out of the workspace through '..' (got {_shown(raw)})")
        resolved = self._resolve(expanded, lexical, resolve_final)
        if climbs and workspace_root is not None and not self._within_workspace(resolved, workspace_root):
            # A symlink inside the workspace followed by '..' can land outside it even when the
            # lexical form stays inside: check the path the OS will really use as well.
            raise _invalid(field, f"climbs out of the workspace through '..' (got {_shown(raw)})")
        self._check_length(resolved, field)
        return resolved

    def is_within(self, path: str, root: str) -> bool:
        """Whether ``path`` is ``root`` or below it, by this OS's case rules."""
        p, r = self._comparable(self.normpath(path)), self._comparable(self.normpath(root))
        if p == r:
            return True
        prefix = r if r.endswith(self.sep) else r + self.sep
        return p.startswith(prefix)

    def _within_workspace(self, path: str, workspace_root: str) -> bool:
        roots = {workspace_root, self._realpath(workspace_root)}
        return any(self.is_within(path, root) for root in roots)

    def _comparable(self, path: str) -> str:
        return path if self.case_sensitive else path.casefold()

    def _resolve(self, expanded: str, lexical: str, resolve_final: bool) -> str:
        if resolve_final:
            return self._realpath(expanded)
        parent, name = self.split(lexical)
        if name in ("", ".", ".."):
            return self._realpath(expanded)
        return self.join(self._realpath(parent), name)

    def _check_length(self, path: str, field: str) -> None:
        limit = self.path_length_limit(path)
        if len(path) > limit:
            raise _invalid(field, f"is {len(path)} characters long; this OS allows at most {limit}")

    def _check_names(self, path: str, field: str) -> None:
        for name in self.split_components(path):
            if len(name) > MAX_COMPONENT_LENGTH:
                raise _invalid(field, f"has a name longer than {MAX_COMPONENT_LENGTH} characters")
            problem = self.name_problem(name)
            if problem is not None:
                raise _invalid(field, problem)

    def home(self) -> str:
        """The user's home directory, for ``~`` expansion."""
        return os.path.expanduser("~")

    def _expand_user(self, raw: str, field: str) -> str:
        # Only "~" and "~/..." (and "~\\..." where that is the separator) are the user's own home.
        # "~otheruser" would reach into another account's home: refused by name, so the caller learns
        # why rather than being told the path is not absolute.
        if raw == "~" or raw.startswith(("~/", "~" + self.sep)):
            return self.home() + raw[1:]
        if raw.startswith("~"):
            raise _invalid(
                field,
                f"names another account's home folder ({_shown(raw)}); only your own home is accepted,"
                " written '~' or '~/…'",
            )
        return raw

    @abstractmethod
    def _default_realpath(self, path: str) -> str: ...

    @abstractmethod
    def _to_native(self, path: str) -> str:
        """Separators normalised to the OS convention."""

    @abstractmethod
    def is_absolute(self, path: str) -> bool: ...

    @abstractmethod
    def normpath(self, path: str) -> str:
        """``.`` and ``..`` removed lexically, separators normalised."""

    @abstractmethod
    def split(self, path: str) -> tuple[str, str]: ...

    @abstractmethod
    def join(self, parent: str, name: str) -> str: ...

    @abstractmethod
    def split_components(self, path: str) -> list[str]:
        """The names a path is made of (without its root or drive)."""

    @abstractmethod
    def path_length_limit(self, path: str) -> int: ...

    def name_problem(self, name: str) -> str | None:
        """Why a file name is not allowed on this OS, or ``None``."""
        return None

    # ------------------------------------------------------------------ shell (seed 003 §6.2)

    #: The longest command the shell can be handed, in UTF-8 bytes.
    max_command_bytes: int

    def command_problem(self, command: str) -> str | None:
        """Why the shell cannot take ``command`` (too long for the OS), or ``None``."""
        size = len(command.encode("utf-8", errors="surrogatepass"))
        if size > self.max_command_bytes:
            return (
                f"is {size} bytes long; the shell accepts at most {self.max_command_bytes} "
                "(pass long input through stdin instead)"
            )
        return None

    @abstractmethod
    def shell_command(self, command: str) -> ShellCommand:
        """How to run ``command`` through the platform shell."""

    @abstractmethod
    def kill_tree_command(self, pid: int) -> tuple[str, ...] | None:
        """A command that kills the process tree of ``pid``, where the OS needs one (Windows)."""

    # ------------------------------------------------------------------ encodings (seed 003 §6.3)

    @abstractmethod
    def default_encoding(self) -> str | None:
        """The OS's legacy text encoding tried after UTF-8, or ``None`` when that is UTF-8 itself."""

    def fallback_encodings(self, requested: str) -> tuple[str, ...]:
        """``requested`` → the OS default → latin-1, without repeats (codec names normalised)."""
        chain: list[str] = []
        for name in (requested, self.default_encoding(), "latin-1"):
            if name is not None and codec_name(name) not in chain:
                chain.append(codec_name(name))
        return tuple(chain)


def _invalid(field: str, problem: str) -> ToolFailure:
    return ToolFailure(ErrorCode.INVALID_REQUEST, f"{field} {problem}")


def _shown(raw: str, limit: int = 120) -> str:
    return repr(raw if len(raw) <= limit else raw[:limit] + "…")
