"""The public surfaces of the policy and thread packages: every name in ``__all__`` resolves, and the
policy package stays pure at run time too (import-linter checks its own imports statically; this
checks what actually gets loaded; pydantic's own import chain brings ``socket`` and ``threading``
in, so those are not asserted)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import agent_runtime.agent_host.policy as policy
import agent_runtime.agent_host.thread as thread
from tests.support.peers import REPO_ROOT


@pytest.mark.parametrize(("package", "name"), [(p, n) for p in (policy, thread) for n in p.__all__])
def test_every_public_name_resolves(package: object, name: str) -> None:
    assert getattr(package, name) is not None


def test_importing_the_policy_package_loads_neither_the_tokenizer_nor_network_code() -> None:
    probe = (
        "import sys; import agent_runtime.agent_host.policy; "
        "print(sorted(m for m in ('tiktoken', 'httpx', 'subprocess', 'asyncio') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"
