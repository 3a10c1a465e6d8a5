"""The commands that set a deployment up and keep it tidy (registered by :mod:`backend.cli`)::

    migrate          create or bring up to date the store's tables: on AWS the DynamoDB tables (keys,
                     GSIs, TTL) and the bucket as ``backend.storage.aws.tables`` specifies them, adding
                     what is missing and leaving what exists; locally the SQLite schema migrations.
                     Idempotent: a second run changes nothing
    tenant create    record a new tenant in the config directory and mint its administrator's token
                     (the 'admin' scope), printed once and stored nowhere
    keys rotate      new auth and/or policy signing keys in the data directory; the former ones still
                     verify for --keep-days (backend.key_rotation). Prints the PEM values a deployment's
                     key secrets take

Each prints one JSON object. Exit codes: 0 done, 2 bad usage or configuration (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Protocol

from backend.common.auth import ADMIN_SCOPE, TokenIssuer, valid_tenant_id, valid_user_id
from backend.common.clock import SystemClock
from backend.common.files import write_atomically
from backend.common.keys import KeyFileError, load_private_key, private_directory
from backend.common.settings import Settings
from backend.key_rotation import KEY_KINDS, public_pem, retired_public_keys, rotate_keys
from backend.local_mode import KeyPairs
from backend.operations import OperatorHooks

__all__ = ["TENANTS_FOLDER", "add_deployment_commands"]

TENANTS_FOLDER = "tenant-registry"
"""``<config dir>/tenant-registry/<tenant>.json``: who created the tenant, when, and its first
administrator. Apart from ``tenants/``, which holds the tenants' policy files."""

_ADMIN_TOKEN_TTL = timedelta(days=7)


class _StoreOptions(Protocol):
    def __call__(self, parser: argparse.ArgumentParser, choices: Sequence[str], /) -> None:
        """Adds --store (one of ``choices``), --data-dir, --config-dir and the AWS options."""


def add_deployment_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    store_options: _StoreOptions,
    hooks: OperatorHooks,
    aws_setup: Callable[[argparse.Namespace, Settings], list[str]],
) -> None:
    """``aws_setup(args, settings)`` creates the AWS resources of ``args``' options (the CLI's)."""
    migrate = commands.add_parser(
        "migrate",
        help="create or update the store's tables (idempotent)",
        description="AWS: creates the DynamoDB tables (keys, indexes, TTL) and the artifact bucket that"
        " are missing, and adds the indexes an older table lacks; what exists is left alone. Local:"
        " brings the SQLite database to the latest schema. Running it again changes nothing.",
    )
    store_options(migrate, ("local", "aws"))
    migrate.set_defaults(run=lambda args: _migrate(args, hooks, aws_setup))

    tenant = commands.add_parser("tenant", help="create a tenant and its administrator's token")
    tenant_commands = tenant.add_subparsers(dest="tenant_command", required=True)
    create = tenant_commands.add_parser("create", help="record a tenant and print its admin token once")
    create.add_argument("tenant")
    create.add_argument(
        "--admin-user", required=True, help="the administrator's user ID (the token's subject)"
    )
    create.add_argument("--config-dir", type=Path, required=True, help="the services' config directory")
    create.add_argument(
        "--key", type=Path, default=None, help="PEM private key that signs tokens (default: the data dir's)"
    )
    create.add_argument(
        "--data-dir", type=Path, default=None, help="where the auth key is (default: the user's)"
    )
    create.add_argument(
        "--ttl-days", type=_days, default=_ADMIN_TOKEN_TTL.days, help="the token's lifetime (default 7 days)"
    )
    create.set_defaults(run=lambda args: _tenant_create(args, hooks))

    keys = commands.add_parser("keys", help="rotate the signing keys")
    key_commands = keys.add_subparsers(dest="keys_command", required=True)
    rotate = key_commands.add_parser(
        "rotate",
        help="new signing keys; the former ones verify for --keep-days more",
        description="Replaces the data directory's signing keys. Tokens and policy bundles the former "
        "keys signed keep verifying for --keep-days (restart the server to load the new keys).",
    )
    rotate.add_argument(
        "--data-dir", type=Path, default=None, help="the keys' data directory (default: the user's)"
    )
    rotate.add_argument(
        "--key", choices=(*KEY_KINDS, "both"), default="both", help="which key (default both)"
    )
    rotate.add_argument(
        "--keep-days",
        type=_days,
        default=30,
        help="how long the former keys still verify (default 30: the longest token lifetime)",
    )
    rotate.set_defaults(run=lambda args: _keys_rotate(args, hooks))


