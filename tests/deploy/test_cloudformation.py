"""``deploy/aws/backend.yaml`` against the code it deploys: the tables as ``TABLE_SPECS`` creates
them, each service's IAM role granting exactly the tables its repositories use (found by building
each service's app over the AWS store), and the load balancer routing every route to its service."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from backend.apps import SERVICES, create_app
from backend.common.auth import TokenVerifier
from backend.common.clock import SystemClock
from backend.storage import Stores
from backend.storage.aws import AwsSettings, open_aws_stores
from backend.storage.aws.config import TABLES
from backend.storage.aws.tables import TABLE_SPECS
from tests.deploy.template import ROOT, load_template

TEMPLATE = load_template()
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
PREFIX = "drift"

# What each service reads and writes, written out so a change to it is a visible change to this
# test; test_the_mapping_is_the_codes derives the same from the code.
SERVICE_TABLES: dict[str, set[str]] = {
    "session": {"sessions", "usage"},
    "policy": set(),
    "workspace": {"workspaces", "artifacts", "search", "usage"},
    "approval": {"approvals"},
    "audit": {"audit"},
    "telemetry": {"telemetry", "usage"},
    "tools": set(),
}
SERVICE_BUCKET = {"workspace"}
LOGICAL = {
    "session": "Session",
    "policy": "Policy",
    "workspace": "Workspace",
    "approval": "Approval",
    "audit": "Audit",
    "telemetry": "Telemetry",
    "tools": "Tools",
}


def _of_type(kind: str) -> dict[str, dict[str, Any]]:
    return {name: resource for name, resource in RESOURCES.items() if resource["Type"] == kind}


def _tables_by_name() -> dict[str, tuple[str, dict[str, Any]]]:
    found = {}
    for logical, resource in _of_type("AWS::DynamoDB::Table").items():
        table_name = resource["Properties"]["TableName"]
        assert isinstance(table_name, dict), f"{logical}: TableName must be {{EnvPrefix}}-<name>"
        match = re.fullmatch(r"\$\{EnvPrefix\}-([a-z]+)", table_name["Fn::Sub"])
        assert match, f"{logical}: TableName {table_name} is not ${{EnvPrefix}}-<name>"
        found[match.group(1)] = (logical, resource["Properties"])
    return found


# ---------------------------------------------------------------------------------------------- tables


def test_the_template_has_exactly_the_codes_tables() -> None:
    assert set(_tables_by_name()) == set(TABLE_SPECS) == set(TABLES)


@pytest.mark.parametrize("name", sorted(TABLE_SPECS))
def test_each_table_is_the_codes_table(name: str) -> None:
    spec = TABLE_SPECS[name]
    logical, properties = _tables_by_name()[name]
    assert properties["KeySchema"] == spec["KeySchema"], logical
    assert sorted(properties["AttributeDefinitions"], key=lambda a: a["AttributeName"]) == sorted(
        ({"AttributeName": a, "AttributeType": "S"} for a in spec["AttributeDefinitions"]),
        key=lambda a: a["AttributeName"],
    ), logical
    assert properties.get("GlobalSecondaryIndexes", []) == spec.get("GlobalSecondaryIndexes", []), logical
    # create_resources: on demand; TTL on the attribute ``ttl`` where the spec says so, none elsewhere.
    assert properties["BillingMode"] == "PAY_PER_REQUEST"
    if spec.get("ttl"):
        assert properties["TimeToLiveSpecification"] == {"AttributeName": "ttl", "Enabled": True}
    else:
        assert "TimeToLiveSpecification" not in properties
    assert RESOURCES[logical]["DeletionPolicy"] == "Retain"


def test_names_are_those_the_services_expect() -> None:
    parameter = TEMPLATE["Parameters"]["EnvPrefix"]
    pattern = re.compile(parameter["AllowedPattern"])
    settings = AwsSettings(env_prefix=parameter["Default"])
    bucket = RESOURCES["ArtifactBucket"]["Properties"]["BucketName"]["Fn::Sub"]
    assert bucket.replace("${EnvPrefix}", parameter["Default"]) == settings.bucket_name
    # Every prefix the template accepts, the services accept too (and names the bucket as S3 must).
    for prefix in ("prod", "dev-2", "a", "x" * 30):
        assert pattern.fullmatch(prefix)
        assert AwsSettings(env_prefix=prefix).table("sessions") == f"{prefix}-sessions"
    for rejected in ("Prod", "", "a_b", "x" * 31, "-a"):
        assert not pattern.fullmatch(rejected)


def test_the_bucket_is_private_encrypted_versioned_and_expires_deleted_content() -> None:
    bucket = RESOURCES["ArtifactBucket"]["Properties"]
    assert all(bucket["PublicAccessBlockConfiguration"].values())
    assert len(bucket["PublicAccessBlockConfiguration"]) == 4
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"]
    assert bucket["VersioningConfiguration"] == {"Status": "Enabled"}
    rules = {rule["Id"]: rule for rule in bucket["LifecycleConfiguration"]["Rules"]}
    assert rules["expire-deleted-artifacts"]["NoncurrentVersionExpiration"] == {
        "NoncurrentDays": {"Ref": "NoncurrentArtifactDays"}
    }
    assert rules["abort-interrupted-uploads"]["AbortIncompleteMultipartUpload"]["DaysAfterInitiation"] == 1


# ---------------------------------------------------------------------------------------------- IAM


def _repository_tables(stores: Stores) -> dict[int, set[str]]:
    """id(repository) → the tables (and ``s3``) it was built to use, read from its attributes."""
    used: dict[int, set[str]] = {}
    for field in ("sessions", "workspaces", "content", "approvals", "audit", "telemetry", "usage"):
        repository = getattr(stores, field)
        names = {v for v in vars(repository).values() if isinstance(v, str)}
        tables = {n.removeprefix(f"{PREFIX}-") for n in names if n.startswith(f"{PREFIX}-")}
        used[id(repository)] = {"s3" if t == "cowork-artifacts" else t for t in tables}
    return used


def _reachable(root: object) -> Iterator[object]:
    """Every object the backend's service objects hold, followed through our own classes only."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        if isinstance(item, list | tuple | set | frozenset):
            todo.extend(item)
        elif isinstance(item, dict):
            todo.extend(item.values())
        elif type(item).__module__.startswith(("backend.", "contracts.")):
            todo.extend(getattr(item, "__dict__", {}).values())
            todo.extend(getattr(item, s) for s in getattr(type(item), "__slots__", ()) if hasattr(item, s))


