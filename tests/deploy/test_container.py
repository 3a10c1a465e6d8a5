"""The backend's image: ``deploy/container/Dockerfile`` passes hadolint and keeps its promises (a
slim base, a non-root user, a health check on /health, an entry point the project installs), and
its entry point turns the environment ECS passes into the right ``cowork-backend serve`` command."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from backend.apps import SERVICES
from tests.deploy.template import ROOT

DOCKERFILE = ROOT / "deploy" / "container" / "Dockerfile"
ENTRYPOINT = ROOT / "deploy" / "container" / "entrypoint.sh"


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text(encoding="utf-8"))
    lines = [line.strip() for line in text.splitlines()]
    found = []
    for line in lines:
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def _final_stage() -> list[tuple[str, str]]:
    instructions = _instructions()
    last_from = max(i for i, (word, _) in enumerate(instructions) if word == "FROM")
    return instructions[last_from:]


def test_hadolint_finds_nothing() -> None:
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent))
    assert hadolint, "hadolint is missing: pip install -e '.[test]'"
    result = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_final_stage_runs_as_a_non_root_user_on_a_slim_base() -> None:
    final = _final_stage()
    users = [args for word, args in final if word == "USER"]
    assert users, "the final stage sets no USER"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")
    base = final[0][1]
    args = dict(a.split("=", 1) for word, a in _instructions() if word == "ARG" and "=" in a)
    image = args.get(base.strip("${}"), base)
    assert "slim" in image, image
    # No compiler or package manager run in the image itself: what is built is built in the first stage.
    runs = " ".join(args for word, args in final if word == "RUN")
    assert not re.search(r"\b(apt-get|apk|gcc|build-essential|pip install)\b", runs), runs


def test_the_health_check_asks_the_health_route() -> None:
    checks = [args for word, args in _final_stage() if word == "HEALTHCHECK"]
    assert len(checks) == 1
    assert "/health" in checks[0]
    assert "COWORK_PORT" in checks[0]


def test_the_entry_point_runs_a_program_the_project_installs() -> None:
    (entry,) = [args for word, args in _final_stage() if word == "ENTRYPOINT"]
    assert entry.startswith("[")
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["cowork-backend"] == "backend.cli:main"
    assert re.search(r"\bexec cowork-backend \"\$@\"", ENTRYPOINT.read_text(encoding="utf-8"))
    copied = [args for word, args in _final_stage() if word == "COPY" and "entrypoint.sh" in args]
    assert copied
    assert "--chmod=0755" in copied[0]
    assert entry.strip('[]"') in copied[0]


def test_the_image_installs_the_locked_dependencies_with_hashes() -> None:
    runs = [args for word, args in _instructions() if word == "RUN"]
    assert any("--require-hashes" in run and "requirements/backend.lock" in run for run in runs)
    assert any("--no-deps" in run for run in runs)


def test_the_build_context_holds_what_the_dockerfile_copies() -> None:
    ignore = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    for word, args in _instructions():
        if word != "COPY" or args.startswith("--from"):
            continue
        sources = [a for a in shlex.split(args) if not a.startswith("--")][:-1]
        for source in sources:
            assert (ROOT / source).exists(), source
            assert any(source == a or source.startswith(a + "/") for a in allowed), source


# ---------------------------------------------------------------------------------------------- entry point


@pytest.fixture
def fake_backend(tmp_path: Path) -> Path:
    """A ``cowork-backend`` on PATH that prints its arguments, one per line, and each key file's kind."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "cowork-backend"
    program.write_text(
        "#!/bin/sh\n"
        'for arg in "$@"; do\n'
        '    if [ -f "$arg" ]; then head -n 1 "$arg"; else printf "%s\\n" "$arg"; fi\n'
        "done\n"
    )
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return bin_dir


def _entrypoint(bin_dir: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    environment = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "TMPDIR": str(bin_dir.parent), **env}
    return subprocess.run(
        ["/bin/sh", str(ENTRYPOINT), *args], env=environment, capture_output=True, text=True, check=False
    )


def _pem(private: bool = False) -> str:
    key = Ed25519PrivateKey.generate()
    if private:
        return key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()).decode()
    return key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo).decode()


@pytest.mark.skipif(sys.platform == "win32", reason="the image is Linux")
def test_the_entry_point_serves_the_configured_service_with_its_keys(fake_backend: Path) -> None:
    result = _entrypoint(
        fake_backend,
        {
            "COWORK_SERVICE": "policy",
            "COWORK_ENV_PREFIX": "prod",
            "COWORK_PEERS_URL": "https://cowork.example.com",
            "COWORK_AUTH_PUBLIC_KEYS": _pem() + _pem(),
            "COWORK_POLICY_SIGNING_KEY": _pem(private=True),
        },
        "--worker-threads",
        "4",
    )
    assert result.returncode == 0, result.stderr
    argv = result.stdout.splitlines()
    assert argv[:3] == ["serve", "--store", "aws"]
    assert argv[argv.index("--service") + 1] == "policy"
    assert argv[argv.index("--env-prefix") + 1] == "prod"
    assert argv[argv.index("--peers-url") + 1] == "https://cowork.example.com"
    assert argv[argv.index("--host") + 1] == "0.0.0.0"
    assert argv[argv.index("--port") + 1] == "8080"
    assert argv[argv.index("--worker-threads") + 1] == "4"
    # Each PEM block became a file of its own.
    assert argv.count("--auth-public-key") == 2
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "--auth-public-key"] == [
        "-----BEGIN PUBLIC KEY-----"
    ] * 2
    assert argv[argv.index("--policy-key") + 1] == "-----BEGIN PRIVATE KEY-----"
    assert "--retired-policy-key" not in argv


@pytest.mark.skipif(sys.platform == "win32", reason="the image is Linux")
def test_the_entry_point_takes_the_service_as_its_first_argument_or_refuses_to_guess(
    fake_backend: Path,
) -> None:
    for service in SERVICES:
        result = _entrypoint(fake_backend, {}, service)
        assert result.returncode == 0, result.stderr
        argv = result.stdout.splitlines()
        assert argv[argv.index("--service") + 1] == service
    refused = _entrypoint(fake_backend, {})
    assert refused.returncode == 2
    assert "COWORK_SERVICE" in refused.stderr
    operator = _entrypoint(fake_backend, {}, "--", "audit", "verify", "--tenant", "acme")
    assert operator.stdout.splitlines() == ["audit", "verify", "--tenant", "acme"]


def test_the_entry_point_passes_shellcheck() -> None:
    shellcheck = shutil.which("shellcheck", path=str(Path(sys.executable).parent))
    assert shellcheck
    result = subprocess.run([shellcheck, str(ENTRYPOINT)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout
