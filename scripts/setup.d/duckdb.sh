# DuckDB for the query layer: libduckdb.so and its matching duckdb.h, pinned,
# from the npm registry (npm pack; nothing else is downloaded), into
# .deps/duckdb (ignored by git). A second run with both in place does nothing.
DUCKDB_DIR=.deps/duckdb
DUCKDB_LIB_PKG=@duckdb/node-bindings-linux-x64@1.4.4-r.4
DUCKDB_SRC_PKG=duckdb@1.4.4
DUCKDB_STAMP="$DUCKDB_DIR/.pinned"
if [ "$(cat "$DUCKDB_STAMP" 2>/dev/null)" != "$DUCKDB_LIB_PKG $DUCKDB_SRC_PKG" ] ||
  [ ! -f "$DUCKDB_DIR/lib/libduckdb.so" ] || [ ! -f "$DUCKDB_DIR/include/duckdb.h" ]; then
  command -v npm >/dev/null || apt_install nodejs npm
  echo "setup: fetching DuckDB ($DUCKDB_LIB_PKG, $DUCKDB_SRC_PKG) from npm"
  duckdb_tmp=$(mktemp -d)
  (cd "$duckdb_tmp" && npm pack --silent "$DUCKDB_LIB_PKG" "$DUCKDB_SRC_PKG" >/dev/null)
  mkdir -p "$DUCKDB_DIR/lib" "$DUCKDB_DIR/include"
  tar -xzf "$duckdb_tmp"/duckdb-node-bindings-linux-x64-*.tgz -C "$duckdb_tmp" package/libduckdb.so
  mv "$duckdb_tmp/package/libduckdb.so" "$DUCKDB_DIR/lib/libduckdb.so"
  tar -xzf "$duckdb_tmp"/duckdb-1.4.4.tgz -C "$duckdb_tmp" package/src/duckdb/src/include/duckdb.h
  mv "$duckdb_tmp/package/src/duckdb/src/include/duckdb.h" "$DUCKDB_DIR/include/duckdb.h"
  rm -rf "$duckdb_tmp"
  echo "$DUCKDB_LIB_PKG $DUCKDB_SRC_PKG" > "$DUCKDB_STAMP"
fi
