"""The three stores the shared contract suite runs against: memory, local (SQLite + files) and AWS
(DynamoDB + S3 on moto's server mode, see tests/backend/conftest.py).

AWS tables are created once per run (moto creates a table set in ~0.5 s); tests keep apart by using
their own tenant and IDs. Tests that scan across tenants (purge) ask for a fresh table set."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from backend.storage import Stores
from backend.storage.aws import open_aws_stores
from backend.storage.local import open_local_stores
from backend.storage.memory import open_memory_stores
from tests.backend.conftest import fresh_aws_settings

KINDS = ["memory", "local", "aws"]


StoreFactory = Callable[[], Stores]


@pytest.fixture(params=KINDS)
def open_stores(
    request: pytest.FixtureRequest, tmp_path: Path, aws_credentials: None
) -> Iterator[Callable[..., Stores]]:
    """``open_stores(fresh=False)``: the parametrised kind of store; ``fresh=True`` for AWS tables of
    this test's own."""
    opened: list[Stores] = []

    def open_(fresh: bool = False) -> Stores:
        if request.param == "memory":
            stores = open_memory_stores()
        elif request.param == "local":
            stores = open_local_stores(tmp_path / f"data{len(opened)}")
        elif fresh:
            stores = open_aws_stores(fresh_aws_settings(request.getfixturevalue("moto_endpoint")))
        else:
            return request.getfixturevalue("shared_aws_stores")  # type: ignore[no-any-return]
        opened.append(stores)
        return stores

    yield open_
    for stores in opened:
        stores.close()


@pytest.fixture
def stores(open_stores: Callable[..., Stores]) -> Stores:
    return open_stores()


@pytest.fixture
def tenant() -> str:
    return f"t_{uuid.uuid4().hex[:12]}"
