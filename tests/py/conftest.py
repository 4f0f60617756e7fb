import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REF_PYTHON = ROOT / ".venv-ref" / "bin" / "python"
sys.path.insert(0, str(Path(__file__).parent))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes a minute or more (deselect with -m 'not slow')")


# The files that take minutes under ASan, longest first (measured in a whole
# run). Run first, so that in parallel runs (TL_TEST_WORKERS) no worker is
# left with one of them while the others have finished.
LONG_FILES = (
    "test_rollup_points.py",
    "test_karet_run.py",
    "test_karet_run_kill.py",
    "test_karet_pages.py",
    "test_rollup_routing.py",
    "test_karet_expr.py",
    "test_s3_query_io.py",
    "test_preagg.py",
    "test_count_where.py",
    "test_schema_projection.py",
    "test_karet_serve_runs.py",
    "test_karet_ship.py",
)


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONG_FILES)))


@pytest.fixture
def lake_dir(tmp_path):
    return tmp_path / "lake"


@pytest.fixture
def lake(lake_dir):
    import tlc

    return tlc.Lake(str(lake_dir))


def static_link_flags():
    """What a program linking libtimelake_static.a needs besides it (the
    library's dependencies, as CMakeLists.txt lists them)."""
    libs = subprocess.run(["pkg-config", "--libs", "jansson", "libzstd", "zlib", "libcurl", "openssl", "liblz4",
                           "libbrotlienc", "libbrotlidec"], capture_output=True, text=True, check=True).stdout.split()
    return libs + ["-lsnappy", "-lpthread", "-lm"]


def run_reference(code, **kwargs):
    """Runs code under the reference implementation (timelake==0.7.0, its own
    virtualenv) and returns what it printed as JSON on its last line."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
    script = textwrap.dedent(code)
    proc = subprocess.run([str(REF_PYTHON), "-c", script], capture_output=True, text=True, env=env, **kwargs)
    if proc.returncode != 0:
        raise AssertionError(f"reference failed:\n{proc.stderr}")
    lines = proc.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else None


@pytest.fixture
def reference():
    if not REF_PYTHON.exists():
        pytest.skip("the reference virtualenv .venv-ref is missing (scripts/setup.sh --test)")
    return run_reference


def table_files(lake_dir):
    """Every file under the warehouse, as relative paths: to check that a failed call left nothing."""
    return sorted(str(p.relative_to(lake_dir)) for p in Path(lake_dir).rglob("*") if p.is_file())
