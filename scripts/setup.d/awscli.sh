# The AWS CLI (awscli from PyPI) for the tests that run the seed's log-shipping
# script as written (tests/py/test_karet_ship_seed.py, bench/ship): it calls
# `aws s3 cp`. Its own virtualenv in .deps/awscli (ignored by git), because
# awscli pins a botocore other than the one boto3 in .venv needs.
AWSCLI_VERSION=1.46.3
AWSCLI_DIR=.deps/awscli
if [ "$SETUP_TEST" = 1 ] &&
  [ "$(cat "$AWSCLI_DIR/.pinned" 2>/dev/null)" != "$AWSCLI_VERSION" ]; then
  echo "setup: installing awscli==$AWSCLI_VERSION into $AWSCLI_DIR"
  rm -rf "$AWSCLI_DIR"
  python3 -m venv "$AWSCLI_DIR"
  "$AWSCLI_DIR/bin/pip" install -q --disable-pip-version-check "awscli==$AWSCLI_VERSION"
  echo "$AWSCLI_VERSION" >"$AWSCLI_DIR/.pinned"
fi
