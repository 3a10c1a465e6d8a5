"""Constrained strings shared by the REST payloads."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

Identifier = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[^\x00-\x1f\x7f]+$")]
"""An ID chosen by a client (taskId, stepId, approvalId, …): printable, at most 128 characters."""

Text = Annotated[str, Field(max_length=2000, pattern=r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$")]
"""A short free text such as a reason: no control characters except tab and newlines."""

Name = Annotated[str, Field(min_length=1, max_length=255, pattern=r"^[^\x00-\x1f\x7f]+$")]
"""A display name such as an artifact's: printable, at most 255 characters."""

MediaType = Annotated[
    str,
    Field(
        max_length=255,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*"
        r"(?:\s*;\s*[A-Za-z0-9!#$&^_.+-]+=(?:[A-Za-z0-9!#$&^_.+-]+|\"[^\"\\\x00-\x1f\x7f]*\"))*$",
    ),
]
"""A MIME type (RFC 6838) with optional parameters: it is echoed in a Content-Type header later, so
nothing that could break a header (newlines, control characters) gets in."""
