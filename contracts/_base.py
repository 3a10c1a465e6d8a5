"""The base every wire model stands on: camelCase on the wire, snake_case in Python, strict input."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
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
