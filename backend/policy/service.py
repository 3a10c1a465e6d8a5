"""Issuing signed policy bundles and publishing the keys that verify them."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from backend.common.auth import Principal
from backend.common.clock import Clock
from backend.common.errors import BackendError
from backend.policy.config import PolicyConfigError, PolicyDirectory, TenantPolicy, build_bundle
from contracts.enums import Capability
from contracts.errors import ErrorCode
from contracts.policy import PolicyBundle
from contracts.rest.policies import IssuedBundle, PolicyKey, PolicyKeySet
from contracts.signing import key_id, public_key_to_text, sign_bundle

__all__ = ["PolicyService", "policy_revoked", "policy_version", "tenant_policy"]

_VERSION_EXCLUDES = {"session_id", "tenant_id", "user_id", "expires_at", "version", "signature"}


def policy_version(bundle: PolicyBundle) -> str:
    """A digest of what the bundle allows — not of whom or until when — so a resume can tell whether
    the policy itself changed."""
    content = bundle.model_dump(mode="json", by_alias=True, exclude=_VERSION_EXCLUDES, exclude_none=True)
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def tenant_policy(policies: PolicyDirectory, tenant_id: str) -> TenantPolicy:
    """The tenant's policy; a 500 ``POLICY_BUNDLE_INVALID`` when its configuration does not validate
    (the directory logs why: only an administrator can fix it)."""
    try:
        return policies.for_tenant(tenant_id)
    except PolicyConfigError:
        raise BackendError(
            ErrorCode.POLICY_BUNDLE_INVALID,
            "The policy configuration for this tenant is invalid; an administrator must fix it",
            status_code=500,
        ) from None


def policy_revoked(reason: str | None, version: int) -> BackendError:
    """403 ``POLICY_EXPIRED`` with ``details.reason = "revoked"``: the tenant's policy was revoked by an
    administrator; no bundle is issued until a valid policy is installed (``policy set``)."""
    why = f" ({reason})" if reason else ""
    return BackendError(
        ErrorCode.POLICY_EXPIRED,
        f"The organisation's policy was revoked by an administrator{why}; sessions can continue once an"
        " administrator installs a valid policy",
        status_code=403,
        details={"reason": "revoked", "revocationReason": reason, "policyVersion": version},
    )


class PolicyService:
    def __init__(
        self,
        policies: PolicyDirectory,
        signing_key: Ed25519PrivateKey,
        clock: Clock,
        *,
        retired_keys: Sequence[Ed25519PublicKey] = (),
    ) -> None:
        self._policies = policies
        self._signing_key = signing_key
        self._kid = key_id(signing_key.public_key())
        self._clock = clock
        self._published = [signing_key.public_key(), *retired_keys]
        # Building and validating a bundle costs more than signing it; the part that depends only on
        # the policy and the session's paths is built once and copied per session.
        self._bases: OrderedDict[tuple[str, tuple[str, ...], frozenset[Capability] | None], PolicyBundle] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    def issue(
        self,
        principal: Principal,
        session_id: str,
        workspace_paths: Sequence[str],
        supported: Sequence[Capability] | None,
    ) -> IssuedBundle:
        """A signed bundle for ``session_id``, valid from now for the tenant's bundle TTL.

        Only capabilities in ``supported`` are granted (a client cannot enforce scopes of a capability
        it does not know); ``None`` grants everything the policy does.
        """
        revoked = self._policies.states.read(principal.tenant_id)
        if revoked.revoked:
            raise policy_revoked(revoked.reason, revoked.version)
        policy = tenant_policy(self._policies, principal.tenant_id)
        base = self._base(policy, tuple(workspace_paths), None if supported is None else frozenset(supported))
        now = self._clock.now()
        bundle = base.model_copy(
            update={
                "session_id": session_id,
                "tenant_id": principal.tenant_id,
                "user_id": principal.user_id,
                "expires_at": now + policy.bundle_ttl,
            }
        )
        return IssuedBundle(
            policy_bundle=sign_bundle(bundle, self._signing_key, kid=self._kid),
            feature_flags=dict(policy.feature_flags),
        )

    def _base(
        self, policy: TenantPolicy, paths: tuple[str, ...], supported: frozenset[Capability] | None
    ) -> PolicyBundle:
        key = (policy.revision, paths, supported)
        with self._lock:
            cached = self._bases.get(key)
            if cached is not None:
                self._bases.move_to_end(key)
                return cached
        template = dict(policy.template)
        if supported is not None:
            wanted = {capability.value for capability in supported}
            template["capabilities"] = [
                grant for grant in template.get("capabilities", []) if grant["name"] in wanted
            ]
        bundle = build_bundle(template, paths, session_id="base", expires_at=self._clock.now())
        bundle = bundle.model_copy(update={"version": policy_version(bundle)})
        with self._lock:
            self._bases[key] = bundle
            while len(self._bases) > 1024:
                self._bases.popitem(last=False)
        return bundle

    def key_set(self) -> PolicyKeySet:
        return PolicyKeySet(
            keys=[
                PolicyKey(key_id=key_id(key), public_key=public_key_to_text(key)) for key in self._published
            ]
        )