def _used_by_service(aws_environment: None) -> dict[str, set[str]]:
    key = Ed25519PrivateKey.generate()
    stores = open_aws_stores(AwsSettings(env_prefix=PREFIX, region="us-east-1"))
    try:
        tables = _repository_tables(stores)
        used = {}
        for service in SERVICES:
            app = create_app(
                stores,
                verifier=TokenVerifier([key.public_key()], SystemClock()),
                policy_key=key,
                services=[service],
                peers_url="https://cowork.example.com",
            )
            reached: set[str] = set()
            for item in _reachable(app.state.backend):
                reached |= tables.get(id(item), set())
            app.state.backend.close()
            used[service] = reached
        return used
    finally:
        stores.close()


@pytest.fixture
def aws_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")


def test_the_mapping_is_the_codes(aws_environment: None) -> None:
    used = _used_by_service(aws_environment)
    assert {service: tables - {"s3"} for service, tables in used.items()} == SERVICE_TABLES
    assert {service for service, tables in used.items() if "s3" in tables} == SERVICE_BUCKET


def _statements(role: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for policy in role["Properties"]["Policies"] for s in policy["PolicyDocument"]["Statement"]]


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _table_of(resource: Any, logical_to_table: dict[str, str]) -> str:
    if "Fn::GetAtt" in resource:
        return logical_to_table[resource["Fn::GetAtt"][0]]
    match = re.fullmatch(r"\$\{(\w+)\.Arn\}/index/\*", resource["Fn::Sub"])
    assert match, resource
    return logical_to_table[match.group(1)]


