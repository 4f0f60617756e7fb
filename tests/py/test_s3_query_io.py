"""Query-time I/O against object stores (moto S3, Azurite, fake-gcs-server):
large data files read by ranges (the footer and only the column chunks the
query needs, written out as a smaller Parquet file for DuckDB), small ones
whole, all in one parallel batch; and the disk read cache shared by
processes and bounded in size.

Oracle: DuckDB over the appended batches themselves (pyarrow), deduplicated
as the table is (the latest write of each (host, time) wins), running the
same SQL text. Every query runs in a fresh lake, so every fetch is cold."""

import datetime as dt
import hashlib
import io
import json
import math
import struct
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import duckdb
import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tlc
from fault_proxy import FaultProxy, WaveProxy, round_trips
from store_servers import server_fixture

SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string()), ("region", pa.string())] +
                   [(f"m{i}", pa.float64()) for i in range(6)])
LARGE_ROWS = 60_000  # about 3 MB a file: above the 1 MiB ranged-read threshold
QUERY_PROC = str(Path(__file__).with_name("query_proc.py"))
HOLD = 0.25


def batch(day, n, seed, start=0):
    rng = np.random.default_rng(seed)
    t0 = np.datetime64("2026-01-01T00:00:00", "us") + np.timedelta64(day, "D")
    step = 86_400_000_000 // LARGE_ROWS
    idx = np.arange(start, start + n)
    cols = {"time": pa.array(t0 + (idx * step).astype("timedelta64[us]"), pa.timestamp("us", tz="UTC")),
            "host": [f"h{i % 50:02d}" for i in idx], "region": [("eu", "us", "ap")[i % 3] for i in idx]}
    for i in range(6):
        cols[f"m{i}"] = rng.random(n)
    return pa.table(cols, schema=SCHEMA)


# Two large files (days 0 and 1), a small one (day 2), and a small rewrite of
# the first rows of day 1 (overlapping: deduplicated on read).
BATCHES = [batch(0, LARGE_ROWS, 1), batch(1, LARGE_ROWS, 2), batch(2, 100, 3), batch(1, 200, 4)]

QUERIES = [
    "SELECT count(*) FROM m.cpu",
    "SELECT count(*) FROM m.cpu WHERE time >= '2026-01-10'",
    "SELECT host, avg(m1), max(m2) FROM m.cpu WHERE time >= '2026-01-02' AND time < '2026-01-03' GROUP BY host",
    "SELECT * FROM m.cpu WHERE host = 'h07' AND time < '2026-01-01 06:00:00+00'",
    "SELECT time, m3 FROM m.cpu WHERE host IN ('h01', 'h02') ORDER BY time DESC LIMIT 50",
    "SELECT region, count(*), sum(m0) FROM m.cpu WHERE region = 'eu' GROUP BY region",
    "SELECT host FROM m.cpu WHERE time BETWEEN '2026-01-01 12:00:00+00' AND '2026-01-02 12:00:00+00' "
    "ORDER BY m4 DESC, host, time LIMIT 20",
    "SELECT host, time, m5 - lag(m5) OVER (PARTITION BY host ORDER BY time) AS d FROM m.cpu "
    "WHERE host = 'h03' AND time < '2026-01-02 03:00:00+00'",
    "SELECT a.host, count(*), sum(b.m2) FROM m.cpu a JOIN m.cpu b ON a.host = b.host AND a.time = b.time "
    "WHERE a.time < '2026-01-01 01:00:00+00' GROUP BY a.host",
    "WITH x AS (SELECT host, m2 FROM m.cpu WHERE time >= '2026-01-02') SELECT host, avg(m2) FROM x GROUP BY host",
    "SELECT c FROM (SELECT m1 AS c FROM m.cpu WHERE host = 'h11') ORDER BY c LIMIT 5",
    "SELECT time_bucket(INTERVAL '1 hour', time) AS b, avg(m0) FROM m.cpu "
    "WHERE time >= '2026-01-01 20:00:00+00' AND time < '2026-01-02 04:00:00+00' GROUP BY b",
    "SELECT max(time), min(time) FROM m.cpu WHERE host >= 'h40'",
    "SELECT count(DISTINCT host) FROM m.cpu WHERE m0 > 0.99",
    "SELECT \"M1\" FROM m.cpu WHERE host = 'h05' ORDER BY time LIMIT 3",
    "SELECT COLUMNS('m[0-2]') FROM m.cpu WHERE host = 'h09' ORDER BY time LIMIT 5",
    "SELECT host, arg_max(m3, time) FROM m.cpu GROUP BY host",
    "SELECT host, time, m0 FROM m.cpu WHERE time >= '2026-01-02 00:00:00+00' AND time < '2026-01-02 00:05:00+00'",
    "SELECT region FROM m.cpu WHERE time > '2026-01-02 23:00:00+00' AND host = 'h48'",
    "SELECT count(*) FROM m.cpu WHERE host = 'nope'",
]


