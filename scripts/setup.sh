#!/usr/bin/env bash
# Installs everything the build, the demo and the tests need, and nothing twice:
# a second run with everything in place only checks and returns.
#   scripts/setup.sh          system packages + build dependencies
#   scripts/setup.sh --test   also the test virtualenvs (.venv, .venv-ref, .venv-iceberg)
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(build-essential cmake ninja-build pkg-config git
  libjansson-dev libcurl4-openssl-dev libssl-dev libzstd-dev libsnappy-dev zlib1g-dev
  liblz4-dev libbrotli-dev
  libmicrohttpd-dev libsqlite3-dev clang-format python3-venv)

apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "setup: installing ${missing[*]}"
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

apt_install "${APT_PACKAGES[@]}"

# A virtualenv is rebuilt only when its requirements file changed.
make_venv() {
  local dir=$1 req=$2 stamp="$1/.requirements.sha"
  local want; want=$(sha256sum "$req" | cut -d' ' -f1)
  if [ -x "$dir/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then return; fi
  echo "setup: creating $dir from $req"
  python3 -m venv "$dir"
  "$dir/bin/pip" install -q --disable-pip-version-check -r "$req"
  echo "$want" > "$stamp"
}

# Parts that need more (DuckDB from npm, emulators for the object-store tests,
# ...) install it in their own scripts/setup.d/NAME.sh, sourced here in order.
# Each sees $SETUP_TEST=1 when the test tools are wanted, and must be a no-op
# when its things are already in place.
SETUP_TEST=0; [ "${1:-}" = "--test" ] && SETUP_TEST=1
for part in scripts/setup.d/*.sh; do
  [ -e "$part" ] || continue
  # shellcheck source=/dev/null
  . "$part"
done

if [ "${1:-}" = "--test" ]; then
  make_venv .venv tests/requirements.txt
  make_venv .venv-ref tests/requirements-ref.txt
  make_venv .venv-iceberg tests/requirements-iceberg.txt
fi
