"""Usage counters in DynamoDB: ``{env}-usage``, keyed by (tenantId, counter); each change is one
``UpdateItem ADD``, atomic in DynamoDB however many service instances count at once."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from backend.common.ids import timestamp
from backend.storage.aws.calls import epoch, failing_as_storage_error, n, s
from backend.storage.aws.config import AwsSettings

__all__ = ["DynamoUsageRepository"]


class DynamoUsageRepository:
    def __init__(self, dynamodb: Any, settings: AwsSettings) -> None:
        self._db = dynamodb
        self._table = settings.table("usage")

    def add(self, tenant_id: str, counter: str, amount: int, *, expires_at: datetime | None = None) -> int:
        # createdAt/updatedAt are bookkeeping (seed 001 §8 table conventions), from the wall clock.
        values: dict[str, Any] = {":amount": n(amount), ":now": s(timestamp(datetime.now(UTC)))}
        update = "ADD amount :amount SET createdAt = if_not_exists(createdAt, :now), updatedAt = :now"
        names: dict[str, str] = {}
        if expires_at is not None:
            update += ", #ttl = :ttl"
            names["#ttl"] = "ttl"
            values[":ttl"] = n(epoch(expires_at))
        with failing_as_storage_error("counting usage"):
            answer = self._db.update_item(
                TableName=self._table,
                Key={"tenantId": s(tenant_id), "counter": s(counter)},
                UpdateExpression=update,
                ExpressionAttributeValues=values,
                **({"ExpressionAttributeNames": names} if names else {}),
                ReturnValues="UPDATED_NEW",
            )
        return int(answer["Attributes"]["amount"]["N"])

    def get(self, tenant_id: str, counter: str) -> int:
        with failing_as_storage_error("reading usage"):
            item = self._db.get_item(
                TableName=self._table,
                Key={"tenantId": s(tenant_id), "counter": s(counter)},
                ConsistentRead=True,
            ).get("Item")
        return 0 if item is None else int(item["amount"]["N"])
