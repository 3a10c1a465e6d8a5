"""``./scripts/run`` started from a project folder opens the window on that folder (``cowork open``);
from the repository, the home folder or / it opens the window as it was left."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.peers import REPO_ROOT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the POSIX shell script")


def executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The script in a checkout whose bootstrap has nothing to do and whose ``cowork`` says how it was
    started, so what the script chooses is seen without starting the app."""
    repo = tmp_path / "cowork"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy2(REPO_ROOT / "scripts" / "run", repo / "scripts" / "run")
    executable(repo / "scripts" / "bootstrap", "#!/bin/sh\nexit 0\n")
    executable(repo / ".venv" / "bin" / "cowork", '#!/bin/sh\necho "cowork $*"\n')
    return repo


def started(checkout: Path, cwd: Path, home: Path) -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "DISPLAY": ":0",
    }
    result = subprocess.run(
        [str(checkout / "scripts" / "run")], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_from_a_project_folder_the_window_opens_on_it(checkout: Path, tmp_path: Path) -> None:
    project = tmp_path / "projects" / "app"
    project.mkdir(parents=True)
    assert started(checkout, project, tmp_path / "home") == f"cowork open {project}"


@pytest.mark.parametrize("where", ["repository", "home", "root"])
def test_elsewhere_the_window_opens_as_it_was_left(checkout: Path, tmp_path: Path, where: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    cwd = {"repository": checkout, "home": home, "root": Path("/")}[where]
    assert started(checkout, cwd, home) == "cowork"
