#!/usr/bin/env bash
# Runs every test: the C unit tests (ctest) and the end-to-end and interop
# tests (pytest), all against a build with AddressSanitizer and UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test

# The Release build `make` and `make demo` use, first: optimisation finds
# warnings (-Werror) that the sanitizer build does not. The library and its
# front ends only: the unit tests run from the sanitizer build (compiling and
# linking them again was half of this build: 80 of 152 s of compiler time),
# and its fuzz targets would be the sanitizer build's again (the fuzz
# project has its own fixed flags). `make` still builds them.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTL_FUZZ=OFF -DTL_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)"

BUILD=build-asan
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTL_SANITIZE=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
(cd "$BUILD" && ctest --output-on-failure -j"$(nproc)") || status=1

# The Python tests load the sanitized library through ctypes, so the ASan
# runtime must come first; leak checks stay in the C tests (CPython itself
# keeps allocations alive at exit).
export TL_LIB="$PWD/$BUILD/libtimelake.so"
export TL_BUILD="$PWD/$BUILD"
export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
export ASAN_OPTIONS=detect_leaks=0
# The tests run in as many processes as there are cores (pytest-xdist), each
# test file whole on one worker, so a module's servers and lakes are made
# once; conftest.py starts the files that take minutes first.
# TL_TEST_WORKERS=N sets the number; 1 runs them in this process, in order.
workers=${TL_TEST_WORKERS:-$(nproc)}
parallel=()
if [ "$workers" -gt 1 ]; then parallel=(-n "$workers" --dist loadfile); fi
.venv/bin/python -m pytest tests/py -q -p no:cacheprovider -rs ${parallel[@]+"${parallel[@]}"} --durations=25 "$@" || status=1
exit $status
