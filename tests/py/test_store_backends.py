"""Every object-store backend against a real local server: moto (S3), Azurite
(Azure Blob) and fake-gcs-server (GCS). The store contract runs as a C program
(tests/unit/test_store_remote.c); the table operations run through the public
API exactly as on local disk."""

import datetime as dt
import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest

import tlc
from store_servers import server_fixture

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TL_BUILD", ROOT / "build-asan"))
UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])

s3_server = pytest.fixture(scope="module")(server_fixture("s3"))
azure_server = pytest.fixture(scope="module")(server_fixture("azure"))
gcs_server = pytest.fixture(scope="module")(server_fixture("gcs"))


@pytest.fixture(params=["s3", "azure", "gcs"])
def backend(request):
    return request.getfixturevalue(f"{request.param}_server")


def readings(n, start=T0, step=dt.timedelta(hours=7)):
    return pa.table(
        {
            "time": [start + i * step for i in range(n)],
            "device_id": [("pump-7", "pump-8")[i % 2] for i in range(n)],
            "temp": [float(i) for i in range(n)],
        },
        schema=SCHEMA,
    )


def test_store_contract(backend):
    exe = BUILD / "test_store_remote"
    if not exe.exists():
        pytest.skip(f"{exe} is not built")
    env = dict(os.environ, TL_TEST_STORE_URL=backend.url(),
               TL_TEST_STORE_OPTIONS=";".join(f"{k}={v}" for k, v in backend.options.items()))
    env.pop("LD_PRELOAD", None)  # a separate executable, linked with the sanitizers itself
    proc = subprocess.run([str(exe)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "7 passed, 0 failed" in proc.stdout


def test_tables_end_to_end(backend):
    url = backend.url()
    lake = tlc.Lake(url, backend.options)
    assert lake.location == url
    t = lake.create_table("iot.readings", SCHEMA, time_column="time", series_key=["device_id"])
    with pytest.raises(FileExistsError):
        lake.create_table("iot.readings", SCHEMA, time_column="time", series_key=["device_id"])
    res = t.append(readings(10), batch_id="b-1")
    assert (res["rows"], res["version"], res["duplicate"]) == (10, 2, False)
    assert res["files"] == 3  # 10 rows 7 h apart span 3 days
    dup = t.append(readings(10), batch_id="b-1")
    assert dup["duplicate"] and dup["version"] == 2
    t.append(readings(4, start=T0 + dt.timedelta(days=5)), batch_id="b-2")

    # A second lake handle (its own cache) sees everything.
    other = tlc.Lake(url, backend.options)
    assert other.tables() == ["iot.readings"]
    info = other.table("iot.readings").info()
    assert (info["version"], info["rows"], info["snapshots"]) == (3, 14, 2)
    assert info["location"] == f"{url}/iot/readings"

    other.drop_table("iot.readings")
    assert other.tables() == []
    with pytest.raises(KeyError):
        tlc.Lake(url, backend.options).table("iot.readings")


def make_m(lake):
    t = lake.create_table("m", SCHEMA, time_column="time", series_key=["device_id"])
    for i in range(3):
        t.append(readings(6, start=T0 + dt.timedelta(minutes=i)), batch_id=f"m-{i}")
    return t


def test_maintain(backend):
    url = backend.url()
    lake = tlc.Lake(url, backend.options)
    t = make_m(lake)
    before = t.info()
    report = t.maintain()
    assert report["files_rewritten"] > 0
    after = tlc.Lake(url, backend.options).table("m").info()
    assert after["rows"] == before["rows"] == 18 and after["files"] < before["files"]


def test_sql_and_latest(backend):
    lake = tlc.Lake(backend.url(), backend.options)
    make_m(lake)
    latest = {r["device_id"]: r["temp"] for r in lake.latest("m").to_pylist()}
    assert latest == {"pump-7": 4.0, "pump-8": 5.0}
    assert lake.sql("SELECT count(*) AS n, max(temp) AS hi FROM m").to_pylist() == [{"n": 18, "hi": 5.0}]


def test_bad_input_leaves_the_table_alone(backend):
    lake = tlc.Lake(backend.url(), backend.options)
    t = lake.create_table("iot.bad", SCHEMA, time_column="time", series_key=["device_id"])
    bad = pa.table({"time": [T0], "device_id": ["x"], "temp": [1.0], "nope": [1]})
    with pytest.raises(ValueError, match="nope"):
        t.append(bad)
    assert lake.table("iot.bad").version == 1


@pytest.mark.parametrize("url,options,message", [
    ("s3://b/x", {"aws_bogus": "1"}, 'unknown S3 storage option "aws_bogus"'),
    ("gs://b/x", {"aws_region": "us-east-1"}, 'unknown GCS storage option "aws_region"'),
    ("az://c/x", {"google_bucket": "b"}, 'unknown Azure storage option "google_bucket"'),
    ("s3://b/x", {"aws_endpoint": "http://127.0.0.1:9"}, "aws_allow_http"),
    ("s3://b/x", {"aws_allow_http": "maybe"}, "not a boolean"),
    ("s3://b/x", {"timeout": "soon"}, "not a duration"),
    ("s3:///x", {}, "names no bucket"),
    ("az://c/x", {"azure_storage_account_key": "a2V5"}, "no Azure account"),
    ("gs://b/x", {}, "no GCS credentials"),
    ("gs://b/x", {"google_service_account_key": "{}"}, "private_key"),
    ("ftp://b/x", {}, "unsupported warehouse URL"),
])
def test_bad_options_are_invalid(url, options, message, monkeypatch):
    for var in ("GOOGLE_APPLICATION_CREDENTIALS", "STORAGE_EMULATOR_HOST", "AWS_ENDPOINT_URL",
                "AWS_ENDPOINT_URL_S3", "AWS_ALLOW_HTTP"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ValueError, match=message):
        tlc.Lake(url, options)


def test_environment_supplies_s3_settings(s3_server, monkeypatch):
    for k, v in {"AWS_ENDPOINT_URL_S3": s3_server.endpoint, "AWS_ACCESS_KEY_ID": "testing",
                 "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # _S3 wins over the general one
    lake = tlc.Lake(s3_server.url(), {"aws_allow_http": "true"})
    lake.create_table("envtest", SCHEMA)
    assert lake.tables() == ["default.envtest"]


def test_wrong_credentials_fail_clearly(s3_server):
    # moto checks nothing by default; an unreachable endpoint is the failure we can provoke.
    opts = s3_server.option_list(aws_endpoint="http://127.0.0.1:9", max_retries="2",
                                 retry_backoff="1ms", connect_timeout="200ms")
    lake = tlc.Lake(s3_server.url(), opts)
    with pytest.raises(RuntimeError, match="127.0.0.1:9"):
        lake.tables()


def test_gcs_service_account_key_gets_an_oauth_token(gcs_server, tmp_path):
    """The key's RS256 JWT is verified by a local token endpoint (standing in
    for oauth2.googleapis.com), and the token it hands out is what reaches
    the storage API."""
    import base64
    import http.server
    import json
    import threading
    import urllib.parse

    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    from fault_proxy import FaultProxy

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    grants = []

    def b64d(s):
        return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))

    class TokenHandler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            form = urllib.parse.parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
            head, claims, sig = form["assertion"][0].split(".")
            key.public_key().verify(b64d(sig), f"{head}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256())
            grants.append((form["grant_type"][0], json.loads(b64d(head)), json.loads(b64d(claims))))
            body = json.dumps({"access_token": "granted-token-1", "expires_in": 3600, "token_type": "Bearer"}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), TokenHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    token_uri = f"http://127.0.0.1:{server.server_port}/token"
    key_json = json.dumps({"type": "service_account", "client_email": "lake@example.iam.gserviceaccount.com",
                           "private_key": pem, "token_uri": token_uri})
    key_file = tmp_path / "key.json"
    key_file.write_text(key_json)
    try:
        with FaultProxy(gcs_server.endpoint) as proxy:
            for opts in ({"google_service_account_key": key_json}, {"google_service_account": str(key_file)}):
                lake = tlc.Lake(gcs_server.url(), {"google_endpoint": proxy.endpoint, **opts})
                lake.create_table("auth", SCHEMA)
                assert lake.tables() == ["default.auth"]
    finally:
        server.shutdown()
    assert len(grants) == 2  # one token per lake, reused for every request
    grant_type, head, claims = grants[0]
    assert grant_type == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert head == {"alg": "RS256", "typ": "JWT"}
    assert claims["iss"] == "lake@example.iam.gserviceaccount.com" and claims["aud"] == token_uri
    assert claims["exp"] - claims["iat"] == 3600 and "devstorage" in claims["scope"]
    assert proxy.authorizations and set(proxy.authorizations) == {"Bearer granted-token-1"}
