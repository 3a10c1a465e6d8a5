"""ListDirectory, Glob and Grep: arguments, bounds, .gitignore, symlinks, and the read scope."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from agent_runtime.tool_runtime import LocalToolRouter
from agent_runtime.tool_runtime.tools.search.glob_files import MAX_GLOB_RESULTS
from agent_runtime.tool_runtime.tools.search.grep import MAX_GREP_LINES, required_literal
from agent_runtime.tool_runtime.tools.search.list_directory import MAX_LIST_ENTRIES
from contracts.errors import ErrorCode
from contracts.tools import ToolResult
from tests.agent_runtime.tool_runtime.support import call, failed_with, ok

symlinks = pytest.mark.skipif(sys.platform == "win32", reason="creating symlinks needs privileges on Windows")


class BlockedUnder:
    """The runtime's side of the read-scope contract, played by the test: one blocked folder."""

    def __init__(self, blocked: Path) -> None:
        self.blocked = str(blocked)
        self.asked: list[str] = []

    def allows(self, path: str) -> bool:
        self.asked.append(path)
        return not (path == self.blocked or path.startswith(self.blocked + os.sep))

    def allows_all_under(self, directory: str) -> bool:
        return self.allows(directory) and not self.blocked.startswith(directory + os.sep)


def project(root: Path) -> Path:
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (root / "build").mkdir()
    (root / "build" / "gen.py").write_text("TOKEN = 'generated'\n")
    (root / "debug.log").write_text("TOKEN in a log\n")
    (root / "keep.log").write_text("TOKEN kept\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("import os\n\nTOKEN = 'app'\n\n\ndef main():\n    return TOKEN\n")
    (root / "src" / "util.py").write_text("def helper():\n    return 'TOKEN'\n")
    (root / "src" / "nested").mkdir()
    (root / "src" / "nested" / ".gitignore").write_text("secret_*.py\n")
    (root / "src" / "nested" / "secret_one.py").write_text("TOKEN = 'ignored by the nested file'\n")
    (root / "src" / "nested" / "deep.py").write_text("TOKEN = 'deep'\n")
    (root / "README.md").write_text("# Project\nTOKEN docs\n")
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00TOKEN")
    return root


async def run(router: LocalToolRouter, tool: str, scope: object = None, **arguments: object) -> ToolResult:
    request = call(tool, **arguments)
    return await router.execute(request, read_scope=scope)  # type: ignore[arg-type]


# ---------------------------------------------------------------- ListDirectory


async def test_list_directory_shows_types_sizes_sorted_and_skips_ignored(
    router: LocalToolRouter, workspace: Path
) -> None:
    project(workspace)
    text = ok(await run(router, "ListDirectory", path=str(workspace)))
    lines = text.splitlines()
    assert lines[0] == f"{workspace}/"

    def size(name: str) -> str:
        return f"{(workspace / name).stat().st_size:,} bytes"

    assert lines[1:9] == [
        f".gitignore ({size('.gitignore')})",
        f"README.md ({size('README.md')})",
        f"image.png ({size('image.png')})",
        f"keep.log ({size('keep.log')})",
        "src/",
        f"  app.py ({size('src/app.py')})",
        "  nested/",
        f"  util.py ({size('src/util.py')})",
    ]
    assert "build" not in text
    assert "debug.log" not in text
    assert ".git/" not in text
    assert "deep.py" not in text  # depth 2 by default
    assert (
        "[3 entries skipped by .gitignore or as version-control data; includeIgnored: true lists them]"
        in text
    )


async def test_list_directory_depth_and_include_ignored(router: LocalToolRouter, workspace: Path) -> None:
    project(workspace)
    shallow = ok(await run(router, "ListDirectory", path=str(workspace), depth=1))
    assert "src/" in shallow
    assert "app.py" not in shallow
    everything = ok(await run(router, "ListDirectory", path=str(workspace), depth=3, includeIgnored=True))
    for name in (".git/", "build/", "debug.log", "secret_one.py", "deep.py"):
        assert name in everything
    assert "skipped" not in everything


async def test_list_directory_is_bounded_with_a_count_of_the_rest(
    router: LocalToolRouter, workspace: Path
) -> None:
    for index in range(MAX_LIST_ENTRIES + 25):
        (workspace / f"f{index:05d}.txt").write_text("")
    text = ok(await run(router, "ListDirectory", path=str(workspace)))
    assert "[25 more entries not shown; list a subdirectory or lower depth]" in text
    assert len(text.splitlines()) == MAX_LIST_ENTRIES + 2


@pytest.mark.parametrize(
    ("arguments", "code", "words"),
    [
        ({"depth": 0}, ErrorCode.INVALID_REQUEST, "depth"),
        ({"depth": 21}, ErrorCode.INVALID_REQUEST, "depth"),
        ({"depth": "2"}, ErrorCode.INVALID_REQUEST, "depth"),
        ({"includeIgnored": 1}, ErrorCode.INVALID_REQUEST, "includeIgnored"),
        ({"path": "relative/dir"}, ErrorCode.INVALID_REQUEST, "absolute"),
    ],
)
async def test_list_directory_bad_arguments(
    router: LocalToolRouter, workspace: Path, arguments: dict[str, object], code: ErrorCode, words: str
) -> None:
    result = await run(router, "ListDirectory", **{"path": str(workspace), **arguments})
    assert failed_with(result, code)
    assert result.error is not None
    assert words in result.error.message


async def test_list_directory_of_a_file_or_nothing(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "f.txt").write_text("x")
    assert failed_with(
        await run(router, "ListDirectory", path=str(workspace / "f.txt")), ErrorCode.INVALID_REQUEST
    )
    assert failed_with(
        await run(router, "ListDirectory", path=str(workspace / "nope")), ErrorCode.FILE_NOT_FOUND
    )
    empty = workspace / "empty"
    empty.mkdir()
    assert ok(await run(router, "ListDirectory", path=str(empty))).endswith("(empty)")
    # No path: the project folder.
    assert ok(await run(router, "ListDirectory")).startswith(f"{workspace}/")


# ---------------------------------------------------------------- Glob


async def test_glob_finds_files_newest_first_honouring_gitignore(
    router: LocalToolRouter, workspace: Path
) -> None:
    project(workspace)
    now = time.time()
    for age, name in enumerate(["src/nested/deep.py", "src/util.py", "src/app.py"]):
        os.utime(workspace / name, (now - 100 * (age + 1), now - 100 * (age + 1)))
    text = ok(await run(router, "Glob", pattern="**/*.py", path=str(workspace)))
    assert text.splitlines()[:3] == [
        str(workspace / "src/nested/deep.py"),
        str(workspace / "src/util.py"),
        str(workspace / "src/app.py"),
    ]
    assert "gen.py" not in text
    assert "secret_one.py" not in text
    assert ok(await run(router, "Glob", pattern="*.log", path=str(workspace))).splitlines()[0] == str(
        workspace / "keep.log"
    )
    assert ok(await run(router, "Glob", pattern="src/*.py", path=str(workspace))).count("\n") >= 1
    only_src = ok(await run(router, "Glob", pattern="src/*.py", path=str(workspace)))
    assert "deep.py" not in only_src
    assert "app.py" in only_src
    braces = ok(await run(router, "Glob", pattern="*.{md,png}", path=str(workspace)))
    assert "README.md" in braces
    assert "image.png" in braces
    assert ok(await run(router, "Glob", pattern="*.rs", path=str(workspace))).startswith("No files match")


async def test_glob_is_bounded(router: LocalToolRouter, workspace: Path) -> None:
    for index in range(MAX_GLOB_RESULTS + 7):
        (workspace / f"m{index:04d}.py").write_text("")
    text = ok(await run(router, "Glob", pattern="*.py", path=str(workspace)))
    assert "[7 more matching files not shown; narrow the pattern]" in text


@pytest.mark.parametrize(
    ("pattern", "words"), [("", "pattern"), ("{a,b", "unclosed"), ("/", "must name files")]
)
async def test_glob_bad_patterns(router: LocalToolRouter, workspace: Path, pattern: str, words: str) -> None:
    result = await run(router, "Glob", pattern=pattern, path=str(workspace))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert words in result.error.message


# ---------------------------------------------------------------- Grep


async def test_grep_lines_with_numbers_skipping_ignored_and_binary(
    router: LocalToolRouter, workspace: Path
) -> None:
    project(workspace)
    text = ok(await run(router, "Grep", pattern="TOKEN =", path=str(workspace)))
    assert f"{workspace / 'src/app.py'}:3:TOKEN = 'app'" in text
    assert f"{workspace / 'src/nested/deep.py'}:1:TOKEN = 'deep'" in text
    assert "generated" not in text
    assert "ignored by the nested file" not in text
    everything = ok(await run(router, "Grep", pattern="TOKEN", path=str(workspace)))
    assert "TOKEN kept" in everything
    assert "TOKEN in a log" not in everything
    assert "[1 binary files skipped]" in everything


async def test_grep_modes_case_glob_and_context(router: LocalToolRouter, workspace: Path) -> None:
    project(workspace)
    files = ok(await run(router, "Grep", pattern="return", path=str(workspace), outputMode="files"))
    assert files.splitlines()[:3] == [
        str(workspace / "src/app.py"),
        str(workspace / "src/util.py"),
        "[1 binary files skipped]",
    ]
    counts = ok(await run(router, "Grep", pattern="^TOKEN", path=str(workspace), outputMode="count"))
    assert f"{workspace / 'src/app.py'}:1" in counts.splitlines()
    none = ok(await run(router, "Grep", pattern="token =", path=str(workspace), glob="*.py"))
    assert none.startswith("No matches")
    insensitive = ok(
        await run(
            router, "Grep", pattern="token =", path=str(workspace), glob="src/*.py", caseInsensitive=True
        )
    )
    assert insensitive.splitlines()[0] == f"{workspace / 'src/app.py'}:3:TOKEN = 'app'"
    assert not insensitive.splitlines()[1].startswith(str(workspace))
    around = ok(
        await run(router, "Grep", pattern="^def main", path=str(workspace / "src" / "app.py"), context=1)
    )
    app = workspace / "src" / "app.py"
    assert around.splitlines() == [f"{app}-5-", f"{app}:6:def main():", f"{app}-7-    return TOKEN"]


async def test_grep_output_is_bounded_and_counts_the_rest(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "a.txt").write_text("hit\n" * (MAX_GREP_LINES + 10))
    (workspace / "b.txt").write_text("hit\n")
    text = ok(await run(router, "Grep", pattern="hit", path=str(workspace)))
    assert len(text.splitlines()) == MAX_GREP_LINES + 1
    assert "[output limit reached: 2 more matching files not shown" in text


async def test_grep_pattern_is_linear_time_re2(router: LocalToolRouter, workspace: Path) -> None:
    # (a+)+$ takes exponential time in a backtracking engine on this line; RE2 answers at once.
    (workspace / "evil.txt").write_text("a" * 5000 + "!\n")
    started = time.monotonic()
    assert ok(await run(router, "Grep", pattern="(a+)+$", path=str(workspace))).startswith("No matches")
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"pattern": "(unclosed"}, "not a valid RE2"),
        ({"pattern": "(?<=x)y"}, "lookaround"),
        ({"pattern": "x", "outputMode": "everything"}, "outputMode"),
        ({"pattern": "x", "context": 21}, "context"),
        ({"pattern": "x", "glob": "{a"}, "unclosed"),
        ({"pattern": ""}, "pattern"),
    ],
)
async def test_grep_bad_arguments(
    router: LocalToolRouter, workspace: Path, arguments: dict[str, object], words: str
) -> None:
    result = await run(router, "Grep", path=str(workspace), **arguments)
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert words in result.error.message


