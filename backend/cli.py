"""``cowork-backend``: serve the backend and run its maintenance commands.

Commands::

    serve         run the services with uvicorn (--store memory|local|aws); prints a JSON "ready" line;
                  --idle-timeout S stops it after S seconds without a client (backend/idle.py)
    token         mint a bearer token for development (--tenant, --user, --ttl)
    keygen        create the auth and policy key pairs in the data directory
    purge         remove workspaces inactive for 90 days, orphaned artifacts and content; index for
                  search the artifacts stored without an index entry (--dry-run: list what would go)
    migrate       create or update the store's tables (AWS: tables, GSIs, TTL, bucket; local: SQLite)
    tenant create record a tenant and print its administrator's token once
    keys rotate   new signing keys; the former ones verify for --keep-days more
    audit tail    a tenant's latest audit records as JSON lines (filters; --follow)
    audit verify  check a tenant's audit hash chain; exit 1 at the first broken link
                  (``audit-verify`` is the same command, kept under its former name)
    quota show    a tenant's quotas and usage; ``quota set`` changes its limits
    policy set|revoke|show   install, revoke or show a tenant's policy (running sessions are told)
    session stop  end a running session (remote admin stop)
    aws-setup     create the DynamoDB tables (GSIs, TTL) and the S3 bucket for development

Exit codes: 0 success, 1 the check failed (audit verify), 2 bad usage or configuration.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import sys
import threading
from collections.abc import Sequence
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Only the standard library here: the services, FastAPI, pydantic and uvicorn are imported by the
# command that needs them, once main() has paused the cyclic collector for the start (see main).
if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

    from backend.common.settings import Settings
    from backend.local_mode import KeyPairs
    from backend.operations import OperatorHooks
    from backend.storage import Stores
    from backend.storage.aws import AwsSettings
    from backend.workspace.service import WorkspaceService

__all__ = ["main"]

logger = logging.getLogger("backend.cli")

LOCAL_TOKEN_TTL = timedelta(days=30)
_DRY_RUN_LISTED = 1000
"""The most workspaces ``purge --dry-run`` lists (it says when there are more)."""


class UsageError(Exception):
    """Bad arguments or configuration: reported in one line, exit code 2."""


# ---------------------------------------------------------------------------------------------- stores


def _open_stores(args: argparse.Namespace, settings: Settings, *, serving: bool = False) -> Stores:
    # Each store is imported only when chosen: boto3 alone takes a few hundred milliseconds to import,
    # which the desktop's embedded backend (local store) should not pay at every start.
    if args.store == "memory":
        from backend.storage.memory import open_memory_stores

        return open_memory_stores()
    if args.store == "local":
        from backend.storage.local import open_local_stores

        return open_local_stores(
            args.data_dir,
            inline_content_bytes=settings.inline_content_bytes,
            remove_interrupted_uploads=serving,
        )
    from backend.storage.aws import open_aws_stores

    return open_aws_stores(_aws_settings(args, settings))


def _aws_settings(args: argparse.Namespace, settings: Settings) -> AwsSettings:
    from backend.storage.aws import AwsSettings

    try:
        return AwsSettings.from_environment(
            env_prefix=args.env_prefix,
            region=args.region,
            bucket=args.bucket,
            workspace_inactivity=settings.workspace_inactivity,
            telemetry_retention=settings.telemetry_retention,
            session_retention=settings.session_retention,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# ---------------------------------------------------------------------------------------------- serve


def _serving_keys(
    args: argparse.Namespace, keys: KeyPairs | None
) -> tuple[list[Ed25519PublicKey], Ed25519PrivateKey | None]:
    """Token-verifying public keys and the policy signing key: given files, else the data dir's."""
    from backend.common.keys import KeyFileError, load_private_key, load_public_key

    try:
        verifying = [load_public_key(path) for path in args.auth_public_key or []]
        policy_key = load_private_key(args.policy_key) if args.policy_key else None
    except KeyFileError as exc:
        raise UsageError(str(exc)) from None
    if not verifying and keys is not None:
        # After `keys rotate`, tokens the former auth key signed verify until its grace period ends.
        verifying = [keys.auth.public_key(), *_data_dir_retired(args.data_dir, "auth")]
    if policy_key is None and keys is not None:
        policy_key = keys.policy
    return verifying, policy_key


