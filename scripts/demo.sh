#!/usr/bin/env bash
# The demo: a lake in ./demo-lake with one time-series table, appended to
# three times (the third a redelivered batch that commits nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
"$BUILD/quickstart" "${DEMO_LAKE:-demo-lake}"
echo
echo "Files of the table (Iceberg metadata, Avro manifests, Parquet data):"
find "${DEMO_LAKE:-demo-lake}/iot/readings" -type f | sort | sed 's/^/  /'
