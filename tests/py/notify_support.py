"""What the notification tests share: the landing bucket filled with files,
the notifications a bucket would send, and the check that every row landed
exactly once."""

import io
import json
import random
import re
import urllib.error
import urllib.request
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from conftest import ROOT

ROWS_PER_FILE = 4
SCHEMA = pa.schema(
    [("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64()),
     ("file", pa.int64()), ("row", pa.int64())]
)


SEED_DIR = ROOT / "tests" / "data" / "seed"  # the seeds' code, copied verbatim (test_seeds.py)


def seed_notify_script(dest):
    """The seed's notify.py, unmodified."""
    Path(dest).write_text((SEED_DIR / "notify.py").read_text())
    return dest


def file_rows(i):
    base = 1_767_225_600 + i * 60
    return pa.table(
        {
            "time": pa.array([(base + r) * 1_000_000 for r in range(ROWS_PER_FILE)], pa.timestamp("us", tz="UTC")),
            "device_id": [f"dev-{i % 7}"] * ROWS_PER_FILE,
            "temp": [float(i) + r / 10 for r in range(ROWS_PER_FILE)],
            "file": [i] * ROWS_PER_FILE,
            "row": list(range(ROWS_PER_FILE)),
        },
        schema=SCHEMA,
    )


def upload_files(s3, bucket, n, kinds=("csv", "parquet")):
    """Uploads n files named landing/<i>.<ext>; returns their keys."""
    keys = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        table = file_rows(i)
        buf = io.BytesIO()
        if kind == "parquet":
            pq.write_table(table, buf)
        else:
            pacsv.write_csv(table, buf)
        key = f"landing/{i:05d}.{kind}"
        s3.put_object(Bucket=bucket, Key=key, Body=buf.getvalue())
        keys.append(key)
    return keys


def notifications(bucket, keys, redeliver=0.2, seed=5, per_request=3):
    """Request bodies as Tigris sends them: at least once, not in order."""
    rnd = random.Random(seed)
    events = [
        {"eventName": "OBJECT_CREATED_PUT", "bucket": bucket, "object": {"key": k, "size": 1, "etag": f'"{i}"'}}
        for i, k in enumerate(keys)
    ]
    events += rnd.sample(events, int(len(events) * redeliver))
    events.append({"eventName": "OBJECT_DELETED", "bucket": bucket, "object": {"key": keys[0], "size": 0, "etag": ""}})
    rnd.shuffle(events)
    return [{"events": events[i : i + per_request]} for i in range(0, len(events), per_request)]


def post(url, body, token):
    data = json.dumps(body).encode() if not isinstance(body, bytes) else body
    req = urllib.request.Request(url, data=data, method="POST", headers={"Content-Type": "application/json"})
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code


def check_rows_once(rows, n_files):
    """Every (file, row) exactly once."""
    seen = {}
    for r in rows:
        key = (r["file"], r["row"])
        seen[key] = seen.get(key, 0) + 1
    assert set(seen.values()) == {1}, "a row landed twice"
    assert set(seen) == {(i, r) for i in range(n_files) for r in range(ROWS_PER_FILE)}


def batch_ids_of(lake_dir, table_key):
    files = sorted((Path(lake_dir) / table_key / "metadata").glob("v*.metadata.json"), key=lambda p: int(re.findall(r"\d+", p.name)[0]))
    md = json.loads(files[-1].read_text())
    ids = []
    for s in md.get("snapshots", []):
        ids.append(s["summary"].get("timelake.batch-id"))
        ids += json.loads(s["summary"].get("timelake.batch-ids", "[]"))  # a group commit's
    return ids