# ---------------------------------------------------------------- the read scope and symlinks


async def test_blocked_paths_are_never_listed_found_or_read(router: LocalToolRouter, workspace: Path) -> None:
    project(workspace)
    secrets = workspace / "secrets"
    secrets.mkdir()
    (secrets / "key.py").write_text("TOKEN = 'do not show'\n")
    scope = BlockedUnder(secrets)
    listed = ok(await run(router, "ListDirectory", scope, path=str(workspace), depth=3))
    assert "secrets" not in listed
    assert "key.py" not in listed
    assert "[1 entries not shown: the policy does not allow reading them]" in listed
    found = ok(await run(router, "Glob", scope, pattern="**/*.py", path=str(workspace)))
    assert "key.py" not in found
    grepped = ok(await run(router, "Grep", scope, pattern="TOKEN", path=str(workspace)))
    assert "do not show" not in grepped
    assert "app.py" in grepped
    # Without the scope the same file is there: the filter is what kept it out.
    assert "do not show" in ok(await run(router, "Grep", pattern="TOKEN", path=str(workspace)))


async def test_a_blocked_file_inside_an_allowed_folder_is_skipped(
    router: LocalToolRouter, workspace: Path
) -> None:
    (workspace / "a.env").write_text("PASSWORD=hunter2\n")
    (workspace / "b.txt").write_text("PASSWORD=placeholder\n")
    scope = BlockedUnder(workspace / "a.env")
    text = ok(await run(router, "Grep", scope, pattern="PASSWORD", path=str(workspace)))
    assert "hunter2" not in text
    assert "placeholder" in text


