"""The read side's opaque page cursor: where the previous page stopped, in which order, for which
filters. It names a position in the caller's own chain only — the tenant always comes from the token —
so it needs no signature; a cursor that does not decode, or was made for other filters, is 400."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass

from backend.audit.repository import AuditFilter
from backend.common.errors import BackendError, invalid
from backend.common.ids import timestamp

__all__ = ["Cursor", "filter_digest"]

_VERSION = 1


def filter_digest(where: AuditFilter) -> str:
    """A short digest of the filters, so a cursor is not reused for a different query."""
    canonical = json.dumps(
        [
            where.workspace_id,
            where.session_id,
            where.user_id,
            sorted(where.event_types),
            None if where.since is None else timestamp(where.since),
            None if where.until is None else timestamp(where.until),
        ],
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Cursor:
    descending: bool
    position: int
    """The sequence number the next page starts after (before, when descending)."""
    filters: str

    def encode(self) -> str:
        document = {
            "v": _VERSION,
            "o": "desc" if self.descending else "asc",
            "p": self.position,
            "f": self.filters,
        }
        raw = json.dumps(document, separators=(",", ":")).encode("ascii")
        return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")

    @classmethod
    def decode(cls, text: str, filters: str) -> Cursor:
        try:
            document = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        except (binascii.Error, ValueError):
            raise _bad_cursor("cursor is not a cursor this service gave out") from None
        if (
            not isinstance(document, dict)
            or document.get("v") != _VERSION
            or document.get("o") not in ("asc", "desc")
            or not isinstance(document.get("p"), int)
            or isinstance(document.get("p"), bool)
            or not 0 <= document["p"] < 10**20
            or not isinstance(document.get("f"), str)
        ):
            raise _bad_cursor("cursor is not a cursor this service gave out")
        if document["f"] != filters:
            raise _bad_cursor("cursor belongs to a query with other filters; repeat the query's filters")
        return cls(document["o"] == "desc", document["p"], document["f"])


def _bad_cursor(message: str) -> BackendError:
    return invalid(message, field="cursor")
