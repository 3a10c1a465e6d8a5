"""Policy Service payloads: the published signing keys and bundle issuing (seed 001 §4.1, §5).

* ``GET /policy/keys`` → :class:`PolicyKeySet`: the Ed25519 public keys that sign bundles, by key id
  (the part before the dot of a bundle's ``signature``; see :mod:`contracts.signing`).
* ``POST /policy/bundles`` → :class:`IssueBundleRequest` → :class:`IssuedBundle`: a signed bundle for
  the caller's tenant and user. The Session Service calls it when the services run apart.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contracts._base import WireModel
from contracts.enums import Capability
from contracts.policy import PolicyBundle
from contracts.rest._fields import Identifier

__all__ = ["IssueBundleRequest", "IssuedBundle", "PolicyKey", "PolicyKeySet"]


class PolicyKey(WireModel):
    key_id: str
    algorithm: Literal["Ed25519"] = "Ed25519"
    public_key: str
    """The raw 32-byte public key, base64url without padding."""


class PolicyKeySet(WireModel):
    keys: list[PolicyKey]


class IssueBundleRequest(WireModel):
    session_id: Identifier
    workspace_paths: list[str] = Field(default_factory=list, max_length=16)
    """The session's project paths; ``${workspace}`` in the tenant's policy expands to each."""
    supported_capabilities: list[Capability] | None = Field(default=None, max_length=len(Capability))
    """Grant only these (what the client can enforce); absent = every capability the policy grants."""


class IssuedBundle(WireModel):
    policy_bundle: PolicyBundle
    feature_flags: dict[str, bool] = Field(default_factory=dict)
