"""Bearer tokens: EdDSA JWTs with tenant and user, verified against public keys only (the issue's
security section), and what every kind of bad token gets: 401 UNAUTHORIZED with a reason."""

from __future__ import annotations

import base64
import json
from datetime import timedelta

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from backend.common.auth import Principal, TokenIssuer, TokenVerifier
from backend.common.errors import BackendError
from contracts.errors import ErrorCode, ErrorShape
from contracts.signing import key_id
from tests.backend.conftest import Keys
from tests.backend.helpers import BackendClient, ManualClock


def _b64(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def _reason(verifier: TokenVerifier, token: str) -> str:
    with pytest.raises(BackendError) as raised:
        verifier.verify(token)
    assert raised.value.code is ErrorCode.UNAUTHORIZED
    assert raised.value.status_code == 401
    return str(raised.value.shape.details["reason"])


@pytest.fixture
def verifier(keys: Keys, clock: ManualClock) -> TokenVerifier:
    return TokenVerifier([keys.auth.public_key()], clock)


def test_a_minted_token_names_its_tenant_and_user(issuer: TokenIssuer, verifier: TokenVerifier) -> None:
    token = issuer.mint("acme", "jane.doe@acme.example", timedelta(minutes=5))
    assert verifier.verify(token) == Principal("acme", "jane.doe@acme.example")
    header = jwt.get_unverified_header(token)
    claims = jwt.decode(token, options={"verify_signature": False})
    assert header["alg"] == "EdDSA"
    assert set(claims) == {"tid", "sub", "iss", "aud", "exp", "iat"}


def test_an_expired_token_is_refused_even_after_it_was_cached(
    issuer: TokenIssuer, verifier: TokenVerifier, clock: ManualClock
) -> None:
    token = issuer.mint("acme", "alice", timedelta(minutes=5))
    verifier.verify(token)
    clock.advance(minutes=6)
    assert _reason(verifier, token) == "expired"


def test_a_token_signed_by_another_key_is_refused(
    clock: ManualClock, verifier: TokenVerifier, keys: Keys
) -> None:
    forger = Ed25519PrivateKey.generate()
    unknown = TokenIssuer(forger, clock).mint("acme", "alice", timedelta(minutes=5))
    assert _reason(verifier, unknown) == "unknown_key"
    # The same key id as ours, but a signature by another key.
    claims = jwt.decode(unknown, options={"verify_signature": False})
    forged = jwt.encode(claims, forger, algorithm="EdDSA", headers={"kid": key_id(keys.auth.public_key())})
    assert _reason(verifier, forged) == "invalid_signature"


def test_an_unsigned_alg_none_token_is_refused(issuer: TokenIssuer, verifier: TokenVerifier) -> None:
    good = issuer.mint("acme", "alice", timedelta(minutes=5))
    payload = good.split(".")[1]
    none_header = _b64({"alg": "none", "typ": "JWT", "kid": jwt.get_unverified_header(good)["kid"]})
    assert _reason(verifier, f"{none_header}.{payload}.") == "algorithm"
    hs256 = _b64({"alg": "HS256", "kid": jwt.get_unverified_header(good)["kid"]})
    assert _reason(verifier, f"{hs256}.{payload}.c2ln") == "algorithm"


@pytest.mark.parametrize("token", ["", "not-a-jwt", "a.b", "a.b.c", "....", "e30.e30.e30"])
def test_garbage_is_a_malformed_token(verifier: TokenVerifier, token: str) -> None:
    assert _reason(verifier, token) in ("malformed", "algorithm")


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"iss": "someone-else"}, "invalid_claims"),
        ({"aud": "another-service"}, "invalid_claims"),
        ({"tid": None}, "invalid_claims"),
        ({"tid": "../etc"}, "invalid_claims"),
        ({"sub": ""}, "invalid_claims"),
        ({"exp": None}, "invalid_claims"),
        ({"iat": 4_000_000_000}, "invalid_claims"),
    ],
)
def test_a_validly_signed_token_with_bad_claims_is_refused(
    keys: Keys, clock: ManualClock, verifier: TokenVerifier, claims: dict[str, object], reason: str
) -> None:
    now = int(clock.now().timestamp())
    base = {
        "tid": "acme",
        "sub": "alice",
        "iss": "cowork-backend",
        "aud": "cowork",
        "iat": now,
        "exp": now + 60,
    }
    merged = {k: v for k, v in {**base, **claims}.items() if v is not None}
    token = jwt.encode(merged, keys.auth, algorithm="EdDSA", headers={"kid": key_id(keys.auth.public_key())})
    assert _reason(verifier, token) == reason


def test_the_cache_is_bounded(issuer: TokenIssuer, keys: Keys, clock: ManualClock) -> None:
    small = TokenVerifier([keys.auth.public_key()], clock, cache_size=3)
    tokens = [issuer.mint("acme", f"user{i}", timedelta(minutes=5)) for i in range(10)]
    for token in tokens:
        small.verify(token)
    assert len(small._cache) == 3


def test_a_tenant_id_that_could_break_a_key_cannot_be_minted(issuer: TokenIssuer) -> None:
    for tenant in ("", "a/b", "a#b", "x" * 65, " acme"):
        with pytest.raises(ValueError, match="tenant"):
            issuer.mint(tenant, "alice", timedelta(minutes=1))


def test_a_token_that_would_expire_after_the_year_9999_cannot_be_minted(issuer: TokenIssuer) -> None:
    with pytest.raises(ValueError, match="9999"):
        issuer.mint("acme", "alice", timedelta(days=3_000_000))