def _retired_keys(args: argparse.Namespace, *, from_data_dir: bool) -> list[Ed25519PublicKey]:
    """Public keys of former policy signing keys: still published, so bundles they signed verify."""
    from backend.common.keys import KeyFileError, load_public_key

    try:
        given = [load_public_key(path) for path in args.retired_policy_key or []]
    except KeyFileError as exc:
        raise UsageError(str(exc)) from None
    if from_data_dir:
        given += _data_dir_retired(args.data_dir, "policy")
    return given


def _data_dir_retired(data_dir: Path, kind: str) -> list[Ed25519PublicKey]:
    from backend.common.clock import SystemClock
    from backend.common.keys import KeyFileError
    from backend.key_rotation import retired_public_keys

    try:
        return [retired.key for retired in retired_public_keys(data_dir, kind, SystemClock().now())]
    except KeyFileError as exc:
        raise UsageError(str(exc)) from None


def _serve(args: argparse.Namespace, *, collecting: bool = True) -> int:
    """Serve until stopped. ``collecting``: cyclic garbage collection resumes once the server is up
    (main paused it for the start)."""
    # FastAPI imports pydantic.v1 at the first route it builds, only to refuse v1 models (10 ms of
    # the start, measured); the backend has none. A None entry makes that import fail, which FastAPI
    # takes as "no pydantic.v1 here" (as backend/__init__.py does for httpx's command line).
    sys.modules.setdefault("pydantic.v1", None)  # type: ignore[arg-type]
    import uvicorn

    from backend.apps import SERVICES, Backend, create_app
    from backend.common.auth import TokenIssuer, TokenVerifier
    from backend.common.clock import SystemClock
    from backend.common.logs import configure_logging
    from backend.idle import IdleWatch
    from backend.local_mode import LOCAL_TENANT, KeyPairs, local_user, remove_state_file, write_state_file
    from backend.policy.config import PolicyDirectory, builtin_policy
    from backend.server import Server, bind, loop_and_http, resume_collection
    from backend.session.push import PushSettings

    settings = _settings(args)
    builtin = builtin_policy(
        bundle_ttl=settings.bundle_ttl, max_artifact_bytes=settings.limits.max_artifact_bytes
    )
    policies = PolicyDirectory(args.config_dir, builtin)
    problems = policies.check()
    if problems:
        raise UsageError("policy configuration: " + "; ".join(problems))
    clock = SystemClock()
    # Memory and local stores are the embedded default: they keep their keys in the data directory
    # and mint the local user's token. A deployment on AWS is handed its keys.
    embedded = args.store != "aws"
    keys = (
        KeyPairs.in_directory(args.data_dir)
        if embedded or not (args.auth_public_key and args.policy_key)
        else None
    )
    verifying, policy_key = _serving_keys(args, keys)
    signs_with_data_dir_key = keys is not None and policy_key is keys.policy
    # Before the stores open, so what opening them does (removing interrupted uploads) is logged.
    configure_logging(args.log_level, args.log_file)
    stores = _open_stores(args, settings, serving=True)
    backend: Backend | None = None
    try:
        try:
            app = create_app(
                stores,
                verifier=TokenVerifier(verifying, clock),
                policy_key=policy_key,
                retired_policy_keys=_retired_keys(args, from_data_dir=signs_with_data_dir_key),
                services=args.service or SERVICES,
                settings=settings,
                policies=policies,
                clock=clock,
                peers_url=args.peers_url,
                push=PushSettings(poll_s=args.push_interval),
                websockets=not args.no_websockets,
            )
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        backend = app.state.backend
        try:
            sock = bind(args.host, args.port)
        except OSError as exc:
            raise UsageError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
        host, port = sock.getsockname()[:2]
        url = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

        purging: list[threading.Thread] = []

        def ready() -> None:
            line: dict[str, Any] = {"event": "ready", "url": url, "pid": os.getpid(), "store": args.store}
            if embedded and keys is not None and backend is not None and backend.policy is not None:
                user = local_user()
                token = TokenIssuer(keys.auth, clock).mint(LOCAL_TENANT, user, LOCAL_TOKEN_TTL)
                line["stateFile"] = str(
                    write_state_file(
                        args.data_dir,
                        url=url,
                        token=token,
                        user_id=user,
                        policy_keys=backend.policy.key_set(),
                        started_at=clock.now(),
                    )
                )
            print(json.dumps(line), flush=True)
            resume_collection(collecting)
            logger.info("serving %s on %s", ", ".join(args.service or SERVICES), url)
            if args.store == "local" and backend is not None and backend.workspaces is not None:
                # After "ready", so a large data directory never delays the desktop's start.
                purging.append(
                    threading.Thread(target=_purge_quietly, args=(backend.workspaces,), daemon=True)
                )
                purging[0].start()

        loop, http = loop_and_http()
        config = uvicorn.Config(
            app,
            loop=loop,
            http=http,
            # Without WebSockets uvicorn refuses upgrades as a proxy that does not pass them would.
            ws="none" if args.no_websockets else "auto",
            lifespan="off",
            access_log=False,
            log_config=None,
            server_header=False,
            # Nothing reads the client's address or scheme, so X-Forwarded-* need not be parsed (a
            # middleware around every request when on).
            proxy_headers=False,
            timeout_keep_alive=30,
            timeout_graceful_shutdown=10,
        )
        if args.no_websockets:
            # uvicorn says "install websockets" at every refused upgrade: the operator chose to serve none.
            logging.getLogger("uvicorn.error").addFilter(_NoWebSocketAdvice())
        idle = IdleWatch(args.data_dir, args.idle_timeout) if args.idle_timeout > 0 else None
        Server(config, ready, args.worker_threads, idle).run(sockets=[sock])
        for thread in purging:
            thread.join(timeout=30)
        return 0
    finally:
        if embedded:
            remove_state_file(args.data_dir)
        if backend is not None:
            backend.close()
        stores.close()


