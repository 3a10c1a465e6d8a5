"""The base every wire model stands on: camelCase on the wire, snake_case in Python, strict input."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """A message or part of one that crosses a wire.

    Inbound data is validated strictly: no type coercion ("3" is not 3), no unknown fields, so a typo
    in a field name is an error that names the field instead of a silently ignored value.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        strict=True,
        frozen=False,
        use_enum_values=False,
        ser_json_timedelta="float",
    )

    def to_wire(self) -> dict[str, object]:
        """The JSON-ready dict with the seed's field names; absent optional fields are left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def _instant_exists_in_utc(value: datetime) -> datetime:
    # "9999-12-31T23:59:59-00:01" parses, but its instant lies past the last one a datetime holds:
    # converting it to UTC (to store, compare or order it) raises OverflowError deep inside whoever
    # handles it. Refused here, every date-time of every wire model is one that exists in UTC. Only
    # years 1 and 9999 can overflow, so other values cost one comparison.
    if value.year in (1, 9999) and value.utcoffset():
        try:
            value.astimezone(UTC)
        except OverflowError:
            raise ValueError("is not a date-time between the years 1 and 9999 in UTC") from None
    return value


UtcDatetime = Annotated[AwareDatetime, AfterValidator(_instant_exists_in_utc)]
"""The wire's date-time: ISO 8601 with a zone, and an instant that exists in UTC."""
