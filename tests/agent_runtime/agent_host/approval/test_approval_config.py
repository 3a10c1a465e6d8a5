"""The approval timeout from the runtime's environment, and the package's public surface."""

from __future__ import annotations

import pytest

import agent_runtime.agent_host.approval as approval
from agent_runtime.agent_host.approval import (
    DEFAULT_TIMEOUT_S,
    TIMEOUT_VARIABLE,
    ApprovalConfigError,
    ApprovalError,
    timeout_from_environment,
)
from contracts.errors import CoworkError, ErrorCode


@pytest.mark.parametrize("name", approval.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(approval, name) is not None


def test_the_timeout_defaults_to_five_minutes() -> None:
    assert timeout_from_environment({}) == DEFAULT_TIMEOUT_S == 300.0
    assert timeout_from_environment({TIMEOUT_VARIABLE: "  "}) == 300.0


@pytest.mark.parametrize(
    ("raw", "expected"), [("30", 30.0), ("0.5", 0.5), (" 600 ", 600.0), ("86400", 86400.0)]
)
def test_the_timeout_is_read_in_seconds(raw: str, expected: float) -> None:
    assert timeout_from_environment({TIMEOUT_VARIABLE: raw}) == expected


@pytest.mark.parametrize("raw", ["abc", "0", "-5", "nan", "inf", "-inf", "86401", "1e9", "5s", "0x10"])
def test_an_unusable_timeout_is_a_configuration_error_naming_the_variable(raw: str) -> None:
    with pytest.raises(ApprovalConfigError) as caught:
        timeout_from_environment({TIMEOUT_VARIABLE: raw})
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert caught.value.shape.details == {"variable": TIMEOUT_VARIABLE}
    assert isinstance(caught.value, ApprovalError)
    assert isinstance(caught.value, CoworkError)
