"""Path arguments resolved before the policy sees them (seed 000 §8.2–§8.3, seed 003 §6.1, §8.1).

The policy compares prefixes of real paths, so the host resolves every path a tool call names: ``~``
and ``~/…`` expanded (``~name``, another account's home, refused rather than read as a relative path
named "~name"), a relative path joined to the session's first project folder (models often write
``src/app.py``), ``..`` and symlinks resolved by the OS's own rules (``os.path.realpath``; for a path
that does not exist yet its deepest existing parent is resolved and the rest appended). The tool is
then handed exactly that path, so it acts on the file the policy checked.

Like the tool runtime (seed 003 §8.1, defence in depth), a ``..`` that climbs out of every project
folder is refused rather than quietly resolved: once the host rewrites the argument to a clean
absolute path, the tool could no longer see the climb.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from agent_runtime.agent_host.routing.errors import PathRejected

__all__ = ["MAX_PATH_CHARS", "is_within", "resolve_path", "resolve_root"]

#: Longer path arguments are refused before touching the file system. 4096 is Linux's PATH_MAX;
#: macOS (1024) and Windows (260 unless long paths are on) are stricter, and the tool says so.
MAX_PATH_CHARS = 4096

_SEPARATORS = ("/", "\\") if os.name == "nt" else ("/",)


def resolve_root(root: str) -> str:
    """A project folder as the policy compares it: absolute, ``~`` expanded, symlinks resolved."""
    expanded = _expand_user(root)
    if not os.path.isabs(expanded):
        raise ValueError(f"a workspace root must be an absolute path, not {root!r}")
    return os.path.realpath(expanded)


def is_within(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it, by this OS's case rules (both already normalised)."""
    p, r = os.path.normcase(path), os.path.normcase(root)
    if p == r:
        return True
    return p.startswith(r if r.endswith(os.sep) else r + os.sep)


def resolve_path(
    raw: object,
    *,
    field: str,
    roots: Sequence[str],
    raw_roots: Sequence[str] = (),
    resolve_final: bool = True,
) -> str:
    """The absolute real path ``raw`` names; raises :class:`PathRejected` naming ``field``.

    ``roots`` are the resolved project folders (relative paths join the first); ``raw_roots`` the same
    folders as configured, so a ``..`` check also accepts the spelling the user gave. With
    ``resolve_final=False`` the last component is kept as written (its parent resolved) — DeleteFile
    removes a symlink itself, so the link, not its target, is what the policy must judge.
    """
    if not isinstance(raw, str):
        raise PathRejected(field, f"must be a string, not {_json_type(raw)}")
    if not raw.strip():
        raise PathRejected(field, "must not be empty")
    if "\x00" in raw:
        raise PathRejected(field, "must not contain NUL bytes")
    if len(raw) > MAX_PATH_CHARS:
        raise PathRejected(field, f"is {len(raw)} characters long; at most {MAX_PATH_CHARS} are allowed")
    if any("\ud800" <= ch <= "\udfff" for ch in raw):
        raise PathRejected(field, "is not valid Unicode text (it contains a lone surrogate)")
    if raw.startswith("~") and not _is_own_home(raw):
        # "~name" is another account's home to a shell; joining it to the project folder as a relative
        # path would act on a different file than the one the model meant.
        raise PathRejected(
            field,
            f"names another account's home folder ({_shown(raw)}); only your own home is accepted,"
            " written '~' or '~/…'. For a project file whose name starts with '~', write './~…'",
        )
    expanded = _expand_user(raw)
    if not os.path.isabs(expanded):
        drive, rest = os.path.splitdrive(expanded)
        if drive or rest.startswith(_SEPARATORS):
            # Windows' "C:foo" and "\foo" depend on a per-drive current directory the user never sees.
            problem = f"must be absolute or relative to the project folder (got {_shown(raw)})"
            raise PathRejected(field, problem)
        if not roots:
            raise PathRejected(
                field,
                f"is relative ({_shown(raw)}) and this session has no project folder to resolve it"
                " against; give an absolute path",
            )
        expanded = os.path.join(roots[0], expanded)
    climbs = ".." in _components(expanded)
    if climbs and roots and not _inside_any(os.path.normpath(expanded), roots, raw_roots):
        raise PathRejected(field, f"climbs out of the project folder through '..' (got {_shown(raw)})")
    try:
        resolved = _resolve(expanded, resolve_final)
    except (OSError, ValueError) as exc:
        raise PathRejected(field, f"cannot be resolved (got {_shown(raw)})") from exc
    if climbs and roots and not _inside_any(resolved, roots, raw_roots):
        # A symlink inside the folder followed by '..' can land outside it even when the lexical
        # form stays inside: the path the OS will really use decides.
        raise PathRejected(field, f"climbs out of the project folder through '..' (got {_shown(raw)})")
    if len(resolved) > MAX_PATH_CHARS:
        raise PathRejected(field, f"resolves to a path longer than {MAX_PATH_CHARS} characters")
    return resolved


def _resolve(path: str, resolve_final: bool) -> str:
    if resolve_final:
        return os.path.realpath(path)
    trimmed = path.rstrip("".join(_SEPARATORS)) or path
    parent, name = os.path.split(trimmed)
    if name in ("", ".", ".."):
        return os.path.realpath(path)
    # The parent as written (not normpath'd): "link/../x" must follow the link like the OS does.
    return os.path.join(os.path.realpath(parent), name)


def _inside_any(path: str, roots: Sequence[str], raw_roots: Sequence[str]) -> bool:
    candidates = [*roots, *(os.path.normpath(_expand_user(r)) for r in raw_roots)]
    return any(is_within(path, root) for root in candidates)


def _components(path: str) -> list[str]:
    for sep in _SEPARATORS[1:]:
        path = path.replace(sep, _SEPARATORS[0])
    return path.split(_SEPARATORS[0])


def _is_own_home(raw: str) -> bool:
    return raw == "~" or raw.startswith(tuple("~" + sep for sep in _SEPARATORS))


def _expand_user(raw: str) -> str:
    # Only "~" and "~/…": "~otheruser" would reach into another account's home.
    if _is_own_home(raw):
        return os.path.expanduser("~") + raw[1:]
    return raw


def _shown(raw: str) -> str:
    return repr(raw if len(raw) <= 120 else raw[:117] + "...")


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