def dedup_oracle(rows, newest):
    """DuckDB with m.cpu: rows, one per (host, time), the greatest `newest`
    winning, without that column."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.register("all_rows", rows)
    con.execute("CREATE SCHEMA m")
    con.execute(f"CREATE VIEW m.cpu AS SELECT * EXCLUDE ({newest}, __rn) FROM (SELECT *, row_number() OVER "
                f"(PARTITION BY host, time ORDER BY {newest} DESC) AS __rn FROM all_rows) WHERE __rn = 1")
    return con


def oracle():
    return dedup_oracle(pa.concat_tables([b.append_column("__b", pa.array([k] * len(b), pa.int32()))
                                          for k, b in enumerate(BATCHES)]), "__b")


def normal(table):
    """Rows as sorted tuples, without the ingest time, floats rounded (sums
    in another order differ in the last bits)."""
    if "_ingest_ts" in table.column_names:
        table = table.drop_columns(["_ingest_ts"])
    def norm(v):
        if isinstance(v, float):
            return round(v, 9) if math.isfinite(v) else v
        if isinstance(v, dt.datetime):
            return v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return v
    return sorted((tuple(norm(v) for v in r.values()) for r in table.to_pylist()), key=repr)


def make_lake(backend, **extra):
    url = backend.url()
    t = tlc.Lake(url, backend.option_list(**extra)).create_table("m.cpu", SCHEMA, time_column="time",
                                                                  series_key=["host"])
    for b in BATCHES:
        t.append(b, maintain=False)
    return url


s3 = pytest.fixture(scope="module")(server_fixture("s3"))
azure = pytest.fixture(scope="module")(server_fixture("azure"))
gcs = pytest.fixture(scope="module")(server_fixture("gcs"))


@pytest.fixture(scope="module")
def s3_lake(s3):
    return make_lake(s3)


def check_queries(url, options, queries):
    con = oracle()
    total = {"bytes": 0, "read": 0}
    for q in queries:
        stats = {}
        got = tlc.Lake(url, options).sql(q, stats=stats)
        want = con.sql(q).arrow()
        want = want.read_all() if hasattr(want, "read_all") else want
        assert normal(got) == normal(want), q
        total["bytes"] += stats["bytes_read"]
    return total


def test_results_equal_whole_file_results_s3(s3, s3_lake):
    check_queries(s3_lake, s3.options, QUERIES)


@pytest.mark.parametrize("kind", ["azure", "gcs"])
def test_results_equal_whole_file_results_azure_gcs(kind, request):
    backend = request.getfixturevalue(kind)
    url = make_lake(backend)
    check_queries(url, backend.options, QUERIES[:12])


def test_few_columns_read_few_bytes(s3, s3_lake):
    stats = {}
    tlc.Lake(s3_lake, s3.options).sql("SELECT avg(m1) FROM m.cpu WHERE time < '2026-01-01 23:00:00+00'", stats=stats)
    assert stats["files_read"] == 1 and stats["row_groups_read"] == 1
    # time, host (series key), _ingest_ts and m1 of about ten columns, plus the footer.
    assert 0 < stats["bytes_read"] < 0.4 * file_bytes(s3, s3_lake, day=0), stats
    stats = {}
    tlc.Lake(s3_lake, s3.options).sql("SELECT * FROM m.cpu WHERE time < '2026-01-01 23:00:00+00'", stats=stats)
    # Every byte of the file, but the footer the head carries (read from the head).
    assert stats["bytes_read"] == file_bytes(s3, s3_lake, day=0) - head_footer_len(s3, s3_lake, day=0), stats


def head_footer_len(s3, url, day):
    raw = bucket_client(s3).get_object(Bucket=s3.bucket, Key=url.split("/", 3)[3] + "/" + HEAD_KEY)["Body"].read()
    return sum(len(d) for u, d in head_objects(raw)[1]
               if u.endswith("#footer") and (f"2026-01-0{day + 1}" in u or f"time_day={20454 + day}" in u))


def file_bytes(s3, url, day):
    import boto3
    c = boto3.client("s3", endpoint_url=s3.endpoint, aws_access_key_id="testing",
                     aws_secret_access_key="testing", region_name="us-east-1")
    prefix = url.split("/", 3)[3] + "/m/cpu/data/"
    objs = [o for o in c.list_objects_v2(Bucket=s3.bucket, Prefix=prefix)["Contents"]
            if f"2026-01-0{day + 1}" in o["Key"] or f"time_day={20454 + day}" in o["Key"]]
    return max(o["Size"] for o in objs)


class RangeLog:
    """Records each GET's Range header."""

    def __init__(self, upstream):
        super().__init__(upstream)
        self.ranges = []  # (path, range header or None) of each GET

    async def _read_request(self, reader):
        method, path, headers, body = await super()._read_request(reader)
        if method == "GET":
            rng = next((h.split(":", 1)[1].strip() for h in headers if h.lower().startswith("range:")), None)
            with self._lock:
                self.ranges.append((path.split("?")[0], rng))
        return method, path, headers, body


