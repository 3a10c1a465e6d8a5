"""Keeping the OpenAPI document true to the wire.

Bodies are read by :func:`backend.common.body.read_json`, which FastAPI cannot see into, so each route
declares its body with :func:`body_spec` and the app adds the models' schemas to the document's
components (:func:`install_openapi`). Schemas are generated in validation mode throughout
(``separate_input_output_schemas=False`` on the app) so a model has one schema under one name.
"""

from __future__ import annotations

from collections.abc import Iterable
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel

from contracts.errors import ErrorShape

__all__ = ["alternative", "body_spec", "error_responses", "install_openapi"]

_REF = "#/components/schemas/{model}"


def body_spec(
    *models: type[BaseModel], array_of: type[BaseModel] | None = None, required: bool = True
) -> dict[str, Any]:
    """``openapi_extra`` for a route whose JSON body is one of ``models`` (or an array of ``array_of``)."""
    choices: list[dict[str, Any]] = [{"$ref": _REF.format(model=model.__name__)} for model in models]
    if array_of is not None:
        choices.append({"type": "array", "items": {"$ref": _REF.format(model=array_of.__name__)}})
    schema = choices[0] if len(choices) == 1 else {"oneOf": choices}
    return {"requestBody": {"required": required, "content": {"application/json": {"schema": schema}}}}


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` documenting error statuses, each answered with the error shape.

    Written as references rather than ``{"model": ErrorShape}``: FastAPI builds a validator for every
    response model of every route, which made building an app several times slower.
    """
    schema = {"$ref": _REF.format(model="ErrorShape")}
    return {
        code: {"description": HTTPStatus(code).phrase, "content": {"application/json": {"schema": schema}}}
        for code in codes
    }


def alternative(model: type[BaseModel], description: str) -> dict[str, Any]:
    """A second success status answered with ``model`` (documented by reference, as above)."""
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": _REF.format(model=model.__name__)}}},
    }


def install_openapi(app: FastAPI, body_models: Iterable[type[BaseModel]]) -> None:
    models: list[type[BaseModel]] = [*body_models, ErrorShape]

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
            separate_input_output_schemas=False,
        )
        schemas: dict[str, Any] = document.setdefault("components", {}).setdefault("schemas", {})
        for model in models:
            schema = model.model_json_schema(by_alias=True, ref_template=_REF, mode="validation")
            for name, definition in schema.pop("$defs", {}).items():
                schemas.setdefault(name, definition)
            schemas.setdefault(model.__name__, schema)
        document["components"].setdefault("securitySchemes", {})["bearer"] = {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT (EdDSA)",
        }
        document["security"] = [{"bearer": []}]
        app.openapi_schema = document
        return document

    app.openapi = openapi  # type: ignore[method-assign]