@pytest.mark.parametrize(
    ("authorization", "reason"),
    [
        (None, "missing"),
        ("Basic dXNlcjpwYXNz", "malformed"),
        ("Bearer", "malformed"),
        ("Bearer  ", "malformed"),
    ],
)
async def test_requests_without_a_usable_bearer_token_are_unauthorized(
    api: BackendClient, authorization: str | None, reason: str
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    response = await api.http.get("/workspaces", headers=headers)
    assert response.status_code == 401
    assert response.json()["code"] == ErrorCode.UNAUTHORIZED
    assert response.json()["details"]["reason"] == reason
    assert response.headers["www-authenticate"].startswith("Bearer")


async def test_an_expired_token_over_http_is_unauthorized(
    api: BackendClient, issuer: TokenIssuer, clock: ManualClock
) -> None:
    token = issuer.mint("acme", "alice", timedelta(seconds=30))
    clock.advance(minutes=2)
    response = await api.http.get("/workspaces", headers={"Authorization": f"Bearer {token}"})
    assert (response.status_code, response.json()["details"]["reason"]) == (401, "expired")


async def test_authentication_comes_before_the_body_is_read(api: BackendClient) -> None:
    response = await api.http.post(
        "/sessions", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 401


async def test_every_route_but_the_public_keys_refuses_an_anonymous_caller_before_reading_anything(
    api: BackendClient,
) -> None:
    # Parameters that would fail validation and bodies that are not JSON: the answer is still 401.
    bad = {
        "session_id": "s" * 500,
        "workspace_id": "w" * 500,
        "artifact_id": "a" * 500,
        "tool_name": "t" * 500,
    }
    document = (await api.http.get("/openapi.json")).json()
    checked = 0
    for path, item in document["paths"].items():
        for method in item:
            response = await api.http.request(
                method.upper(),
                path.format(**bad) + "?limit=lots",
                content=b"{not json",
                headers={"Content-Type": "application/json"},
            )
            if path == "/policy/keys":
                assert response.status_code == 200
                continue
            assert (response.status_code, response.json()["code"]) == (401, ErrorCode.UNAUTHORIZED), path
            checked += 1
    assert checked >= 18


# ------------------------------------------------------------------ tokens signed with the real key


def _raw_b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _signed(keys: Keys, payload: str, header: str | None = None) -> str:
    """A token whose header and payload are exactly these JSON texts, signed with the service's own
    key: what a leaked or misused signing key, or a buggy issuer, could produce."""
    kid = key_id(keys.auth.public_key())
    header = header or json.dumps({"alg": "EdDSA", "typ": "JWT", "kid": kid})
    signing_input = f"{_raw_b64(header.encode())}.{_raw_b64(payload.encode())}"
    return f"{signing_input}.{_raw_b64(keys.auth.sign(signing_input.encode()))}"


def _claims_text(clock: ManualClock, **raw: str) -> str:
    """The payload's JSON text, with ``raw`` values spliced in verbatim (``NaN``, a repeated key)."""
    now = int(clock.now().timestamp())
    fields = {"tid": '"acme"', "sub": '"alice"', "iss": '"cowork-backend"', "aud": '"cowork"'}
    fields |= {"iat": str(now), "exp": str(now + 60)}
    fields |= {name: value for name, value in raw.items() if not name.startswith("extra")}
    text = ", ".join(f'"{name}": {value}' for name, value in fields.items())
    extras = [value for name, value in raw.items() if name.startswith("extra")]
    return "{" + ", ".join([text, *extras]) + "}"


async def test_a_token_forged_with_plain_claims_is_accepted(
    api: BackendClient, keys: Keys, clock: ManualClock
) -> None:
    """The control for the cases below: the forging itself is sound."""
    token = _signed(keys, _claims_text(clock))
    response = await api.http.get("/workspaces", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ({"exp": "NaN"}, "malformed"),
        ({"exp": "Infinity"}, "malformed"),
        ({"exp": "-Infinity"}, "malformed"),
        ({"iat": "NaN"}, "malformed"),
        ({"exp": "1e300"}, "invalid_claims"),
        ({"exp": "1" + "0" * 30}, "invalid_claims"),
        ({"exp": "253402300800"}, "invalid_claims"),
        ({"exp": "-1"}, "invalid_claims"),
        ({"iat": "-1e300"}, "invalid_claims"),
        ({"extra": '"tid": "globex"'}, "malformed"),
        ({"extra": '"exp": 1'}, "malformed"),
        ({"extra": '"sub": "alice"'}, "malformed"),
    ],
    ids=lambda value: json.dumps(value) if isinstance(value, dict) else value,
)
async def test_a_signed_token_with_unusable_or_repeated_claims_is_unauthorized(
    api: BackendClient, keys: Keys, clock: ManualClock, raw: dict[str, str], reason: str
) -> None:
    token = _signed(keys, _claims_text(clock, **raw))
    for _ in range(2):  # the second time from the verifier's cache, if anything had been cached
        response = await api.http.get("/workspaces", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 401, response.text
        shape = ErrorShape.model_validate_json(response.content)
        assert (shape.code, shape.details["reason"]) == (ErrorCode.UNAUTHORIZED, reason)
        assert response.headers["www-authenticate"].startswith("Bearer")


async def test_a_signed_token_whose_header_repeats_a_field_is_unauthorized(
    api: BackendClient, keys: Keys, clock: ManualClock
) -> None:
    kid = key_id(keys.auth.public_key())
    header = f'{{"alg": "EdDSA", "kid": "{kid}", "alg": "EdDSA"}}'
    token = _signed(keys, _claims_text(clock), header)
    response = await api.http.get("/workspaces", headers={"Authorization": f"Bearer {token}"})
    assert (response.status_code, response.json()["details"]["reason"]) == (401, "malformed")
