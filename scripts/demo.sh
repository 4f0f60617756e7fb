#!/usr/bin/env bash
# The demo, in two parts:
#  1. Timelake: a lake in ./demo-lake with one time-series table, appended to
#     three times (the third a redelivered batch that commits nothing).
#  2. Karet: `karet serve --demo` on a local lake in ./demo-karet, with a sample
#     pipeline whose first run starts by itself; it serves until Ctrl+C.
#     DEMO_SERVE=0 skips it; DEMO_PORT chooses the port (default 8080).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
LAKE=${DEMO_LAKE:-demo-lake}

"$BUILD/quickstart" "$LAKE"
echo
echo "Files of the table (Iceberg metadata, Avro manifests, Parquet data):"
find "$LAKE/iot/readings" -type f | sort | sed 's/^/  /'

[ "${DEMO_SERVE:-1}" = 1 ] || exit 0

# A known local account and token, so that the README's commands work when
# pasted; the service listens on the loopback interface only.
export KARET_ADMIN_USERNAME=demo
KARET_ADMIN_PASSWORD_HASH=$(printf 'demo-password\n' | "$BUILD/karet" hash-password)
export KARET_ADMIN_PASSWORD_HASH
export KARET_WORKER_TOKEN=${KARET_WORKER_TOKEN:-demo-token}
echo
echo "Karet: sign in as \"demo\" with the password \"demo-password\"; the API token is"
echo "\"$KARET_WORKER_TOKEN\". The demo pipeline's first run starts 5 s after the start."
echo "Ctrl+C stops the service."
echo
exec "$BUILD/karet" serve --demo --data-dir demo-karet/data --lake demo-karet/lake \
  --listen "127.0.0.1:${DEMO_PORT:-8080}"
