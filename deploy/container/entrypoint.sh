#!/bin/sh
# The backend image's entry point: `cowork-backend serve` for one service, configured from the
# environment (what ECS passes, secrets included), so the task definition holds no command line.
#
#   COWORK_SERVICE              session | policy | workspace | approval | audit | telemetry | tools
#                               (or the first argument); several as a comma-separated list
#   COWORK_STORE                aws (default) | local | memory
#   COWORK_ENV_PREFIX           the table prefix ({prefix}-sessions, …)
#   COWORK_BUCKET               the artifact bucket (default {prefix}-cowork-artifacts)
#   COWORK_PEERS_URL            the URL under which the other services are served (the load balancer)
#   COWORK_AUTH_PUBLIC_KEYS     PEM public keys that sign bearer tokens (one or more, concatenated)
#   COWORK_POLICY_SIGNING_KEY   PEM private key that signs policy bundles (Policy Service only)
#   COWORK_RETIRED_POLICY_KEYS  PEM public keys of former policy keys, still published
#   COWORK_PORT (8080), COWORK_CONFIG_DIR (/config), COWORK_DATA_DIR, COWORK_LOG_LEVEL (info)
#
# Other arguments go to `cowork-backend serve` as they are. `--` runs cowork-backend itself with the
# arguments after it (an operator command in the same image: `-- audit verify --tenant acme`).
set -eu

if [ "${1:-}" = "--" ]; then
    shift
    exec cowork-backend "$@"
fi

service=${COWORK_SERVICE:-}
case "${1:-}" in
    "" | -*) ;;
    *)
        service=$1
        shift
        ;;
esac
if [ -z "$service" ]; then
    echo "cowork-backend-entrypoint: set COWORK_SERVICE (session, policy, workspace, approval, audit, telemetry or tools)" >&2
    exit 2
fi

# Secrets arrive as environment variables; the server reads keys from files. They are written to a
# private directory that lives as long as this container.
keys=$(mktemp -d)
chmod 700 "$keys"

# split_pem NAME TEXT: one file per PEM block of TEXT, $keys/NAME-1.pem, -2, …; prints their paths.
# Lines outside the blocks (blank lines between keys) are dropped.
split_pem() {
    printf '%s\n' "$2" | awk -v prefix="$keys/$1" '
        /-----BEGIN / { n++; file = prefix "-" n ".pem"; inside = 1 }
        inside { print > file }
        /-----END / { inside = 0; close(file); print file }
    '
}

set -- serve \
    --store "${COWORK_STORE:-aws}" \
    --host 0.0.0.0 \
    --port "${COWORK_PORT:-8080}" \
    --config-dir "${COWORK_CONFIG_DIR:-/config}" \
    --data-dir "${COWORK_DATA_DIR:-/var/lib/cowork}" \
    --log-level "${COWORK_LOG_LEVEL:-info}" \
    "$@"
old_ifs=$IFS
IFS=,
for name in $service; do
    set -- "$@" --service "$name"
done
IFS=$old_ifs
[ -z "${COWORK_ENV_PREFIX:-}" ] || set -- "$@" --env-prefix "$COWORK_ENV_PREFIX"
[ -z "${COWORK_BUCKET:-}" ] || set -- "$@" --bucket "$COWORK_BUCKET"
[ -z "${COWORK_PEERS_URL:-}" ] || set -- "$@" --peers-url "$COWORK_PEERS_URL"
if [ -n "${COWORK_AUTH_PUBLIC_KEYS:-}" ]; then
    for file in $(split_pem auth "$COWORK_AUTH_PUBLIC_KEYS"); do
        set -- "$@" --auth-public-key "$file"
    done
fi
if [ -n "${COWORK_POLICY_SIGNING_KEY:-}" ]; then
    file=$(split_pem policy "$COWORK_POLICY_SIGNING_KEY")
    set -- "$@" --policy-key "$file"
fi
if [ -n "${COWORK_RETIRED_POLICY_KEYS:-}" ]; then
    for file in $(split_pem retired "$COWORK_RETIRED_POLICY_KEYS"); do
        set -- "$@" --retired-policy-key "$file"
    done
fi
unset COWORK_POLICY_SIGNING_KEY
exec cowork-backend "$@"
