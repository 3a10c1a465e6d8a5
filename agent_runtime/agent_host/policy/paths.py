"""Path rules (seed 000 §8.3): whole-component prefix matching on resolved absolute paths.

* ``/a/b`` admits ``/a/b`` and ``/a/b/c``, never ``/a/bc``.
* The caller resolves ``.``, ``..`` and symlinks first (the policy does no I/O); a path that is not
  absolute or still has ``.``/``..`` components is refused rather than guessed at.
* Windows: ``\\`` and ``/`` are the same separator, drive letters and UNC shares are roots,
  comparison ignores case, trailing dots and spaces of a component are ignored (as Win32 does), and
  a component with ``:`` (an alternate data stream) or an 8.3 short name (``PROGRA~1``) is refused.
* macOS and Linux: volumes may be case- and normalisation-insensitive (APFS by default), which the
  enforcer cannot know. So it errs towards refusal both ways: a blocked entry matches regardless of
  case and Unicode normalisation, an allowed entry only exactly.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from contracts.enums import OsFamily

__all__ = ["PathError", "PathKey", "PathRules", "path_key"]

PathKey = str
"""A path as its components joined and ended by ``/`` (``/home/u/``, ``c:/users/``), so that a
component-wise prefix is a string prefix."""

_SHORT_NAME = re.compile(r"~[0-9]")
_DRIVE = re.compile(r"[A-Za-z]:")


class PathError(ValueError):
    """The path cannot be checked: not absolute, not resolved, or not a plain file path."""


def _fold(component: str) -> str:
    if component.isascii():
        return component.lower()  # the same as NFC + casefold for ASCII, and much cheaper
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", component).casefold())


def path_key(path: str, os_family: OsFamily, *, fold: bool) -> PathKey:
    """The path as a :data:`PathKey`; with ``fold``, in the form used for blocked entries (case- and
    normalisation-insensitive). Raises :class:`PathError`."""
    if not path:
        raise PathError("the path is empty")
    if "\x00" in path:
        raise PathError("the path contains a NUL character")
    if os_family is OsFamily.WINDOWS:
        return _windows_key(path)
    if not path.startswith("/"):
        raise PathError(f"the path is not absolute: {path}")
    if fold:
        # Folding never joins or splits across "/" (a starter that no character composes with).
        components = [part for part in _fold(path).split("/") if part]
    else:
        components = [part for part in path.split("/") if part]
    if "." in components or ".." in components:
        raise PathError(f"the path is not resolved (it has . or .. components): {path}")
    return "/".join(["", *components, ""])


def _windows_key(path: str) -> PathKey:
    text = path.replace("/", "\\")
    if text.startswith("\\\\?\\UNC\\"):
        text = "\\\\" + text[len("\\\\?\\UNC\\") :]
    elif text.startswith("\\\\?\\"):
        text = text[len("\\\\?\\") :]
    if text.startswith(("\\\\.\\", "\\\\?\\")):
        raise PathError(f"device paths are not file paths: {path}")
    if text.startswith("\\\\"):
        parts = [part for part in text.split("\\") if part]
        if len(parts) < 2:
            raise PathError(f"a UNC path names a server and a share: {path}")
        root = "\\\\" + parts[0] + "\\" + parts[1]
        rest = parts[2:]
    elif _DRIVE.match(text) and text[2:3] == "\\":
        root = text[:2]
        rest = [part for part in text.split("\\")[1:] if part]
    else:
        raise PathError(f"the path is not absolute (it needs a drive letter or a UNC share): {path}")
    components: list[str] = []
    for part in rest:
        # Win32 ignores trailing dots and spaces: C:\secret.\x is C:\secret\x. A component of
        # only dots or spaces (``.`` and ``..`` included) is left with nothing.
        trimmed = part.rstrip(". ")
        if not trimmed:
            raise PathError(f"the path is not resolved (it has . or .. components): {path}")
        if ":" in trimmed:
            raise PathError(f"the path names an alternate data stream: {path}")
        if _SHORT_NAME.search(trimmed):
            raise PathError(f"the path has an unresolved 8.3 short name ({trimmed}): {path}")
        components.append(trimmed)
    return "/".join([root, *components, ""]).casefold()


class PathRules:
    """A list of path entries of one kind (allowed or blocked), indexed for look-up by prefix."""

    __slots__ = ("_entries", "_fold", "_os")

    def __init__(self, entries: Iterable[str], os_family: OsFamily, *, blocked: bool) -> None:
        self._os = os_family
        self._fold = blocked or os_family is OsFamily.WINDOWS
        self._entries: dict[PathKey, str] = {}
        for entry in entries:
            # Entries are checked by the caller (PolicyEnforcer) and raise PathError when invalid.
            self._entries[path_key(entry, os_family, fold=self._fold)] = entry

    @property
    def folds(self) -> bool:
        return self._fold

    def key(self, path: str) -> PathKey:
        return path_key(path, self._os, fold=self._fold)

    def match(self, key: PathKey) -> str | None:
        """The entry that ``key`` (from :meth:`key`) lies in or under, if any."""
        entries = self._entries
        if len(entries) <= 16:
            for prefix, entry in entries.items():
                if key.startswith(prefix):
                    return entry
            return None
        end = key.find("/")
        while end >= 0:
            found = entries.get(key[: end + 1])
            if found is not None:
                return found
            end = key.find("/", end + 1)
        return None
