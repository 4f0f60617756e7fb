# The Python package's extension (python/, cmake/python.cmake) needs Python's
# headers; without them the normal build skips it. apt_install does nothing
# when the package is already there.
apt_install python3-dev
