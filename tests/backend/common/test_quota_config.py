"""The quota files (``<config dir>/quotas``): a tenant's file over the default's, "unlimited" lifting a
default, writes that replace the file whole, and files that cannot be used refused at start-up and
ignored (logged) while running."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from backend.common.quota_config import QuotaConfigError, QuotaDirectory, TenantQuotas
from backend.common.settings import Settings
from backend.policy.config import PolicyDirectory, builtin_policy
from backend.storage.memory import open_memory_stores
from tests.backend.conftest import AppFactory


def _file(config: Path, name: str, text: str) -> None:
    (config / "quotas").mkdir(parents=True, exist_ok=True)
    (config / "quotas" / f"{name}.toml").write_text(text, encoding="utf-8")


def test_no_config_directory_or_no_files_means_no_limits(tmp_path: Path) -> None:
    assert QuotaDirectory(None).for_tenant("acme") == TenantQuotas()
    assert QuotaDirectory(tmp_path).for_tenant("acme") == TenantQuotas()
    assert QuotaDirectory(tmp_path).check() == []


def test_a_tenants_file_overrides_the_defaults_key_by_key(tmp_path: Path) -> None:
    _file(tmp_path, "default", "sessionsPerUser = 3\ntokensPerDay = 1000000\n")
    _file(tmp_path, "acme", 'tokensPerDay = "unlimited"\nstorageBytes = 1024\n')
    quotas = QuotaDirectory(tmp_path)
    assert quotas.for_tenant("acme") == TenantQuotas(
        sessions_per_user=3, tokens_per_day=None, storage_bytes=1024
    )
    assert quotas.for_tenant("globex") == TenantQuotas(sessions_per_user=3, tokens_per_day=1_000_000)
    limits, sources = quotas.explain("acme")
    assert limits.to_wire() == {"sessionsPerUser": 3, "tokensPerDay": None, "storageBytes": 1024}
    assert sources == {
        "sessionsPerUser": "quotas/default.toml",
        "tokensPerDay": "quotas/acme.toml",
        "storageBytes": "quotas/acme.toml",
    }


def test_writing_changes_only_the_named_limits_and_removes_an_empty_file(tmp_path: Path) -> None:
    quotas = QuotaDirectory(tmp_path)
    assert quotas.write("acme", {"sessionsPerUser": 2, "storageBytes": 10}) == {
        "sessionsPerUser": 2,
        "storageBytes": 10,
    }
    assert quotas.write("acme", {"storageBytes": None, "tokensPerDay": "unlimited"}) == {
        "sessionsPerUser": 2,
        "tokensPerDay": "unlimited",
    }
    text = (tmp_path / "quotas" / "acme.toml").read_text()
    assert "sessionsPerUser = 2" in text
    assert 'tokensPerDay = "unlimited"' in text
    assert QuotaDirectory(tmp_path).for_tenant("acme") == TenantQuotas(sessions_per_user=2)
    quotas.write("acme", {"sessionsPerUser": None, "tokensPerDay": None})
    assert not (tmp_path / "quotas" / "acme.toml").exists()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("sessionsPerUser = -1\n", "sessionsPerUser must be a whole number"),
        ("sessionsPerUser = 1.5\n", "sessionsPerUser must be a whole number"),
        ("tokensPerDay = true\n", "tokensPerDay must be a whole number"),
        ('storageBytes = "lots"\n', "storageBytes must be a whole number"),
        ("sesionsPerUser = 1\n", "unknown key 'sesionsPerUser'"),
        ("sessionsPerUser = \n", "cannot be read as TOML"),
    ],
)
def test_a_file_that_cannot_be_used_is_refused_at_start_and_ignored_while_running(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, text: str, says: str
) -> None:
    _file(tmp_path, "default", "storageBytes = 5\n")
    _file(tmp_path, "acme", text)
    quotas = QuotaDirectory(tmp_path)
    problems = quotas.check()
    assert len(problems) == 1
    assert problems[0].startswith("quotas/acme.toml: ")
    assert says in problems[0]
    with caplog.at_level(logging.ERROR):
        assert quotas.for_tenant("acme") == TenantQuotas(storage_bytes=5)
    with pytest.raises(QuotaConfigError, match=says):
        quotas.explain("acme")


def test_a_file_named_for_no_valid_tenant_is_reported(tmp_path: Path) -> None:
    _file(tmp_path, "not a tenant", "sessionsPerUser = 1\n")
    assert QuotaDirectory(tmp_path).check() == [
        "quotas/not a tenant.toml: not a valid tenant ID, so never used"
    ]


def test_an_edited_file_is_read_again(tmp_path: Path) -> None:
    quotas = QuotaDirectory(tmp_path, recheck_seconds=0)
    _file(tmp_path, "acme", "sessionsPerUser = 1\n")
    assert quotas.for_tenant("acme").sessions_per_user == 1
    _file(tmp_path, "acme", "sessionsPerUser = 22\n")
    # A file's modification time may not move within the clock's granularity; its size did anyway.
    os.utime(tmp_path / "quotas" / "acme.toml", ns=(1, 1))
    assert quotas.for_tenant("acme").sessions_per_user == 22


def test_the_services_do_not_start_with_a_quota_file_they_cannot_use(
    make_app: AppFactory, tmp_path: Path
) -> None:
    _file(tmp_path, "acme", "sessionsPerUser = -3\n")
    policies = PolicyDirectory(tmp_path, builtin_policy())
    with pytest.raises(ValueError, match=r"quota configuration: quotas/acme.toml: sessionsPerUser"):
        make_app(stores=open_memory_stores(), settings=Settings(), policies=policies)
