"""scripts/mutation: its configuration stays true to the tree, its mutants are deterministic, a mutant
is seen by the tests it runs and by nothing else, and its verdict and exit status follow the tests.
The full run is too slow for the test command; .github/workflows/mutation.yml runs it weekly."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cowork_mutation_script", REPO / "scripts" / "mutation.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


mutation = _script()


def test_every_guard_file_is_a_real_module_outside_the_tests() -> None:
    targets = mutation.load_targets()
    assert "agent_runtime/agent_host/policy/paths.py" in targets
    for path, tests in targets.items():
        assert (REPO / path).is_file(), path
        assert not path.startswith("tests/"), path
        assert tests, f"{path} has no tests mapped"


def test_every_equivalent_entry_names_a_current_mutant_and_says_why() -> None:
    targets = mutation.load_targets()
    by_file: dict[str, set[tuple[str, str, str, str]]] = {}
    for entry in mutation.load_equivalents():
        assert entry.path in targets, f"{entry.path} is not a guard file"
        assert entry.reason.strip()
        keys = by_file.setdefault(entry.path, {m.key() for m in mutation.mutants_of(entry.path)})
        assert entry.key() in keys, f"stale equivalent entry: {entry}"


def test_the_mutants_of_a_file_are_listed_in_the_same_order_every_time() -> None:
    first = mutation.mutants_of("agent_runtime/agent_host/policy/paths.py")
    second = mutation.mutants_of("agent_runtime/agent_host/policy/paths.py")
    assert first == second
    assert len(first) > 50
    assert [m.start for m in first] == sorted(m.start for m in first)


SAMPLE = b'''"""Doc."""

LIMIT = 3


def allowed(n: int) -> bool:
    if n < LIMIT and not n == 0:
        raise ValueError("zero")  # pragma: no mutate
    return n <= LIMIT
'''


def test_each_operator_makes_a_valid_one_line_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "guard.py").write_bytes(SAMPLE)
    monkeypatch.setattr(mutation, "REPO", tmp_path)
    mutants = mutation.mutants_of("guard.py")
    changes = {(m.operator, m.before, m.after) for m in mutants}
    assert ("constant", "LIMIT = 3", "LIMIT = 4") in changes
    assert ("constant", "LIMIT = 3", "LIMIT = 2") in changes
    assert ("comparison", "if n < LIMIT and not n == 0:", "if n <= LIMIT and not n == 0:") in changes
    assert ("boolean operator", "if n < LIMIT and not n == 0:", "if n < LIMIT or not n == 0:") in changes
    assert ("drop not", "if n < LIMIT and not n == 0:", "if n < LIMIT and n == 0:") in changes
    assert ("return None", "return n <= LIMIT", "return None") in changes
    assert not any("raise" in m.before for m in mutants), "a pragma line is left alone"
    assert not any("Doc." in m.before for m in mutants), "docstrings are left alone"
    assert all(m.function in {"<module>", "allowed"} for m in mutants)


def test_a_run_mutates_only_the_child_process_and_reports_survivors(tmp_path: Path) -> None:
    guard = REPO / "agent_runtime/agent_host/policy/commands/words.py"
    before = guard.read_bytes()
    command = [sys.executable, str(REPO / "scripts" / "mutation.py"), "--file", str(guard.relative_to(REPO))]
    result = subprocess.run(
        [*command, "--sample", "2", "--seed", "3", "--min", "101"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert guard.read_bytes() == before, "the working tree is never written"
    assert result.returncode == 1, result.stdout + result.stderr  # nothing scores over 101 %
    assert "agent_runtime/agent_host/policy/commands/words.py" in result.stdout
    assert "sample 2 per file, seed 3" in result.stdout
    assert "under 101%" in result.stdout


def test_an_unknown_file_is_refused() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "mutation.py"), "--file", "setup.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "not a guard file" in result.stderr
