"""JSON responses straight from the wire models: camelCase, absent optional fields left out."""

from __future__ import annotations

from collections.abc import Mapping

from starlette.responses import Response

from contracts._base import WireModel
from contracts.errors import ErrorShape

__all__ = ["error_response", "json_response"]

_NO_STORE = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


def json_response(
    model: WireModel, status_code: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    # Serialised by pydantic in one step, without FastAPI's generic encoder: this is the hot path.
    body = model.model_dump_json(by_alias=True, exclude_none=True)
    return Response(
        body, status_code=status_code, media_type="application/json", headers={**_NO_STORE, **(headers or {})}
    )


def error_response(shape: ErrorShape, status_code: int, headers: Mapping[str, str] | None = None) -> Response:
    """The seed's error shape is the whole body of every error (seed 001 §6.5)."""
    body = shape.model_dump_json(by_alias=True)
    return Response(
        body, status_code=status_code, media_type="application/json", headers={**_NO_STORE, **(headers or {})}
    )