# ---------------------------------------------------------------------------------------------- migrate


def _migrate(
    args: argparse.Namespace,
    hooks: OperatorHooks,
    aws_setup: Callable[[argparse.Namespace, Settings], list[str]],
) -> int:
    settings = hooks.settings(args)
    if args.store == "aws":
        created = aws_setup(args, settings)
        print(json.dumps({"store": "aws", "created": created}))
        return 0
    from backend.storage.local import DATABASE_FILE
    from backend.storage.local.db import Database

    private_directory(args.data_dir)
    database = Database(args.data_dir / DATABASE_FILE)
    try:
        version = database.migrate()
    finally:
        database.close()
    print(
        json.dumps(
            {"store": "local", "database": str(args.data_dir / DATABASE_FILE), "schemaVersion": version}
        )
    )
    return 0


# ---------------------------------------------------------------------------------------------- tenant


def _tenant_create(args: argparse.Namespace, hooks: OperatorHooks) -> int:
    if not valid_tenant_id(args.tenant):
        raise hooks.usage_error("a tenant ID is 1-64 letters, digits, '.', '_' or '-'")
    if not valid_user_id(args.admin_user):
        raise hooks.usage_error("an admin user ID is 1-256 characters without control characters")
    if not args.config_dir.is_dir():
        raise hooks.usage_error(f"{args.config_dir}: no such directory")
    try:
        key = load_private_key(args.key) if args.key else KeyPairs.in_directory(args.data_dir).auth
    except KeyFileError as exc:
        raise hooks.usage_error(str(exc)) from None
    record = args.config_dir / TENANTS_FOLDER / f"{args.tenant}.json"
    if record.exists():
        raise hooks.usage_error(
            f"tenant {args.tenant!r} exists already ({record}); mint another admin token with"
            " `cowork-backend token --admin`"
        )
    clock = SystemClock()
    now = clock.now()
    ttl = timedelta(days=args.ttl_days)
    token = TokenIssuer(key, clock).mint(args.tenant, args.admin_user, ttl, scopes=[ADMIN_SCOPE])
    document = {"tenantId": args.tenant, "createdAt": now.isoformat(), "firstAdmin": args.admin_user}
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(record, (json.dumps(document, indent=2) + "\n").encode("utf-8"))
    except OSError as exc:
        raise hooks.usage_error(f"cannot write {record}: {exc.strerror or exc}") from None
    print(
        json.dumps(
            {
                **document,
                "record": str(record),
                "adminToken": token,
                "expiresAt": (now + ttl).isoformat(),
                "note": "the token is shown once and stored nowhere: hand it to the administrator now",
            }
        )
    )
    return 0


# ---------------------------------------------------------------------------------------------- keys


def _keys_rotate(args: argparse.Namespace, hooks: OperatorHooks) -> int:
    kinds = KEY_KINDS if args.key == "both" else (args.key,)
    now = SystemClock().now()
    try:
        rotations = rotate_keys(args.data_dir, kinds, keep_for=timedelta(days=args.keep_days), now=now)
        auth_retired = retired_public_keys(args.data_dir, "auth", now)
        policy_retired = retired_public_keys(args.data_dir, "policy", now)
        current_auth = KeyPairs.in_directory(args.data_dir).auth.public_key()
    except (KeyFileError, OSError) as exc:
        raise hooks.usage_error(f"cannot rotate the keys in {args.data_dir}: {exc}") from None
    print(
        json.dumps(
            {
                "rotated": [
                    {
                        "key": rotation.kind,
                        "publicKey": rotation.public_key_pem,
                        "formerKeyVerifiesUntil": (
                            rotation.retired.expires_at.isoformat() if rotation.retired else None
                        ),
                    }
                    for rotation in rotations
                ],
                # The values of a deployment's key secrets after this rotation (docs/operations/aws.md).
                "authPublicKeys": public_pem(current_auth) + "".join(public_pem(r.key) for r in auth_retired),
                "retiredPolicyKeys": "".join(public_pem(r.key) for r in policy_retired),
            }
        )
    )
    return 0


def _days(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 3650:
        raise argparse.ArgumentTypeError("must be a whole number of days from 1 to 3650")
    return int(text)
