"""The operators' commands of ``cowork-backend`` (registered by :mod:`backend.cli`)::

    audit tail    the latest N records of a tenant's audit log as JSON lines, oldest first, filtered
                  like GET /audit/events; --follow keeps printing new ones (polling) until interrupted
    audit verify  check a tenant's hash chain: its verdict as JSON (as GET /audit/verify answers);
                  exit 1 at the first broken link (``audit-verify`` is the same command)
    quota show    a tenant's limits (and which file sets each) and its usage today
    quota set     change a tenant's limits in <config-dir>/quotas/<tenant>.toml

They work on the store directly, like ``purge``: run them where the service's store is reachable
(the data directory, or the AWS account).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from backend.audit.repository import AuditFilter
from backend.audit.service import AuditService
from backend.common.auth import valid_tenant_id
from backend.common.clock import SystemClock
from backend.common.quota_config import LIMITS, UNLIMITED, QuotaConfigError, QuotaDirectory, Setting
from backend.common.quotas import Quotas
from backend.common.settings import Settings
from backend.storage import Stores
from contracts.events import EventType
from contracts.rest.observability import AuditEventRecord

__all__ = ["OperatorHooks", "add_operator_commands", "audit_verify"]

_FOLLOW_BATCH = 500
_LIMIT_HELP = {
    "sessionsPerUser": "sessions one user may have active at once",
    "tokensPerDay": "LLM tokens the whole tenant may use per UTC day",
    "storageBytes": "bytes of artifact content the tenant may keep",
}


class _StoreOptions(Protocol):
    def __call__(self, parser: argparse.ArgumentParser, choices: Sequence[str], /) -> None:
        """Adds --store (one of ``choices``), --data-dir, --config-dir and the AWS options."""


@dataclass(frozen=True)
class OperatorHooks:
    """What the commands need from the CLI around them."""

    settings: Callable[[argparse.Namespace], Settings]
    open_stores: Callable[[argparse.Namespace, Settings], Stores]
    usage_error: Callable[[str], Exception]
    """Makes the exception the CLI reports in one line with exit code 2."""


def add_operator_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    store_options: _StoreOptions,
    hooks: OperatorHooks,
) -> None:
    audit = commands.add_parser("audit", help="read and verify a tenant's audit log")
    audit_commands = audit.add_subparsers(dest="audit_command", required=True)

    tail = audit_commands.add_parser("tail", help="the latest records as JSON lines; --follow for new ones")
    store_options(tail, ("local", "aws"))
    tail.add_argument("--tenant", required=True)
    tail.add_argument("-n", "--lines", type=_count, default=20, help="how many of the latest (default 20)")
    tail.add_argument("--workspace", default=None, help="only this workspace's records")
    tail.add_argument("--session", default=None, help="only this session's records")
    tail.add_argument("--user", default=None, help="only this user's records")
    tail.add_argument(
        "--type",
        action="append",
        choices=[t.value for t in EventType],
        metavar="EVENT_TYPE",
        help="only records of this event type (repeatable: any of them)",
    )
    tail.add_argument("--since", type=_instant, default=None, help="the event's time at or after (ISO 8601)")
    tail.add_argument("--until", type=_instant, default=None, help="the event's time before (ISO 8601)")
    tail.add_argument(
        "-f", "--follow", action="store_true", help="keep printing new records until interrupted"
    )
    tail.add_argument(
        "--interval", type=_interval, default=1.0, help="seconds between polls with --follow (default 1)"
    )
    tail.set_defaults(run=lambda args: _audit_tail(args, hooks))

    verify = audit_commands.add_parser("verify", help="verify a tenant's audit hash chain")
    store_options(verify, ("local", "aws"))
    verify.add_argument("--tenant", required=True)
    verify.set_defaults(run=lambda args: audit_verify(args, hooks))

    quota = commands.add_parser("quota", help="show or change a tenant's quotas")
    quota_commands = quota.add_subparsers(dest="quota_command", required=True)
    show = quota_commands.add_parser("show", help="a tenant's limits and usage")
    show.add_argument("tenant")
    store_options(show, ("local", "aws"))
    show.add_argument("--no-usage", action="store_true", help="limits only; do not open the store")
    show.set_defaults(run=lambda args: _quota_show(args, hooks))
    change = quota_commands.add_parser(
        "set",
        help="change a tenant's limits",
        description="Each limit takes a whole number, 'unlimited' (none for this tenant, whatever "
        "quotas/default.toml says) or 'default' (back to quotas/default.toml's).",
    )
    change.add_argument("tenant")
    change.add_argument("--config-dir", type=Path, required=True, help="the services' config directory")
    for name in LIMITS:
        change.add_argument(
            "--" + "".join("-" + c.lower() if c.isupper() else c for c in name),
            dest=name,
            type=_setting,
            default=argparse.SUPPRESS,
            metavar="N|unlimited|default",
            help=_LIMIT_HELP[name],
        )
    change.set_defaults(run=lambda args: _quota_set(args, hooks))


# ---------------------------------------------------------------------------------------------- audit


def audit_verify(args: argparse.Namespace, hooks: OperatorHooks) -> int:
    """``audit verify`` (and ``audit-verify``): exit 0 when the chain links up, 1 at a broken link."""
    _check_tenant(args.tenant, hooks)
    stores = hooks.open_stores(args, hooks.settings(args))
    try:
        verification = AuditService(stores.audit, SystemClock()).verification(args.tenant)
    finally:
        stores.close()
    print(verification.model_dump_json(by_alias=True))
    return 0 if verification.ok else 1


def _audit_tail(args: argparse.Namespace, hooks: OperatorHooks) -> int:
    _check_tenant(args.tenant, hooks)
    if args.since is not None and args.until is not None and args.since >= args.until:
        raise hooks.usage_error("--since must be before --until")
    where = AuditFilter(
        workspace_id=args.workspace,
        session_id=args.session,
        user_id=args.user,
        event_types=frozenset(args.type or ()),
        since=args.since,
        until=args.until,
    )
    stores = hooks.open_stores(args, hooks.settings(args))
    try:
        service = AuditService(stores.audit, SystemClock())
        head = stores.audit.head(args.tenant)
        position = 0 if head is None else head.sequence
        latest = service.page(args.tenant, where, limit=args.lines).events if args.lines else []
        for record in reversed(latest):
            _print(record)
        if latest:
            position = max(position, latest[0].sequence)
        if not args.follow:
            return 0
        with _until_interrupted() as stopping:
            while not stopping.wait(args.interval):
                more = True
                while more and not stopping.is_set():
                    records, position, more = service.newer(args.tenant, where, position, _FOLLOW_BATCH)
                    for record in records:
                        _print(record)
        return 0
    finally:
        stores.close()


def _print(record: AuditEventRecord) -> None:
    sys.stdout.write(record.model_dump_json(by_alias=True, exclude_none=True) + "\n")
    sys.stdout.flush()


@contextmanager
def _until_interrupted() -> Iterator[threading.Event]:
    """An event set by SIGINT or SIGTERM: ``--follow`` ends there, with exit code 0."""
    stopping = threading.Event()
    handled = [signal.SIGINT, signal.SIGTERM]
    previous = {sig: signal.signal(sig, lambda *_: stopping.set()) for sig in handled}
    try:
        yield stopping
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# ---------------------------------------------------------------------------------------------- quota


def _quota_show(args: argparse.Namespace, hooks: OperatorHooks) -> int:
    _check_tenant(args.tenant, hooks)
    directory = QuotaDirectory(args.config_dir)
    try:
        limits, sources = directory.explain(args.tenant)
    except QuotaConfigError as exc:
        raise hooks.usage_error(str(exc)) from None
    shown: dict[str, Any] = {
        "tenantId": args.tenant,
        "limits": limits.to_wire(),
        "setIn": sources,
    }
    if not args.no_usage:
        stores = hooks.open_stores(args, hooks.settings(args))
        try:
            quotas = Quotas(directory, stores.usage, SystemClock())
            shown["usage"] = {
                "day": datetime.now(UTC).date().isoformat(),
                "tokensToday": quotas.tokens_today(args.tenant),
                "storageBytes": quotas.storage_used(args.tenant),
            }
        finally:
            stores.close()
    print(json.dumps(shown))
    return 0


def _quota_set(args: argparse.Namespace, hooks: OperatorHooks) -> int:
    changes: dict[str, Setting | None] = {name: getattr(args, name) for name in LIMITS if hasattr(args, name)}
    if not changes:
        raise hooks.usage_error("name at least one limit to change (see --help)")
    directory = QuotaDirectory(args.config_dir)
    try:
        written = directory.write(args.tenant, changes)
        limits, sources = directory.explain(args.tenant)
    except (QuotaConfigError, OSError) as exc:
        raise hooks.usage_error(str(exc)) from None
    print(
        json.dumps({"tenantId": args.tenant, "file": written, "limits": limits.to_wire(), "setIn": sources})
    )
    return 0


# ---------------------------------------------------------------------------------------------- arguments


def _check_tenant(tenant: str, hooks: OperatorHooks) -> None:
    if not valid_tenant_id(tenant):
        raise hooks.usage_error("not a valid tenant ID")


def _count(text: str) -> int:
    if not text.isdigit() or int(text) > 10_000:
        raise argparse.ArgumentTypeError("must be a whole number from 0 to 10000")
    return int(text)


def _interval(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0.05 <= value <= 3600:
        raise argparse.ArgumentTypeError("must be from 0.05 to 3600 seconds")
    return value


def _instant(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date-time: {text!r}") from None
    if value.tzinfo is None:
        raise argparse.ArgumentTypeError(f"needs a zone (Z or +hh:mm): {text!r}")
    return value


def _setting(text: str) -> Setting | None:
    if text == "default":
        return None
    if text == UNLIMITED:
        return UNLIMITED
    if not text.isdigit():
        raise argparse.ArgumentTypeError("must be a whole number, 'unlimited' or 'default'")
    return int(text)
