# Fuzzing: clang with libFuzzer (Debian's clang ships it) for the fuzz targets
# under fuzz/, which the test suite runs for a few seconds each. Only wanted
# with the test tools; apt_install does nothing when it is installed already.
if [ "$SETUP_TEST" = 1 ]; then
  apt_install clang
fi
