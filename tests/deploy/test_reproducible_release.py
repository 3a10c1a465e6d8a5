"""Reproducible releases: every action the workflows use is pinned to a commit, the release build
installs its dependencies from a lock with hashes, and the locks agree with pyproject.toml (and
the backend image's lock holds everything the backend imports)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.deploy.template import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
REQUIREMENTS = ROOT / "requirements"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
_COMMIT = re.compile(r"[0-9a-f]{40}")


def _uses(node: object) -> list[str]:
    if isinstance(node, dict):
        found = [str(node["uses"])] if "uses" in node else []
        return found + [u for value in node.values() for u in _uses(value)]
    if isinstance(node, list):
        return [u for value in node for u in _uses(value)]
    return []


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda path: path.name)
def test_every_action_is_pinned_to_a_full_commit_sha(workflow: Path) -> None:
    # A tag can be moved to other code after review; a commit cannot.
    uses = _uses(yaml.safe_load(workflow.read_text(encoding="utf-8")))
    unpinned = [
        action
        for action in uses
        if not action.startswith(("./", "docker://")) and not _COMMIT.fullmatch(action.partition("@")[2])
    ]
    assert not unpinned, f"{workflow.name}: not pinned to a 40-hex commit SHA: {unpinned}"


def test_the_release_builds_install_the_lock_with_hashes_before_building() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    building = [
        job
        for job in workflow["jobs"].values()
        if any("cowork-release build" in str(s.get("run", "")) for s in job["steps"])
    ]
    assert len(building) == 2  # the matrix of native runners, and Linux
    for job in building:
        runs = [str(step.get("run", "")) for step in job["steps"]]
        install = next(i for i, run in enumerate(runs) if "requirements/release.lock" in run)
        assert "--require-hashes" in runs[install]
        assert install < next(i for i, run in enumerate(runs) if "cowork-release build" in run)


# ---------------------------------------------------------------------------------------------- locks


def _pins(lock: Path) -> dict[str, list[tuple[Version, Marker | None, int]]]:
    """name → [(version, marker, number of hashes)] of a ``--generate-hashes`` lock."""
    text = re.sub(r"\\\n\s*", " ", lock.read_text(encoding="utf-8"))
    pins: dict[str, list[tuple[Version, Marker | None, int]]] = {}
    for line in text.splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        requirement_text, *hashes = line.split(" --hash=")
        requirement = Requirement(requirement_text.strip())
        (specifier,) = requirement.specifier
        assert specifier.operator == "==", line
        pins.setdefault(canonicalize_name(requirement.name), []).append(
            (Version(specifier.version), requirement.marker, len(hashes))
        )
    return pins


@pytest.mark.parametrize("lock", ["release.lock", "backend.lock"])
def test_every_pin_carries_hashes(lock: str) -> None:
    pins = _pins(REQUIREMENTS / lock)
    assert pins
    for name, versions in pins.items():
        for version, _, hashes in versions:
            assert hashes >= 1, f"{lock}: {name}=={version} has no --hash"


def _satisfied(requirement: Requirement, pins: dict[str, list[tuple[Version, Marker | None, int]]]) -> None:
    name = canonicalize_name(requirement.name)
    assert name in pins, f"{requirement} is not in the lock: run requirements/lock"
    # Some pin whose platform overlaps the requirement's satisfies its range.
    versions = [version for version, _, _ in pins[name]]
    assert any(requirement.specifier.contains(v, prereleases=True) for v in versions), (
        f"the lock's {name} {[str(v) for v in versions]} is outside {requirement.specifier}:"
        " run requirements/lock"
    )


def test_the_release_lock_holds_the_projects_and_the_build_extras_dependencies() -> None:
    pins = _pins(REQUIREMENTS / "release.lock")
    wanted = PYPROJECT["project"]["dependencies"] + PYPROJECT["project"]["optional-dependencies"]["build"]
    for line in wanted:
        _satisfied(Requirement(line), pins)


def test_the_backend_list_uses_the_projects_ranges_and_its_lock_follows_it() -> None:
    project = {
        canonicalize_name(Requirement(d).name): Requirement(d) for d in PYPROJECT["project"]["dependencies"]
    }
    build_only = {"setuptools", "wheel"}
    pins = _pins(REQUIREMENTS / "backend.lock")
    for line in (REQUIREMENTS / "backend.in").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        if name not in build_only:
            assert name in project, f"backend.in names {name}, which pyproject.toml does not depend on"
            assert requirement.specifier == project[name].specifier, (
                f"{name}: {requirement} ≠ {project[name]}"
            )
        if requirement.marker is None or requirement.marker.evaluate({"sys_platform": "linux"}):
            _satisfied(requirement, pins)


def test_the_backend_image_lock_holds_everything_the_backend_imports() -> None:
    # Every backend module imported in a fresh interpreter, then each third-party module traced to
    # its distribution: what the image installs must include them all.
    probe = """
import importlib, json, pkgutil, sys
import backend
for module in pkgutil.walk_packages(backend.__path__, "backend."):
    importlib.import_module(module.name)
import backend.storage.aws, backend.telemetry.export, uvicorn.protocols.websockets.websockets_impl
import uvicorn.protocols.http.httptools_impl, uvicorn.loops.uvloop
from importlib.metadata import packages_distributions
found = packages_distributions()
tops = {name.split(".")[0] for name in sys.modules}
print(json.dumps(sorted({d for top in tops for d in found.get(top, [])})))
"""
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    imported = {canonicalize_name(d) for d in json.loads(result.stdout)}
    locked = set(_pins(REQUIREMENTS / "backend.lock"))
    # The project itself is installed from the sources; setuptools' and the interpreter's own
    # import hooks are not imports of the backend. Libraries that probe for optional modules when
    # they are there: Starlette for python-multipart (its form parser: the backend parses no forms)
    # and urllib3 for backports.zstd (through the "backports" namespace backports.tarfile shares).
    not_needed = {
        "cowork",
        "setuptools",
        "pip",
        "distutils-precedence",
        "python-multipart",
        "backports-tarfile",
    }
    missing = imported - locked - not_needed
    assert not missing, f"the backend imports {sorted(missing)}, which requirements/backend.in lacks"