class RangeProxy(RangeLog, FaultProxy):
    """Holds every request for HOLD seconds (so parallel requests overlap in
    the log and sequential ones cannot): for the one count of round trips
    whose waves cannot be named by what they read (wave_round_trips)."""

    def _choose(self):
        return "delay", HOLD


class WaveRangeProxy(RangeLog, WaveProxy):
    pass


def is_data(method, path):
    return "/data/" in path


def is_other(method, path):
    return "/data/" not in path


def request_counts(backend, run):
    """How many requests for data files, and others, run(options) makes
    through a proxy that only passes them on (it opens the lake anew: cold)."""
    with FaultProxy(backend.endpoint) as proxy:
        run(backend.option_list(aws_endpoint=proxy.endpoint))
        proxy.wait_idle()
        reqs = proxy.requests_since(0)
    data = sum(is_data(r[2], r[3]) for r in reqs)
    return data, len(reqs) - data


def wave_round_trips(backend, run, data_only=False):
    """Runs run(options) cold twice: once to count its requests, then with the
    others (the head, the listing) held until all of them have arrived and the
    data requests likewise (fault_proxy.WaveProxy). A wave that completes was
    in flight at once, however the client's threads are scheduled; one sent
    a request at a time cannot complete (`incomplete`) and its requests count
    as sequential round trips. Returns run's result, the round trips of the
    requests (of the data requests only with data_only) and the proxy."""
    data, other = request_counts(backend, run)
    waves = ([] if data_only or not other else [[("other", is_other, other)]]) + [[("data", is_data, data)]]
    with WaveRangeProxy(backend.endpoint) as proxy:
        proxy.expect(*waves)
        got = run(backend.option_list(aws_endpoint=proxy.endpoint))
        proxy.wait_idle()
        reqs = [r for r in proxy.requests_since(0) if not data_only or is_data(r[2], r[3])]
    assert proxy.incomplete == [], proxy.incomplete
    return got, round_trips(reqs), proxy


def data_requests(proxy, since):
    return [r for r in proxy.requests_since(since) if "/data/" in r[3]]


def test_cold_query_fetches_data_in_one_batch_by_ranges(s3, s3_lake):
    # Both large files and the small ones: the small files whole, and of each
    # large file its tail (footer) with the column chunks the manifest's
    # column sizes place, all at once; the footer confirms the guess.
    stats = {}

    def grouped(opts):
        stats.clear()
        tlc.Lake(s3_lake, opts).sql("SELECT host, avg(m2) FROM m.cpu GROUP BY host", stats=stats)

    _, trips, proxy = wave_round_trips(s3, grouped, data_only=True)
    assert trips == 1, sorted(data_requests(proxy, 0))
    print(f"\ncold grouped query: {round_trips(proxy.requests_since(0))} round trips in all, "
          f"{trips} for data; {stats['bytes_read']} bytes read")
    ranges = [(p, r) for p, r in proxy.ranges if "/data/" in p]
    large = [p for p, r in ranges if r is not None]
    assert len(set(large)) == 2, ranges  # the two large files, by ranges only
    assert all(r is None for p, r in ranges if p not in large)  # small files whole
    assert sum(1 for p, r in ranges if r is not None) <= 2 * 3  # tail + coalesced chunk ranges
    assert stats["bytes_read"] < 0.5 * sum(file_bytes(s3, s3_lake, day) for day in (0, 1))
    # Only the small file of day 2: one request, one round trip.
    with FaultProxy(s3.endpoint) as proxy:
        tlc.Lake(s3_lake, s3.option_list(aws_endpoint=proxy.endpoint)).sql(
            "SELECT count(*) FROM m.cpu WHERE time >= '2026-01-03'")
        proxy.wait_idle()
        data = data_requests(proxy, 0)
        assert len(data) == 1 and round_trips(data) == 1, data


