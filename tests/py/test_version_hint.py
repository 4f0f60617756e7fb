"""metadata/version-hint.text names the newest version after every commit
(create, append, maintenance) on every store, as the reference keeps it:
DuckDB's iceberg_scan of a table folder trusts the hint without looking for
newer versions, so a stale hint makes it read old data silently. Checked with
DuckDB 1.4.4 and its iceberg extension from PyPI (.venv-iceberg), locally and
on moto's S3; on Azurite and fake-gcs-server the hint is read back through
each server's own API."""

import json
import os
import subprocess
import textwrap

import pytest

import tlc
from conftest import ROOT
from store_objects import read
from store_servers import server_fixture
from writer import SCHEMA, batch

ICEBERG_PY = ROOT / ".venv-iceberg" / "bin" / "python"

s3_server = pytest.fixture(scope="module")(server_fixture("s3"))
azure_server = pytest.fixture(scope="module")(server_fixture("azure"))
gcs_server = pytest.fixture(scope="module")(server_fixture("gcs"))


def duckdb_iceberg_count(location, s3=None):
    """count(*) of DuckDB's iceberg_scan over the table folder."""
    if not ICEBERG_PY.exists():
        pytest.skip(".venv-iceberg is missing (scripts/setup.sh --test)")
    settings = []
    if s3 is not None:
        host = s3.endpoint.split("://", 1)[1]
        settings = [f"SET s3_endpoint='{host}'", "SET s3_url_style='path'", "SET s3_use_ssl=false",
                    "SET s3_access_key_id='testing'", "SET s3_secret_access_key='testing'",
                    "SET s3_region='us-east-1'"]
    script = textwrap.dedent(f"""
        import json, pathlib, duckdb, duckdb_ext
        ext = pathlib.Path(list(duckdb_ext.__path__)[0]) / "extensions" / "v1.4.4" / "linux_amd64"
        con = duckdb.connect()
        for name in ("avro", "iceberg", "httpfs"):
            con.execute(f"LOAD '{{ext / (name + '.duckdb_extension')}}'")
        for s in {settings!r}:
            con.execute(s)
        print(json.dumps(con.execute("SELECT count(*) FROM iceberg_scan('{location}')").fetchone()[0]))
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
    p = subprocess.run([str(ICEBERG_PY), "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.splitlines()[-1])


def steps(t):
    """Appends and maintenance commits (compaction, expiry), one after another."""
    for k in range(3):
        yield lambda k=k: t.append(batch("w", k), maintain=False)
    yield lambda: t.maintain()
    yield lambda: t.append(batch("w", 3), maintain=False)


def test_duckdb_reads_the_newest_version_locally(lake_dir):
    lake = tlc.Lake(str(lake_dir))
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["writer", "seq"])
    hint = lake_dir / "default/t/metadata/version-hint.text"
    for step in steps(t):
        step()
        assert hint.read_text() == str(t.version)
        assert duckdb_iceberg_count(lake_dir / "default/t") == t.info()["rows"]


def test_duckdb_reads_the_newest_version_on_s3(s3_server):
    url = s3_server.url()
    t = tlc.Lake(url, s3_server.options).create_table("t", SCHEMA, time_column="time",
                                                      series_key=["writer", "seq"])
    for step in steps(t):
        step()
        assert duckdb_iceberg_count(f"{url}/default/t", s3=s3_server) == t.info()["rows"]


@pytest.mark.parametrize("kind", ["s3", "azure", "gcs"])
def test_hint_is_current_on_every_store(request, kind):
    backend = request.getfixturevalue(f"{kind}_server")
    url = backend.url()
    t = tlc.Lake(url, backend.options).create_table("t", SCHEMA, time_column="time",
                                                    series_key=["writer", "seq"])
    name = url.split("/", 3)[3] + "/default/t/metadata/version-hint.text"
    assert read(backend, name) == b"1"
    for step in steps(t):
        step()
        assert read(backend, name).decode() == str(t.version)