@symlinks
async def test_symlinks_out_of_the_scope_are_not_followed(
    router: LocalToolRouter, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.txt").write_text("TOKEN private\n")
    (outside / "sub").mkdir()
    (outside / "sub" / "more.txt").write_text("TOKEN more\n")
    (workspace / "inside.txt").write_text("TOKEN inside\n")
    (workspace / "file-link.txt").symlink_to(outside / "private.txt")
    (workspace / "dir-link").symlink_to(outside / "sub")
    scope = BlockedUnder(outside)
    grepped = ok(await run(router, "Grep", scope, pattern="TOKEN", path=str(workspace)))
    assert "inside" in grepped
    assert "private" not in grepped
    assert "more" not in grepped
    listed = ok(await run(router, "ListDirectory", scope, path=str(workspace)))
    assert "file-link" not in listed
    assert "dir-link" not in listed
    assert "[2 entries not shown: the policy does not allow reading them]" in listed
    found = ok(await run(router, "Glob", scope, pattern="**/*.txt", path=str(workspace)))
    assert found.splitlines()[0] == str(workspace / "inside.txt")
    assert "private" not in found


@symlinks
async def test_allowed_symlinks_are_shown_and_linked_folders_never_entered(
    router: LocalToolRouter, workspace: Path
) -> None:
    (workspace / "real").mkdir()
    (workspace / "real" / "data.txt").write_text("TOKEN data\n")
    (workspace / "alias.txt").symlink_to(workspace / "real" / "data.txt")
    (workspace / "loop").symlink_to(workspace)  # a cycle the walk must not follow
    listed = ok(await run(router, "ListDirectory", path=str(workspace), depth=5))
    assert f"alias.txt -> {workspace / 'real' / 'data.txt'} (symlink to file)" in listed
    assert f"loop -> {workspace} (symlink to directory)" in listed
    grepped = ok(await run(router, "Grep", pattern="TOKEN", path=str(workspace)))
    assert f"{workspace / 'alias.txt'}:1:TOKEN data" in grepped
    assert grepped.count("TOKEN data") == 2


@pytest.mark.parametrize(
    ("pattern", "literal"),
    [
        (r"[A-Za-z_]+Error\(.*(message|msg)", b"Error("),
        (r"\bclass\s+Foo", b"class"),
        ("naïve café", "naïve café".encode()),
        ("foo|barbaz", None),  # an alternation at the top: no text every match has
        ("(?i)hello", None),  # case-insensitive: bytes.find would miss HELLO
        (r"\x{41}bc", None),  # RE2-only syntax: no shortcut rather than a wrong one
        ("ab", None),  # too short to be worth it
    ],
)
def test_the_text_every_match_contains_is_found_only_when_certain(
    pattern: str, literal: bytes | None
) -> None:
    assert required_literal(pattern, case_insensitive=False) == literal
    assert required_literal(pattern, case_insensitive=True) is None


async def test_the_literal_shortcut_keeps_every_match(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "a.py").write_text("raise ValueError('bad', message=1)\nraise KeyError(msg)\nError\n")
    text = ok(await run(router, "Grep", pattern=r"[A-Za-z_]+Error\(.*(message|msg)", path=str(workspace)))
    assert text.splitlines()[:2] == [
        f"{workspace / 'a.py'}:1:raise ValueError('bad', message=1)",
        f"{workspace / 'a.py'}:2:raise KeyError(msg)",
    ]