def run_query_proc(url, options, query):
    return subprocess.Popen([sys.executable, QUERY_PROC, url, json.dumps(options), query],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result_of(proc):
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return json.loads(out)


Q_SHARED = "SELECT host, min(m3), max(m3), count(*) FROM m.cpu WHERE time >= '2026-01-01 12:00:00+00' GROUP BY host"


def test_cache_dir_shared_by_processes(s3, s3_lake, tmp_path):
    cache = tmp_path / "cache"
    with FaultProxy(s3.endpoint) as proxy:
        opts = s3.option_list(aws_endpoint=proxy.endpoint, cache_dir=str(cache))
        # Two processes at once on an empty directory: same answers.
        a, b = run_query_proc(s3_lake, opts, Q_SHARED), run_query_proc(s3_lake, opts, Q_SHARED)
        ra, rb = result_of(a), result_of(b)
        assert ra["rows"] == rb["rows"] and len(ra["rows"]) == 50
        assert not any(p.name.startswith(".tmp-") for p in cache.iterdir())
        # A third process reads every data byte from the directory.
        mark = proxy.mark()
        rc = result_of(run_query_proc(s3_lake, opts, Q_SHARED))
        proxy.wait_idle()
        assert rc["rows"] == ra["rows"]
        assert data_requests(proxy, mark) == []
    con = oracle()
    want = con.sql(Q_SHARED).arrow()
    want = want.read_all() if hasattr(want, "read_all") else want
    assert len(want) == 50


def dir_bytes(d):
    return sum(p.stat().st_size for p in d.iterdir() if p.is_file())


def test_cache_dir_is_bounded(s3, s3_lake, tmp_path):
    limit = 4 << 20
    slack = limit // 8 + limit // 4  # looked at after every eighth written; objects up to a quarter
    unbounded = tmp_path / "unbounded"
    for q in QUERIES[:10]:
        tlc.Lake(s3_lake, s3.option_list(cache_dir=str(unbounded))).sql(q)
    assert dir_bytes(unbounded) > limit + slack  # these queries would overflow the limit
    cache = tmp_path / "cache"
    opts = s3.option_list(cache_dir=str(cache), cache_dir_max="4MiB")
    con = oracle()
    for q in QUERIES[:10]:
        got = tlc.Lake(s3_lake, opts).sql(q)
        want = con.sql(q).arrow()
        want = want.read_all() if hasattr(want, "read_all") else want
        assert normal(got) == normal(want), q
        assert dir_bytes(cache) <= limit + slack
    assert dir_bytes(cache) > limit // 2
    # Two processes sharing the full directory (evicting under each other) still answer right.
    procs = [run_query_proc(s3_lake, opts, q) for q in (Q_SHARED, QUERIES[2], Q_SHARED)]
    results = [result_of(p) for p in procs]
    assert results[0]["rows"] == results[2]["rows"]
    assert dir_bytes(cache) <= limit + slack


def test_cache_options_checked(s3, s3_lake):
    with pytest.raises(ValueError, match="cache_dir_max"):
        tlc.Lake(s3_lake, s3.option_list(cache_dir_max="lots"))
    with pytest.raises(ValueError, match="cache_dir_maxx"):
        tlc.Lake(s3_lake, s3.option_list(cache_dir_maxx="1"))


def test_reference_written_files_read_by_ranges(s3, reference, tmp_path):
    """Files another writer laid out (the reference's, through its Parquet
    library): the manifest's guess of where chunks are may be wrong; the
    footer decides, and the results are the same."""
    url = s3.url()
    paths = []
    for k, b in enumerate(BATCHES):
        paths.append(str(tmp_path / f"b{k}.parquet"))
        import pyarrow.parquet as pq
        pq.write_table(b, paths[-1])
    reference(f"""
        import json, timelake, pyarrow.parquet as pq
        lake = timelake.Lake({url!r}, storage_options={s3.options!r})
        first = pq.read_table({paths[0]!r})
        t = lake.create_table("m.cpu", first.schema, time_column="time", series_key=["host"])
        for p in {paths!r}:
            t.append(pq.read_table(p), maintain=False)
        print(json.dumps(t.info()["rows"]))
    """)
    check_queries(url, s3.options, QUERIES)
    narrow, full = {}, {}
    tlc.Lake(url, s3.options).sql("SELECT avg(m1) FROM m.cpu", stats=narrow)
    tlc.Lake(url, s3.options).sql("SELECT * FROM m.cpu", stats=full)
    assert 0 < narrow["bytes_read"] < 0.5 * full["bytes_read"], (narrow, full)


# ---- Parquet footers carried in the head (several row groups a file) ----

HEAD_KEY = "m/cpu/metadata/timelake-c-head"


def head_objects(raw):
    """The head's objects (see src/table/head.h for the layout)."""
    assert raw[:4] == b"TLHD"
    at = 5 + 8
    at += 1 + raw[at]
    (n,) = struct.unpack_from("<Q", raw, at)
    meta_end = at + 8 + n
    (count,) = struct.unpack_from("<I", raw, meta_end)
    at, objs = meta_end + 4, []
    for _ in range(count):
        (ulen,) = struct.unpack_from("<I", raw, at)
        url = raw[at + 4:at + 4 + ulen].decode()
        (dlen,) = struct.unpack_from("<Q", raw, at + 4 + ulen)
        at += 4 + ulen + 8
        objs.append((url, raw[at:at + dlen]))
        at += dlen
    return raw[:meta_end], objs


def rewrite_head(s3, url, change):
    """Re-encodes the head with change(objects) applied, digest and all."""
    c = bucket_client(s3)
    key = url.split("/", 3)[3] + "/" + HEAD_KEY
    raw = c.get_object(Bucket=s3.bucket, Key=key)["Body"].read()
    prefix, objs = head_objects(raw)
    objs = change(objs)
    body = prefix + struct.pack("<I", len(objs))
    for u, d in objs:
        body += struct.pack("<I", len(u.encode())) + u.encode() + struct.pack("<Q", len(d)) + d
    c.put_object(Bucket=s3.bucket, Key=key, Body=body + hashlib.sha256(body).digest())


def bucket_client(s3):
    import boto3
    return boto3.client("s3", endpoint_url=s3.endpoint, aws_access_key_id="testing",
                        aws_secret_access_key="testing", region_name="us-east-1")


def make_multi_row_group_lake(backend, batches=BATCHES):
    url = backend.url()
    t = tlc.Lake(url, backend.option_list()).create_table(
        "m.cpu", SCHEMA, time_column="time", series_key=["host"],
        properties={"write.parquet.row-group-limit": "10000"})
    for b in batches:
        t.append(b, maintain=False)
    t.close()
    return url


FILTERED = "SELECT host, avg(m2) FROM m.cpu WHERE host IN ('h07', 'h08') AND time >= '2026-01-01 20:00:00+00' AND time < '2026-01-02 02:00:00+00' GROUP BY host"


def cold_round_trips(backend, url, query):
    """A cold query's answer, its round trips (wave_round_trips) and stats."""
    stats = {}

    def run(opts):
        stats.clear()
        return tlc.Lake(url, opts).sql(query, stats=stats)

    got, trips, _ = wave_round_trips(backend, run)
    return got, trips, stats


def held_round_trips(backend, url, query):
    """The same with every request held HOLD seconds: for a query whose data
    requests come in two waves that their paths do not tell apart."""
    with RangeProxy(backend.endpoint) as proxy:
        opts = backend.option_list(aws_endpoint=proxy.endpoint)
        stats = {}
        got = tlc.Lake(url, opts).sql(query, stats=stats)
        proxy.wait_idle()
        return got, round_trips(proxy.requests_since(0)), stats


def test_footers_in_the_head_make_a_cold_filtered_query_two_round_trips(s3):
    url = make_multi_row_group_lake(s3)
    _, objs = head_objects(bucket_client(s3).get_object(
        Bucket=s3.bucket, Key=url.split("/", 3)[3] + "/" + HEAD_KEY)["Body"].read())
    footers = [u for u, _ in objs if u.endswith("#footer")]
    assert len(footers) == 2, footers  # the two large files; small ones are read whole
    got, trips, stats = cold_round_trips(s3, url, FILTERED)
    assert trips == 2
    assert stats["row_groups_read"] < stats["row_groups_total"], stats
    want = oracle().sql(FILTERED).arrow()
    assert normal(got) == normal(want.read_all() if hasattr(want, "read_all") else want)
    check_queries(url, s3.option_list(), QUERIES)
    # A later append carries the earlier footers forward (the handle holds them).
    t = tlc.Lake(url, s3.option_list()).table("m.cpu")
    t.append(batch(2, 10, 9), maintain=False)
    t.close()
    _, objs = head_objects(bucket_client(s3).get_object(
        Bucket=s3.bucket, Key=url.split("/", 3)[3] + "/" + HEAD_KEY)["Body"].read())
    assert sorted(u for u, _ in objs if u.endswith("#footer")) == sorted(footers)
    # Compaction removes files: their footers go, and the files it writes bring theirs.
    t = tlc.Lake(url, s3.option_list()).table("m.cpu")
    t.maintain(retention=False, expire=False)
    t.close()
    large = check_footers_of_large_files(s3, url)
    assert large - {u[:-len("#footer")] for u in footers}, large  # day 1, compacted
    check_queries(url, s3.option_list(), QUERIES[:4])


@pytest.mark.parametrize("damage", ["dropped", "garbled", "other_file"])
def test_a_head_without_good_footers_still_reads_by_the_tail(s3, damage):
    url = make_multi_row_group_lake(s3)

    def change(objs):
        footers = [(u, d) for u, d in objs if u.endswith("#footer")]
        rest = [(u, d) for u, d in objs if not u.endswith("#footer")]
        if damage == "dropped":
            return rest
        if damage == "garbled":
            return rest + [(u, d[: len(d) // 2] + d[-8:]) for u, d in footers]
        # a well-formed footer of another file (other row count) under each name
        buf = io.BytesIO()
        pq.write_table(BATCHES[2], buf)
        raw = buf.getvalue()
        n = int.from_bytes(raw[-8:-4], "little")
        return rest + [(u, raw[-8 - n:]) for u, _ in footers]

    rewrite_head(s3, url, change)
    got, trips, stats = held_round_trips(s3, url, FILTERED)
    assert trips == 3
    want = oracle().sql(FILTERED).arrow()
    assert normal(got) == normal(want.read_all() if hasattr(want, "read_all") else want)


# ---- Footers of every live large file: after maintenance, appends, chunks ----

MiB = 1 << 20
HALF = LARGE_ROWS // 2
# Each of days 0 and 1 in two large halves: a full maintain merges each pair
# into one large file of several row groups.
HALVES = [batch(0, HALF, 11), batch(0, HALF, 12, start=HALF), batch(1, HALF, 13), batch(1, HALF, 14, start=HALF)]
EXACT = ("SELECT host, count(*) AS n, min(m2) AS lo, max(m2) AS hi FROM m.cpu WHERE host IN ('h07', 'h08') "
         "AND time >= '2026-01-01 20:00:00+00' AND time < '2026-01-02 02:00:00+00' GROUP BY host")


def live_data_files(s3, url):
    """{path: size} of the live data files, read from the newest metadata's
    manifests in the bucket; and {path: footer bytes} the head carries."""
    c = bucket_client(s3)
    prefix = url.split("/", 3)[3] + "/m/cpu/metadata/"
    get = lambda u: c.get_object(Bucket=s3.bucket, Key=u.split("/", 3)[3])["Body"].read()
    versions = [o["Key"] for o in c.list_objects_v2(Bucket=s3.bucket, Prefix=prefix + "v")["Contents"]
                if o["Key"].endswith(".metadata.json")]
    newest = max(versions, key=lambda k: int(k.rsplit("/v", 1)[1].split(".")[0]))
    md = json.loads(c.get_object(Bucket=s3.bucket, Key=newest)["Body"].read())
    snap = next(x for x in md["snapshots"] if x["snapshot-id"] == md["current-snapshot-id"])
    live = {}
    for mf in fastavro.reader(io.BytesIO(get(snap["manifest-list"]))):
        for e in fastavro.reader(io.BytesIO(get(mf["manifest_path"]))):
            if e["status"] != 2:
                live[e["data_file"]["file_path"]] = e["data_file"]["file_size_in_bytes"]
    _, objs = head_objects(c.get_object(Bucket=s3.bucket, Key=prefix + "timelake-c-head")["Body"].read())
    return live, {u[:-len("#footer")]: d for u, d in objs if u.endswith("#footer")}


def check_footers_of_large_files(s3, url):
    """Every live file of 1 MiB or more has its footer in the head, and the
    footer is that file's tail; no other footer is carried. Returns the large
    files' paths."""
    live, footers = live_data_files(s3, url)
    large = {p for p, size in live.items() if size >= MiB}
    assert set(footers) == large, (sorted(footers), sorted(large))
    c = bucket_client(s3)
    for p, d in footers.items():
        tail = c.get_object(Bucket=s3.bucket, Key=p.split("/", 3)[3], Range=f"bytes=-{len(d)}")["Body"].read()
        assert tail == d, p
    return large


def files_oracle(s3, url):
    """DuckDB over the table's live data files themselves, read with pyarrow."""
    live, _ = live_data_files(s3, url)
    c = bucket_client(s3)
    get = lambda p: c.get_object(Bucket=s3.bucket, Key=p.split("/", 3)[3])["Body"].read()
    return dedup_oracle(pa.concat_tables([pq.read_table(io.BytesIO(get(p))) for p in live]), "_ingest_ts")


def test_after_a_full_maintain_a_cold_filtered_query_is_two_round_trips(s3):
    url = make_multi_row_group_lake(s3, HALVES)
    before = check_footers_of_large_files(s3, url)
    with FaultProxy(s3.endpoint) as proxy:  # a handle opened through the head; no read cache
        t = tlc.Lake(url, s3.option_list(aws_endpoint=proxy.endpoint, cache_memory="0")).table("m.cpu")
        t.maintain()
        t.close()
        gets = [urllib.parse.unquote(r[3]) for r in proxy.requests_since(0) if r[2] == "GET"]
    large = check_footers_of_large_files(s3, url)
    assert len(large) == 2 and not large & before, (large, before)  # both days compacted
    # The footers were kept as the files were written, not read back.
    assert any("/data/" in g for g in gets)  # the inputs were read
    assert not [g for g in gets if any(p.split("/", 3)[3] in g for p in large)], gets
    # A fresh process: the head, then the chunks of the row groups the
    # filter keeps, read in one batch with the footers the head carries.
    got, trips, proxy = wave_round_trips(s3, lambda opts: result_of(run_query_proc(url, opts, EXACT)))
    assert trips == 2, sorted(proxy.requests_since(0))
    assert got["stats"]["row_groups_read"] < got["stats"]["row_groups_total"], got["stats"]
    want = files_oracle(s3, url).sql(EXACT).arrow()
    want = want.read_all() if hasattr(want, "read_all") else want
    assert got["rows"] == sorted(repr(r) for r in want.to_pylist()) and got["rows"]
    con = duckdb.connect()  # the same rows as the appended batches say
    con.register("all_rows", pa.concat_tables(HALVES))
    con.execute("CREATE SCHEMA m")
    con.execute("CREATE VIEW m.cpu AS SELECT * FROM all_rows")
    assert normal(want) == normal(con.sql(EXACT).arrow().read_all())
    # A later append (another handle) keeps the compacted files' footers.
    t = tlc.Lake(url, s3.option_list()).table("m.cpu")
    t.append(batch(2, LARGE_ROWS, 15), maintain=False)
    t.close()
    assert check_footers_of_large_files(s3, url) > large


def test_after_an_inline_compaction_a_cold_filtered_query_is_two_round_trips(s3):
    """Appends with inline maintenance (the default): on an object store the
    compaction commits after the append (it is folded into the append's own
    commit only on local stores), and its head carries the footer of the file
    it wrote, as an append's does: a cold filtered query is still the head,
    then the data."""
    url = s3.url()
    t = tlc.Lake(url, s3.option_list()).create_table(
        "m.cpu", SCHEMA, time_column="time", series_key=["host"],
        properties={"write.parquet.row-group-limit": "10000"})
    reports = [t.append(b) for b in HALVES[:3]]
    t.close()
    # The last commit is the compaction of day 0's two halves, after the third append.
    assert reports[-1]["maintenance"]["files_rewritten"] == 2, reports
    assert all("maintenance" not in r for r in reports[:-1]), reports
    live, _ = live_data_files(s3, url)
    assert len(live) == 2, live
    large = check_footers_of_large_files(s3, url)
    day0 = [p for p in live if "2026-01-01" in p or "time_day=20454" in p]  # its two halves, compacted
    assert len(day0) == 1 and day0[0] in large, live
    got, trips, proxy = wave_round_trips(s3, lambda opts: result_of(run_query_proc(url, opts, EXACT)))
    assert trips == 2, sorted(proxy.requests_since(0))
    assert got["stats"]["row_groups_read"] < got["stats"]["row_groups_total"], got["stats"]
    want = files_oracle(s3, url).sql(EXACT).arrow()
    want = want.read_all() if hasattr(want, "read_all") else want
    assert got["rows"] == sorted(repr(r) for r in want.to_pylist()) and got["rows"]


def test_every_live_large_file_keeps_its_footer_across_appends(s3, monkeypatch):
    url = s3.url()
    stale = tlc.Lake(url, s3.option_list()).create_table(
        "m.cpu", SCHEMA, time_column="time", series_key=["host"],
        properties={"write.parquet.row-group-limit": "10000"})
    # Each append from a new process's view: a handle opened through the head.
    for day in range(3):
        t = tlc.Lake(url, s3.option_list()).table("m.cpu")
        t.append(batch(day, LARGE_ROWS, 20 + day), maintain=False)
        t.close()
        assert len(check_footers_of_large_files(s3, url)) == day + 1
    # A handle left at the empty table loses the race, reloads and rebases.
    stale.append(batch(3, LARGE_ROWS, 23), maintain=False)
    assert len(check_footers_of_large_files(s3, url)) == 4
    # An append larger than a chunk, uploaded chunk by chunk (more than an
    # append holds): every chunk's large file, not only the last's. The
    # second chunk's hosts sort after the first's: runs that do not overlap
    # stay as written (src/table/append_merge.c).
    stale.close()
    monkeypatch.setenv("TIMELAKE_APPEND_CHUNK_ROWS", str(HALF))
    monkeypatch.setenv("TIMELAKE_APPEND_HOLD_BYTES", "0")
    later = batch(4, HALF, 25, start=HALF)
    later = later.set_column(1, "host", pa.array(["z" + h for h in later.column("host").to_pylist()]))
    chunks = pa.concat_tables([batch(4, HALF, 24), later])  # two record batches
    with FaultProxy(s3.endpoint) as proxy:
        t = tlc.Lake(url, s3.option_list(aws_endpoint=proxy.endpoint, cache_memory="0")).table("m.cpu")
        t.append(chunks, maintain=False)
        t.close()
        # The first chunk's footer was kept before its upload, not read back.
        assert not [r for r in proxy.requests_since(0) if r[2] == "GET" and "/data/" in urllib.parse.unquote(r[3])]
    large = check_footers_of_large_files(s3, url)
    live, _ = live_data_files(s3, url)
    assert len([p for p in large if "time_day=20458" in p or "2026-01-05" in p]) == 2, live
    assert len(large) == 6
    # Files of several row groups each: only their footers in the head make it two.
    q = "SELECT host, count(*), max(m1) FROM m.cpu WHERE host = 'h07' AND time >= '2026-01-05' GROUP BY host"
    got, trips, stats = cold_round_trips(s3, url, q)
    assert trips == 2 and stats["row_groups_read"] < stats["row_groups_total"], (trips, stats)
    m1 = [r["m1"] for r in chunks.to_pylist() if r["host"] == "h07"]
    assert normal(got) == [("h07", len(m1), round(max(m1), 9))]
    # Chunks that overlap, uploaded, then merged into one file: theirs leave
    # the head with them (check_footers_of_large_files: no other footer).
    t = tlc.Lake(url, s3.option_list()).table("m.cpu")
    t.append(pa.concat_tables([batch(5, HALF, 26), batch(5, HALF, 27, start=HALF)]), maintain=False)
    t.close()
    assert len(check_footers_of_large_files(s3, url)) == 7


def head_of(s3, url):
    raw = bucket_client(s3).get_object(Bucket=s3.bucket, Key=url.split("/", 3)[3] + "/" + HEAD_KEY)["Body"].read()
    return head_objects(raw)[1]


def test_head_inline_bytes_bounds_the_index_and_footers(s3):
    """timelake.head-inline-bytes: room in the head for the last-value index,
    then the footers of the newest large files; what does not fit is read on
    its own, and queries answer the same."""
    url = make_multi_row_group_lake(s3)
    objs = head_of(s3, url)
    lvi = [d for u, d in objs if "/lvi-" in u]
    footers = [(u, d) for u, d in objs if u.endswith("#footer")]
    assert len(lvi) == 1 and len(footers) == 2
    t = tlc.Lake(url, s3.option_list()).table("m.cpu")
    # Room for the index and one footer, then none at all: the next commit's head obeys.
    for room, want in ((len(lvi[0]) + max(len(d) for _, d in footers), 1), (0, 0)):
        t.set_properties({"head_inline_bytes": str(room)})
        objs = head_of(s3, url)
        assert sum(u.endswith("#footer") for u, _ in objs) == want, room
        assert sum("/lvi-" in u for u, _ in objs) == (1 if room else 0), room
        assert sum(1 for u, _ in objs if u.endswith("-m0.avro")) >= 1  # manifests are carried whatever the room
        check_queries(url, s3.option_list(), QUERIES[:4])
    t.set_properties({"head_inline_bytes": None})
    assert len([u for u, _ in head_of(s3, url) if u.endswith("#footer")]) == 2
