"""Translating boto3 failures once, where they leave the AWS store, and DynamoDB value helpers."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from backend.common.errors import StorageError

__all__ = ["code_of", "epoch", "failing_as_storage_error", "n", "paginate", "s"]

logger = logging.getLogger(__name__)


@contextlib.contextmanager
def failing_as_storage_error(what: str) -> Iterator[None]:
    try:
        yield
    except (BotoCoreError, ClientError) as exc:
        logger.exception("AWS call failed: %s", what)
        raise StorageError(f"{what} failed") from exc


def code_of(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def s(value: str) -> dict[str, str]:
    return {"S": value}


def n(value: int) -> dict[str, str]:
    return {"N": str(value)}


def epoch(moment: datetime, plus: timedelta = timedelta(0)) -> int:
    """DynamoDB TTL: Unix epoch seconds (seed 001 §8: the attribute is always ``ttl``)."""
    return int((moment + plus).timestamp())


def paginate(call: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
    """Items of a Query or Scan across pages."""
    while True:
        page = call(**kwargs)
        yield from page.get("Items", [])
        last = page.get("LastEvaluatedKey")
        if not last:
            return
        kwargs["ExclusiveStartKey"] = last