class _NoWebSocketAdvice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("No supported WebSocket library")


def _purge_quietly(workspaces: WorkspaceService) -> None:
    """The start-up maintenance of local mode: the purge (workspaces inactive for 90 days, orphaned
    content), then indexing for search what was stored before the index existed."""
    try:
        report = workspaces.purge()
    except Exception:
        logger.exception("the start-up purge failed; it runs again at the next start")
    else:
        logger.info("start-up purge: %s", json.dumps(asdict(report)))
    try:
        indexed = workspaces.index_backlog()
    except Exception:
        logger.exception("indexing stored artifacts for search failed; it runs again at the next start")
        return
    if indexed:
        logger.info("start-up search indexing: %d artifacts indexed", indexed)


def _settings(args: argparse.Namespace) -> Settings:
    from backend.common.config_file import ConfigError, load_settings

    try:
        return load_settings(args.config_dir)
    except ConfigError as exc:
        raise UsageError(f"configuration: {exc}") from None


# ------------------------------------------------------------------------------------------ other commands


def _token(args: argparse.Namespace) -> int:
    from backend.common.auth import ADMIN_SCOPE, TokenIssuer
    from backend.common.clock import SystemClock
    from backend.common.keys import KeyFileError, load_private_key
    from backend.local_mode import KeyPairs

    try:
        key = load_private_key(args.key) if args.key else KeyPairs.in_directory(args.data_dir).auth
    except KeyFileError as exc:
        raise UsageError(str(exc)) from None
    try:
        token = TokenIssuer(key, SystemClock()).mint(
            args.tenant, args.user, timedelta(seconds=args.ttl), scopes=[ADMIN_SCOPE] if args.admin else []
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(token)
    return 0


def _keygen(args: argparse.Namespace) -> int:
    from backend.local_mode import KeyPairs

    KeyPairs.in_directory(args.data_dir)
    keys = args.data_dir / "keys"
    paths = {
        "authPublicKey": keys / "auth_ed25519.pem.pub",
        "policyPublicKey": keys / "policy_ed25519.pem.pub",
    }
    print(json.dumps({name: str(path) for name, path in paths.items()}))
    return 0


def _purge(args: argparse.Namespace) -> int:
    from backend.common.clock import SystemClock
    from backend.workspace.service import WorkspaceService

    settings = _settings(args)
    stores = _open_stores(args, settings)
    try:
        now = SystemClock().now()
        expired_before = now - settings.session_retention
        if args.dry_run:
            cutoff = now - settings.workspace_inactivity
            stale = stores.workspaces.list_inactive(cutoff, _DRY_RUN_LISTED + 1)
            shown = [
                {
                    "tenantId": w.tenant_id,
                    "workspaceId": w.workspace_id,
                    "lastActiveAt": w.last_active_at.isoformat(),
                }
                for w in stale[:_DRY_RUN_LISTED]
            ]
            print(
                json.dumps(
                    {
                        "dryRun": True,
                        "inactiveBefore": cutoff.isoformat(),
                        "workspaces": shown,
                        "more": len(stale) > _DRY_RUN_LISTED,
                        "expiredBefore": expired_before.isoformat(),
                        "expiredSessions": stores.sessions.prune_expired(expired_before, dry_run=True),
                    }
                )
            )
            return 0
        service = WorkspaceService(stores.workspaces, stores.content, _NoSessions(), SystemClock(), settings)
        report = service.purge()
        sessions = stores.sessions.prune_expired(expired_before)
        indexed = service.index_backlog()
        print(json.dumps({"purged": asdict(report), "expiredSessions": sessions, "indexed": indexed}))
        return 0
    finally:
        stores.close()


def _audit_verify(args: argparse.Namespace) -> int:
    from backend.operations import audit_verify

    return audit_verify(args, _operator_hooks())


def _aws_setup(args: argparse.Namespace) -> int:
    from backend.common.settings import Settings

    print(json.dumps({"created": _create_aws_resources(args, Settings())}))
    return 0


def _create_aws_resources(args: argparse.Namespace, settings: Settings) -> list[str]:
    from backend.storage.aws import create_resources

    return create_resources(_aws_settings(args, settings))


def _operator_hooks() -> OperatorHooks:
    from backend.operations import OperatorHooks

    return OperatorHooks(settings=_settings, open_stores=_open_stores, usage_error=UsageError)


class _NoSessions:
    """Maintenance never uploads, so it never asks whose sessions are whose."""

    def workspace_of(self, principal: Any, session_id: str) -> str | None:
        return None


# ---------------------------------------------------------------------------------------------- parser


def _parser() -> argparse.ArgumentParser:
    from backend.admin_commands import add_admin_commands
    from backend.apps import SERVICES
    from backend.deployment_commands import add_deployment_commands
    from backend.operations import add_operator_commands

    hooks = _operator_hooks()
    parser = argparse.ArgumentParser(prog="cowork-backend", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    def data_dir(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--data-dir",
            type=Path,
            default=None,
            help="keys, database and artifacts (default: the user data dir)",
        )

    def store(
        p: argparse.ArgumentParser,
        choices: Sequence[str] = ("memory", "local", "aws"),
        default: str = "local",
    ) -> None:
        p.add_argument("--store", choices=choices, default=default)
        data_dir(p)
        p.add_argument("--config-dir", type=Path, default=None, help="backend.toml and policy files")
        p.add_argument("--env-prefix", default=None, help="AWS: table name prefix (default dev)")
        p.add_argument("--region", default=None, help="AWS: region (default AWS_REGION or us-east-1)")
        p.add_argument("--bucket", default=None, help="AWS: artifact bucket (default {env}-cowork-artifacts)")

    serve = commands.add_parser("serve", help="run the services")
    store(serve)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=0, help="0 = any free port (see the ready line)")
    serve.add_argument(
        "--service", action="append", choices=SERVICES, help="serve only these (repeatable; default all)"
    )
    serve.add_argument("--peers-url", default=None, help="base URL of the services not served here")
    serve.add_argument(
        "--auth-public-key", type=Path, action="append", help="PEM public key that signs tokens (repeatable)"
    )
    serve.add_argument(
        "--policy-key", type=Path, default=None, help="PEM private key that signs policy bundles"
    )
    serve.add_argument(
        "--retired-policy-key", type=Path, action="append", help="PEM public key still published (repeatable)"
    )
    serve.add_argument("--worker-threads", type=int, default=8, help="threads for blocking work (default 8)")
    serve.add_argument(
        "--idle-timeout",
        type=_seconds,
        default=0.0,
        metavar="SECONDS",
        help="stop after this long without a client (a lease in the data dir), connection or request;"
        " 0 = never (default). The embedded backend is started with $COWORK_BACKEND_IDLE_TIMEOUT or 600",
    )
    serve.add_argument(
        "--no-websockets",
        action="store_true",
        help="serve no WebSockets (behind a proxy that does not pass them): runtimes poll for policy"
        " changes and stops instead of receiving them",
    )
    serve.add_argument(
        "--push-interval",
        type=_interval_seconds,
        default=1.0,
        metavar="SECONDS",
        help="how often a session's push connection checks for policy changes (default 1; stops: twice that)",
    )
    serve.add_argument("--log-file", type=Path, default=None, help="JSON log lines go here (default stderr)")
    serve.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    serve.set_defaults(run=_serve)

    token = commands.add_parser("token", help="mint a development bearer token")
    data_dir(token)
    token.add_argument("--tenant", required=True)
    token.add_argument("--user", required=True)
    token.add_argument("--ttl", type=int, default=3600, help="seconds (default 3600)")
    token.add_argument(
        "--key", type=Path, default=None, help="PEM private key (default: the data dir's auth key)"
    )
    token.add_argument(
        "--admin",
        action="store_true",
        help="with the 'admin' scope: the tenant's audit log (GET /audit/events, /audit/verify)",
    )
    token.set_defaults(run=_token)

    keygen = commands.add_parser("keygen", help="create the key pairs in the data directory")
    data_dir(keygen)
    keygen.set_defaults(run=_keygen)

    purge = commands.add_parser(
        "purge", help="remove inactive workspaces, orphaned content and sessions past their retention"
    )
    store(purge, ("local", "aws"))
    purge.add_argument(
        "--dry-run", action="store_true", help="list the workspaces a purge would remove; remove nothing"
    )
    purge.set_defaults(run=_purge)

    add_operator_commands(commands, store, hooks)
    add_admin_commands(commands, store, hooks)
    add_deployment_commands(commands, store, hooks, _create_aws_resources)

    verify = commands.add_parser("audit-verify", help="the same as 'audit verify'")
    store(verify, ("local", "aws"))
    verify.add_argument("--tenant", required=True)
    verify.set_defaults(run=_audit_verify)

    setup = commands.add_parser("aws-setup", help="create the DynamoDB tables and the S3 bucket")
    setup.add_argument("--env-prefix", default=None)
    setup.add_argument("--region", default=None)
    setup.add_argument("--bucket", default=None)
    setup.set_defaults(run=_aws_setup)
    return parser


def _interval_seconds(text: str) -> float:
    value = _seconds(text)
    if not 0.05 <= value <= 60:
        raise argparse.ArgumentTypeError("must be from 0.05 to 60 seconds")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError("must be a number of seconds ≥ 0")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    # Most of the embedded backend's start, which a user's first task waits for, is importing:
    # FastAPI, pydantic and the services' models, ~85,000 objects that live as long as the process.
    # The cyclic collector would walk them again and again while they load (~40 ms of a ~380 ms
    # start, measured), finding nothing to free: it is paused until the server is up (serve,
    # backend.server.resume_collection) or the command line is read (the other commands).
    collecting = gc.isenabled()
    gc.disable()
    try:
        from backend.common.errors import StorageError
        from backend.local_mode import default_data_dir

        args = _parser().parse_args(argv)
        if "data_dir" in args and args.data_dir is None:
            args.data_dir = default_data_dir()
        serving = args.run is _serve
        if collecting and not serving:
            gc.enable()
        try:
            result: int = _serve(args, collecting=collecting) if serving else args.run(args)
        except UsageError as exc:
            print(f"cowork-backend: {exc}", file=sys.stderr)
            return 2
        except StorageError as exc:
            print(f"cowork-backend: {exc.shape.message}", file=sys.stderr)
            return 2
        return result
    finally:
        if collecting:
            gc.enable()


if __name__ == "__main__":
    sys.exit(main())
