"""The OpenAPI document is true to the wire: every route, its request body's schema (from the contracts
models), its error responses in the error shape, and the bearer scheme."""

from __future__ import annotations

from typing import Any

from openapi_spec_validator import validate

from contracts.approvals import ApprovalDecisionRecord
from contracts.events import EventEnvelope
from contracts.rest.policies import IssueBundleRequest
from contracts.rest.push import StopSessionRequest
from contracts.rest.sessions import CancelSessionRequest, CreateSessionRequest, ResumeSessionRequest
from contracts.rest.tools import InvokeToolRequest
from contracts.rest.workspaces import ArtifactUploadRequest, ResolveWorkspaceRequest
from tests.backend.helpers import BackendClient

BODIES = {
    "/sessions": CreateSessionRequest,
    "/sessions/{session_id}/resume": ResumeSessionRequest,
    "/sessions/{session_id}/cancel": CancelSessionRequest,
    "/sessions/{session_id}/stop": StopSessionRequest,
    "/workspaces": ResolveWorkspaceRequest,
    "/workspaces/{workspace_id}/artifacts": ArtifactUploadRequest,
    "/approvals": ApprovalDecisionRecord,
    "/policy/bundles": IssueBundleRequest,
    "/audit/events": EventEnvelope,
    "/telemetry/events": EventEnvelope,
    "/tools/{tool_name}/invoke": InvokeToolRequest,
}


def _resolve(document: dict[str, Any], ref: str) -> dict[str, Any]:
    node: Any = document
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    assert isinstance(node, dict)
    return node


async def test_the_document_is_valid_openapi(api: BackendClient) -> None:
    response = await api.http.get("/openapi.json")
    assert response.status_code == 200
    validate(response.json())


async def test_every_post_route_declares_its_body_schema_from_the_contracts(api: BackendClient) -> None:
    document = (await api.http.get("/openapi.json")).json()
    posts = {path for path, item in document["paths"].items() if "post" in item}
    assert posts == set(BODIES)
    for path, model in BODIES.items():
        schema = document["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
        refs = [
            choice["$ref"] if "$ref" in choice else choice["items"]["$ref"]
            for choice in schema.get("oneOf", [schema])
        ]
        assert {ref.rsplit("/", 1)[1] for ref in refs} == {model.__name__}, path
        declared = _resolve(document, refs[0])
        expected = model.model_json_schema(by_alias=True, mode="validation")
        assert set(declared["properties"]) == set(expected["properties"]), path
        assert set(declared.get("required", [])) == set(expected.get("required", [])), path
        for prop in declared["properties"].values():
            for ref in [prop.get("$ref")] + [c.get("$ref") for c in prop.get("anyOf", [])]:
                if ref:
                    _resolve(document, ref)


async def test_every_authenticated_operation_documents_its_errors_in_the_error_shape(
    api: BackendClient,
) -> None:
    document = (await api.http.get("/openapi.json")).json()
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if path == "/policy/keys":
                assert operation["security"] == []
                continue
            assert "401" in operation["responses"], (method, path)
            schema = operation["responses"]["401"]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorShape"}
    assert set(_resolve(document, "#/components/schemas/ErrorShape")["properties"]) == {
        "code",
        "message",
        "retryable",
        "details",
    }
