"""The administrators' governance commands of ``cowork-backend`` (registered by :mod:`backend.cli`)::

    policy set TENANT FILE      validate FILE (.toml or .json) as the services would read it and install
                                it as the tenant's policy (atomically); lifts a revocation
    policy revoke TENANT        revoke the tenant's policy in force (--reason): no bundle is issued for
                                the tenant until a policy is set again, and running sessions pause
    policy show TENANT          the tenant's policy version, revocation and file (--full: the policy)
    session stop SESSION_ID     end a session (--reason; --tenant, default the embedded backend's):
                                it is cancelled and its runtime is told to stop

``policy set`` and ``revoke`` add one to the tenant's policy version; the Session Service pushes the
change to the tenant's running sessions within its poll interval (:mod:`backend.session.push`).
They work on the config directory (``--config-dir``, required) and ``session stop`` on the store,
directly, like ``purge``: run them where those are reachable. Each prints one JSON object.
"""

from __future__ import annotations

import argparse
import getpass
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from backend.common.clock import SystemClock
from backend.common.errors import BackendError
from backend.local_mode import LOCAL_TENANT
from backend.operations import OperatorHooks
from backend.policy.admin import PolicyAdminError, install_policy, revoke_policy, summarize_policy
from backend.policy.config import PolicyDirectory, builtin_policy
from backend.session.stop import stop_session

__all__ = ["add_admin_commands"]


class StoreOptions(Protocol):
    def __call__(self, parser: argparse.ArgumentParser, choices: Sequence[str], /) -> None:
        """Adds --store (one of ``choices``), --data-dir, --config-dir and the AWS options."""


def add_admin_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    store_options: StoreOptions,
    hooks: OperatorHooks,
) -> None:
    policy = commands.add_parser("policy", help="install, revoke or show a tenant's policy")
    policy_commands = policy.add_subparsers(dest="policy_command", required=True)

    def config_dir(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--config-dir", type=Path, required=True, help="the services' config directory (policy files)"
        )

    install = policy_commands.add_parser("set", help="validate and install a tenant's policy file")
    install.add_argument("tenant")
    install.add_argument("file", type=Path, help="the policy (.toml or .json): bundle fields, see docs")
    config_dir(install)
    install.set_defaults(run=lambda args: _policy_set(args, hooks))

    revoke = policy_commands.add_parser("revoke", help="revoke a tenant's policy: running sessions pause")
    revoke.add_argument("tenant")
    revoke.add_argument("--reason", default=None, help="shown to the tenant's users")
    config_dir(revoke)
    revoke.set_defaults(run=lambda args: _policy_revoke(args, hooks))

    show = policy_commands.add_parser("show", help="a tenant's policy version, revocation and file")
    show.add_argument("tenant")
    show.add_argument("--full", action="store_true", help="also the effective policy itself")
    config_dir(show)
    show.set_defaults(run=lambda args: _policy_show(args, hooks))

    session = commands.add_parser("session", help="act on a session")
    session_commands = session.add_subparsers(dest="session_command", required=True)
    stop = session_commands.add_parser("stop", help="end a running session (remote admin stop)")
    stop.add_argument("session_id", metavar="SESSION_ID")
    stop.add_argument("--reason", default=None, help="shown to the session's user")
    stop.add_argument(
        "--tenant", default=LOCAL_TENANT, help=f"the session's tenant (default {LOCAL_TENANT!r}: local mode)"
    )
    store_options(stop, ("local", "aws"))
    stop.set_defaults(run=lambda args: _session_stop(args, hooks))


def _policies(args: argparse.Namespace, hooks: OperatorHooks) -> PolicyDirectory:
    if not args.config_dir.is_dir():
        raise hooks.usage_error(f"{args.config_dir}: no such directory")
    settings = hooks.settings(args)
    builtin = builtin_policy(
        bundle_ttl=settings.bundle_ttl, max_artifact_bytes=settings.limits.max_artifact_bytes
    )
    return PolicyDirectory(args.config_dir, builtin)


def _policy_set(args: argparse.Namespace, hooks: OperatorHooks) -> int:
    policies = _policies(args, hooks)
    try:
        summary = install_policy(policies, args.tenant, args.file, now=SystemClock().now())
    except (PolicyAdminError, OSError, ValueError) as exc:
        raise hooks.usage_error(str(exc)) from None
    print(json.dumps(summary.to_wire()))
    return 0


def _policy_revoke(args: argparse.Namespace, hooks: OperatorHooks) -> int:
    policies = _policies(args, hooks)
    try:
        summary = revoke_policy(policies, args.tenant, args.reason, now=SystemClock().now())
    except (PolicyAdminError, OSError, ValueError) as exc:
        raise hooks.usage_error(str(exc)) from None
    print(json.dumps(summary.to_wire()))
    return 0


def _policy_show(args: argparse.Namespace, hooks: OperatorHooks) -> int:
    policies = _policies(args, hooks)
    try:
        summary = summarize_policy(policies, args.tenant, full=args.full)
    except PolicyAdminError as exc:
        raise hooks.usage_error(str(exc)) from None
    print(json.dumps(summary.to_wire()))
    return 0


def _session_stop(args: argparse.Namespace, hooks: OperatorHooks) -> int:
    stores = hooks.open_stores(args, hooks.settings(args))
    try:
        record = stop_session(
            stores.sessions,
            SystemClock(),
            tenant_id=args.tenant,
            session_id=args.session_id,
            stopped_by=f"operator:{_login()}",
            reason=args.reason,
        )
    except BackendError as exc:
        raise hooks.usage_error(f"{args.session_id}: {exc.shape.message}") from None
    finally:
        stores.close()
    print(
        json.dumps(
            {
                "sessionId": record.session_id,
                "tenantId": record.tenant_id,
                "status": record.status.value,
                "endReason": record.end_reason,
                "stoppedBy": record.stopped_by,
            }
        )
    )
    return 0


def _login() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name (a container's numeric user)
        return "unknown"
