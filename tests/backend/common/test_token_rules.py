"""Bearer-token rules at their edges, each refusal asserted by its reason (401 UNAUTHORIZED).

From RFC 7519 and the module's contract: a token is good until ``exp`` (plus the verifier's clock
leeway) and not before ``iat`` (minus the leeway); it names exactly one tenant and user, checked
against the same rules as minting; a cached verification never outlives the token or stands in for
another token string.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from backend.common.auth import (
    DEFAULT_AUDIENCE,
    DEFAULT_ISSUER,
    Principal,
    TokenIssuer,
    TokenVerifier,
    valid_tenant_id,
    valid_user_id,
)
from backend.common.errors import BackendError
from contracts.errors import ErrorCode
from contracts.signing import key_id
from tests.backend.conftest import Keys
from tests.backend.helpers import ManualClock

LAST_INSTANT = 253_402_300_799  # 9999-12-31T23:59:59Z


def refusal(verifier: TokenVerifier, token: str) -> dict[str, Any]:
    with pytest.raises(BackendError) as raised:
        verifier.verify(token)
    assert raised.value.code is ErrorCode.UNAUTHORIZED
    assert raised.value.status_code == 401
    return dict(raised.value.shape.details)


def signed(keys: Keys, clock: ManualClock, *, kid: str | None = None, **claims: Any) -> str:
    now = int(clock.now().timestamp())
    body: dict[str, Any] = {
        "tid": "acme",
        "sub": "alice",
        "iss": DEFAULT_ISSUER,
        "aud": DEFAULT_AUDIENCE,
        "iat": now,
        "exp": now + 60,
    }
    body.update(claims)
    body = {name: value for name, value in body.items() if value is not None}
    header = {"kid": kid if kid is not None else key_id(keys.auth.public_key())}
    return jwt.encode(body, keys.auth, algorithm="EdDSA", headers=header)


@pytest.fixture
def strict(keys: Keys, clock: ManualClock) -> TokenVerifier:
    """No leeway: the boundaries are the claims themselves."""
    return TokenVerifier([keys.auth.public_key()], clock, leeway=timedelta(0))


# ---------------------------------------------------------------- expiry


def test_a_token_is_good_until_the_second_before_exp_and_expired_at_exp(
    issuer: TokenIssuer, strict: TokenVerifier, clock: ManualClock
) -> None:
    token = issuer.mint("acme", "alice", timedelta(seconds=60))
    clock.advance(seconds=59)
    assert strict.verify(token) == Principal("acme", "alice")
    clock.advance(seconds=1)
    assert refusal(strict, token)["reason"] == "expired"


def test_a_token_never_verified_before_is_expired_at_exp_too(
    issuer: TokenIssuer, strict: TokenVerifier, clock: ManualClock
) -> None:
    token = issuer.mint("acme", "alice", timedelta(seconds=60))
    clock.advance(seconds=60)
    assert refusal(strict, token)["reason"] == "expired"


def test_the_leeway_extends_expiry_by_exactly_its_length(
    issuer: TokenIssuer, keys: Keys, clock: ManualClock
) -> None:
    verifier = TokenVerifier([keys.auth.public_key()], clock, leeway=timedelta(seconds=30))
    token = issuer.mint("acme", "alice", timedelta(seconds=60))
    fresh = issuer.mint("acme", "bob", timedelta(seconds=60))
    clock.advance(seconds=89)
    assert verifier.verify(token).user_id == "alice"  # cached from here on
    assert verifier.verify(fresh).user_id == "bob"  # first seen inside the leeway
    clock.advance(seconds=1)
    assert refusal(verifier, token)["reason"] == "expired"
    assert refusal(verifier, fresh)["reason"] == "expired"


def test_a_cached_token_expires_on_time_and_stays_refused(
    issuer: TokenIssuer, strict: TokenVerifier, clock: ManualClock
) -> None:
    token = issuer.mint("acme", "alice", timedelta(seconds=60))
    strict.verify(token)
    clock.advance(seconds=60)
    assert refusal(strict, token)["reason"] == "expired"
    assert refusal(strict, token)["reason"] == "expired"
    assert token not in strict._cache


@pytest.mark.parametrize(
    ("offset", "good"),
    [(0, True), (30, True), (31, False)],
)
def test_a_token_issued_in_the_future_is_refused_beyond_the_leeway(
    keys: Keys, clock: ManualClock, offset: int, good: bool
) -> None:
    verifier = TokenVerifier([keys.auth.public_key()], clock, leeway=timedelta(seconds=30))
    now = int(clock.now().timestamp())
    token = signed(keys, clock, iat=now + offset, exp=now + offset + 60)
    if good:
        assert verifier.verify(token).tenant_id == "acme"
    else:
        assert refusal(verifier, token) == {"reason": "invalid_claims", "claim": "iat"}


@pytest.mark.parametrize(
    ("claims", "claim"),
    [
        ({"exp": True}, "exp"),
        ({"exp": "4102444800"}, "exp"),
        ({"exp": LAST_INSTANT + 1}, "exp"),
        ({"exp": -1}, "exp"),
        ({"iat": None}, "iat"),
        ({"iat": False}, "iat"),
        ({"iat": -1}, "iat"),
        ({"tid": 42}, "tid"),
        ({"tid": ""}, "tid"),
        ({"tid": "x" * 65}, "tid"),
        ({"tid": ".acme"}, "tid"),
        ({"tid": "ac/me"}, "tid"),
        ({"tid": "acme\n"}, "tid"),
        ({"sub": None}, "sub"),
        ({"sub": 7}, "sub"),
        ({"sub": "x" * 257}, "sub"),
        ({"sub": "al\x00ice"}, "sub"),
        ({"sub": "alice\x7f"}, "sub"),
    ],
)
def test_each_unusable_claim_is_named(
    keys: Keys, clock: ManualClock, strict: TokenVerifier, claims: dict[str, Any], claim: str
) -> None:
    assert refusal(strict, signed(keys, clock, **claims)) == {"reason": "invalid_claims", "claim": claim}


def test_claims_at_their_limits_are_accepted(keys: Keys, clock: ManualClock, strict: TokenVerifier) -> None:
    token = signed(keys, clock, tid="A" + "b._-9" * 12 + "xyz", sub="J" * 256, exp=LAST_INSTANT)
    principal = strict.verify(token)
    assert (len(principal.tenant_id), len(principal.user_id)) == (64, 256)
    now = clock.now().timestamp()
    assert strict.verify(signed(keys, clock, exp=now + 0.5, iat=0)).user_id == "alice"


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("a", True),
        ("9", True),
        ("a" * 64, True),
        ("a" * 65, False),
        ("-a", False),
        ("_a", False),
        ("a b", False),
    ],
)
def test_tenant_ids_are_plain(value: str, valid: bool) -> None:
    assert valid_tenant_id(value) is valid


@pytest.mark.parametrize(
    ("value", "valid"),
    [("Jane Doe", True), ("é", True), ("x" * 256, True), ("", False), ("x" * 257, False), ("a\tb", False)],
)
def test_user_ids_are_any_text_without_control_characters(value: str, valid: bool) -> None:
    assert valid_user_id(value) is valid


# ---------------------------------------------------------------- keys and signatures


def test_a_token_naming_no_key_or_another_key_is_refused(
    keys: Keys, clock: ManualClock, strict: TokenVerifier
) -> None:
    claims = {
        "tid": "acme",
        "sub": "alice",
        "iss": DEFAULT_ISSUER,
        "aud": DEFAULT_AUDIENCE,
        "iat": 0,
        "exp": 60,
    }
    no_kid = jwt.encode(claims, keys.auth, algorithm="EdDSA")
    assert refusal(strict, no_kid)["reason"] == "unknown_key"
    other = signed(keys, clock, kid=key_id(keys.policy.public_key()))
    assert refusal(strict, other)["reason"] == "unknown_key"


def test_a_signature_by_another_key_under_our_key_id_is_invalid(
    keys: Keys, clock: ManualClock, strict: TokenVerifier
) -> None:
    good = signed(keys, clock)
    forged = signed(
        Keys(auth=Ed25519PrivateKey.generate(), policy=keys.policy), clock, kid=key_id(keys.auth.public_key())
    )
    assert refusal(strict, forged)["reason"] == "invalid_signature"
    assert strict.verify(good).tenant_id == "acme"


def test_a_cached_token_does_not_vouch_for_the_same_claims_with_another_signature(
    keys: Keys, clock: ManualClock, strict: TokenVerifier
) -> None:
    good = signed(keys, clock)
    strict.verify(good)
    head, body, _ = good.split(".")
    assert refusal(strict, f"{head}.{body}.{'A' * 86}")["reason"] == "invalid_signature"


def test_every_trusted_key_verifies_its_own_tokens(keys: Keys, clock: ManualClock) -> None:
    both = TokenVerifier([keys.auth.public_key(), keys.policy.public_key()], clock)
    one = TokenIssuer(keys.auth, clock).mint("acme", "alice", timedelta(minutes=1))
    two = TokenIssuer(keys.policy, clock).mint("globex", "bob", timedelta(minutes=1))
    assert both.verify(one) == Principal("acme", "alice")
    assert both.verify(two) == Principal("globex", "bob")


def test_a_verifier_needs_a_key(clock: ManualClock) -> None:
    with pytest.raises(ValueError, match="at least one public key"):
        TokenVerifier([], clock)


@pytest.mark.parametrize(
    ("issuer", "audience"),
    [("cowork-backend-2", DEFAULT_AUDIENCE), (DEFAULT_ISSUER, "cowork-admin")],
)
def test_a_verifier_for_another_issuer_or_audience_refuses_ours(
    keys: Keys, clock: ManualClock, issuer: str, audience: str
) -> None:
    verifier = TokenVerifier([keys.auth.public_key()], clock, issuer=issuer, audience=audience)
    assert refusal(verifier, signed(keys, clock))["reason"] == "invalid_claims"
    minted = TokenIssuer(keys.auth, clock, issuer=issuer, audience=audience).mint(
        "acme", "a", timedelta(minutes=1)
    )
    assert verifier.verify(minted).user_id == "a"


# ---------------------------------------------------------------- tenant scoping and the cache


def test_the_principal_is_the_tokens_tenant_and_user_and_carries_the_token(
    issuer: TokenIssuer, strict: TokenVerifier
) -> None:
    acme = issuer.mint("acme", "alice", timedelta(minutes=1))
    globex = issuer.mint("globex", "alice", timedelta(minutes=1))
    first, second = strict.verify(acme), strict.verify(globex)
    assert (first.tenant_id, second.tenant_id) == ("acme", "globex")
    assert (first.token, second.token) == (acme, globex)
    assert strict.verify(acme).tenant_id == "acme"  # from the cache, still its own tenant
    assert acme not in repr(first)


def test_the_cache_drops_the_least_recently_used_token(
    issuer: TokenIssuer, keys: Keys, clock: ManualClock
) -> None:
    verifier = TokenVerifier([keys.auth.public_key()], clock, cache_size=2)
    a, b, c = (issuer.mint("acme", user, timedelta(minutes=5)) for user in ("a", "b", "c"))
    verifier.verify(a)
    verifier.verify(b)
    verifier.verify(a)  # a is now the most recently used
    verifier.verify(c)
    assert list(verifier._cache) == [a, c]


# ---------------------------------------------------------------- minting


def test_minting_refuses_bad_users_and_expiries_past_9999(keys: Keys) -> None:
    clock = ManualClock(datetime(9999, 12, 31, 23, 58, 59, tzinfo=UTC))
    issuer = TokenIssuer(keys.auth, clock)
    for user in ("", "a\nb", "x" * 257):
        with pytest.raises(ValueError, match="user ID"):
            issuer.mint("acme", user, timedelta(minutes=1))
    assert issuer.mint("acme", "alice", timedelta(seconds=60))  # exactly the last instant
    with pytest.raises(ValueError, match="9999"):
        issuer.mint("acme", "alice", timedelta(seconds=61))


def test_a_minted_token_carries_the_claims_the_verifier_reads(keys: Keys, clock: ManualClock) -> None:
    token = TokenIssuer(keys.auth, clock, issuer="me", audience="you").mint(
        "acme", "alice", timedelta(seconds=90)
    )
    claims = jwt.decode(token, options={"verify_signature": False})
    now = int(clock.now().timestamp())
    assert claims == {"tid": "acme", "sub": "alice", "iss": "me", "aud": "you", "iat": now, "exp": now + 90}
    assert jwt.get_unverified_header(token)["kid"] == key_id(keys.auth.public_key())


@pytest.mark.parametrize(
    ("claims", "claim"),
    [
        ({"iss": "someone-else"}, "iss"),
        ({"iss": None}, "iss"),
        ({"aud": "another-service"}, "aud"),
        ({"aud": None}, "aud"),
    ],
)
def test_a_wrong_or_missing_issuer_or_audience_is_named(
    keys: Keys, clock: ManualClock, strict: TokenVerifier, claims: dict[str, Any], claim: str
) -> None:
    assert refusal(strict, signed(keys, clock, **claims)) == {"reason": "invalid_claims", "claim": claim}


@pytest.mark.parametrize("payload", [b"[1, 2]", b'"acme"', b"{not json"])
def test_a_signed_payload_that_is_not_a_json_object_is_malformed(
    keys: Keys, strict: TokenVerifier, payload: bytes
) -> None:
    header = jwt.utils.base64url_encode(
        f'{{"alg": "EdDSA", "kid": "{key_id(keys.auth.public_key())}"}}'.encode()
    ).decode()
    signing_input = f"{header}.{jwt.utils.base64url_encode(payload).decode()}"
    token = f"{signing_input}.{jwt.utils.base64url_encode(keys.auth.sign(signing_input.encode())).decode()}"
    assert refusal(strict, token)["reason"] == "malformed"


def test_the_default_leeway_is_thirty_seconds(issuer: TokenIssuer, keys: Keys, clock: ManualClock) -> None:
    verifier = TokenVerifier([keys.auth.public_key()], clock)
    token = issuer.mint("acme", "alice", timedelta(seconds=60))
    clock.advance(seconds=89)
    assert verifier.verify(token).user_id == "alice"
    clock.advance(seconds=1)
    assert refusal(verifier, token)["reason"] == "expired"


def _message(verifier: TokenVerifier, token: str) -> str:
    with pytest.raises(BackendError) as raised:
        verifier.verify(token)
    return raised.value.shape.message


def test_each_refusal_says_what_is_wrong(keys: Keys, clock: ManualClock, strict: TokenVerifier) -> None:
    assert _message(strict, "not-a-jwt") == "The bearer token is not a well-formed JWT"
    other = signed(keys, clock, kid=key_id(keys.policy.public_key()))
    assert _message(strict, other) == "The bearer token was signed by a key this service does not trust"
    head, _, signature = signed(keys, clock).split(".")
    repeated = jwt.utils.base64url_encode(b'{"tid": "acme", "tid": "globex"}').decode()
    assert _message(strict, f"{head}.{repeated}.{signature}") == (
        "The bearer token's claims are not strict JSON: the name 'tid' appears more than once"
    )
    with pytest.raises(ValueError, match=r"^a verifier needs at least one public key$"):
        TokenVerifier([], clock)
