"""contracts' public names: listed in __all__, each importable, none loaded before it is asked for."""

from __future__ import annotations

import subprocess
import sys

import pytest

import contracts
from tests.support.peers import REPO_ROOT


@pytest.mark.parametrize("name", contracts.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(contracts, name) is not None


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = contracts.Nope  # type: ignore[attr-defined]


def test_importing_the_wire_code_does_not_build_every_model() -> None:
    probe = "import sys, contracts.ipc.client; print('contracts.methods' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "False"
