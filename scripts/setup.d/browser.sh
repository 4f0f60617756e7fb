# A real browser for the tests of Karet's web pages (issue 17), only when test
# tools are wanted: Debian's Chromium and its WebDriver, driven from pytest
# through selenium (tests/requirements.txt). The tests start it headless with
# flags that keep it from calling any Google host.
if [ "$SETUP_TEST" = 1 ]; then
  apt_install chromium chromium-driver fonts-dejavu-core
fi
