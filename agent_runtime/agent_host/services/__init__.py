"""The runtime's client of the backend services (seed 000 §3.2, §3.4, §7.5, §9.5, §10.4, §11).

Typical use by the session::

    client = BackendClient(BackendConfig.from_environment(os.environ))
    keys = keys_from_environment(os.environ) or await client.policy_keys()
    created = await client.create_session(request)
    if created.compatibility_status is CompatibilityStatus.INCOMPATIBLE: ...   # report, do not proceed
    verify_policy_bundle(created.policy_bundle, keys)
    ...
    await client.aclose()
"""

from __future__ import annotations

from .client import (
    DEFAULT_TIMEOUTS,
    MAX_RESPONSE_BYTES,
    REMOTE_TOOL_TIMEOUT_S,
    USER_AGENT,
    BackendClient,
    BackendTimeouts,
)
from .config import TOKEN_VARIABLE, URL_VARIABLE, BackendConfig, is_loopback_host
from .errors import (
    SESSION_GONE_REASONS,
    BackendConfigError,
    BackendError,
    BackendRejected,
    BackendUnreachable,
    SessionGone,
)
from .keys import POLICY_KEYS_VARIABLE, keys_from_environment, keys_from_list, verify_policy_bundle

__all__ = [
    "DEFAULT_TIMEOUTS",
    "MAX_RESPONSE_BYTES",
    "POLICY_KEYS_VARIABLE",
    "REMOTE_TOOL_TIMEOUT_S",
    "SESSION_GONE_REASONS",
    "TOKEN_VARIABLE",
    "URL_VARIABLE",
    "USER_AGENT",
    "BackendClient",
    "BackendConfig",
    "BackendConfigError",
    "BackendError",
    "BackendRejected",
    "BackendTimeouts",
    "BackendUnreachable",
    "SessionGone",
    "is_loopback_host",
    "keys_from_environment",
    "keys_from_list",
    "verify_policy_bundle",
]