@pytest.mark.parametrize("service", SERVICES)
def test_each_task_role_grants_only_its_tables(service: str) -> None:
    logical_to_table = {logical: name for name, (logical, _) in _tables_by_name().items()}
    role = RESOURCES[f"{LOGICAL[service]}TaskRole"]
    granted: dict[str, set[str]] = {}
    s3_actions: set[str] = set()
    for statement in _statements(role):
        assert statement["Effect"] == "Allow"
        actions = _as_list(statement["Action"])
        assert all("*" not in action for action in actions), statement
        for resource in _as_list(statement["Resource"]):
            assert resource != "*", statement
            if all(a.startswith("dynamodb:") for a in actions):
                granted.setdefault(_table_of(resource, logical_to_table), set()).update(actions)
        if any(a.startswith("s3:") for a in actions):
            s3_actions.update(actions)
    assert set(granted) == SERVICE_TABLES[service]
    for table, table_actions in granted.items():
        # Scan only where the purge scans (backend/storage/aws/workspaces.py).
        assert ("dynamodb:Scan" in table_actions) == (table in {"workspaces", "artifacts"}), table
        assert not {"dynamodb:DeleteTable", "dynamodb:CreateTable", "dynamodb:UpdateTable"} & table_actions
    assert bool(s3_actions) == (service in SERVICE_BUCKET)


def test_only_the_policy_service_gets_the_policy_signing_key() -> None:
    for service in SERVICES:
        container = RESOURCES[f"{LOGICAL[service]}TaskDefinition"]["Properties"]["ContainerDefinitions"][0]
        environment = {e["Name"]: e["Value"] for e in container["Environment"]}
        assert environment["COWORK_SERVICE"] == service
        secrets = str(container["Secrets"])
        assert "AuthPublicKeysSecretArn" in secrets
        assert ("PolicySigningKeySecretArn" in secrets) == (service == "policy")
        assert container["User"] == "10001:10001"


# ---------------------------------------------------------------------------------------------- routing


def _service_routes() -> dict[str, set[str]]:
    key = Ed25519PrivateKey.generate()
    from backend.storage.memory import open_memory_stores

    routes = {}
    for service in SERVICES:
        app = create_app(
            open_memory_stores(),
            verifier=TokenVerifier([key.public_key()], SystemClock()),
            policy_key=key,
            services=[service],
            peers_url="https://cowork.example.com",
        )
        paths = {route.path for route in app.router.routes}  # type: ignore[attr-defined]
        routes[service] = {p for p in paths if not p.startswith(("/docs", "/openapi", "/health"))}
        app.state.backend.close()
    return routes


def _alb_matches(pattern: str, path: str) -> bool:
    # ALB path patterns: '*' is any run of characters ('/' included), '?' one; case-sensitive.
    return fnmatch.fnmatchcase(path, pattern)


def test_every_route_reaches_its_service_through_the_load_balancer() -> None:
    rules = {service: RESOURCES[f"{LOGICAL[service]}ListenerRule"]["Properties"] for service in SERVICES}
    priorities = [rule["Priority"] for rule in rules.values()]
    assert len(set(priorities)) == len(priorities)
    for service, paths in _service_routes().items():
        assert paths, service
        for path in paths:
            concrete = re.sub(r"\{\w+\}", "x1", path)
            # The first rule by priority that matches must be this service's.
            matching = sorted(
                (rule["Priority"], owner)
                for owner, rule in rules.items()
                if any(
                    _alb_matches(p, concrete)
                    for c in rule["Conditions"]
                    for p in c["PathPatternConfig"]["Values"]
                )
            )
            assert matching, f"{path} reaches no service"
            assert matching[0][1] == service, f"{path} goes to {matching[0][1]}, not {service}"
        target = rules[service]["Actions"][0]["TargetGroupArn"]["Ref"]
        assert RESOURCES[target]["Properties"]["HealthCheckPath"] == "/health"


def test_the_listener_is_https_with_the_certificate_parameter() -> None:
    listeners = _of_type("AWS::ElasticLoadBalancingV2::Listener")
    assert [listener["Properties"]["Protocol"] for listener in listeners.values()] == ["HTTPS"]
    (listener,) = listeners.values()
    assert listener["Properties"]["Certificates"] == [{"CertificateArn": {"Ref": "CertificateArn"}}]


# ---------------------------------------------------------------------------------------------- docs


def test_every_parameter_is_described_in_the_template_and_the_operations_page() -> None:
    page = (ROOT / "docs" / "operations" / "aws.md").read_text(encoding="utf-8")
    for name, parameter in TEMPLATE["Parameters"].items():
        assert len(parameter.get("Description", "")) > 20, name
        assert f"`{name}`" in page, f"docs/operations/aws.md does not describe {name}"
