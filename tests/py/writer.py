"""A separate appending process for the concurrency tests.

usage: writer.py LAKE TABLE WRITER FIRST COUNT [--forever] [--replace]
Appends COUNT batches (or forever) of ROWS rows; batch k carries batch id
"<WRITER>-<k>" and rows tagged (writer, seq=k), so a test can check that each
committed batch is there whole and exactly once. With --replace each batch
replaces the table instead, with the attachment "batch" naming it.
"""

import datetime as dt
import sys

import pyarrow as pa

import tlc

ROWS = 5
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("writer", pa.string()), ("seq", pa.int64()), ("val", pa.float64())])


def batch(writer, k):
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(hours=k % 48)
    return pa.table(
        {
            "time": [t0 + dt.timedelta(seconds=i) for i in range(ROWS)],
            "writer": [writer] * ROWS,
            "seq": [k] * ROWS,
            "val": [float(i) for i in range(ROWS)],
        },
        schema=SCHEMA,
    )


def main():
    lake_dir, table, writer, first, count = sys.argv[1:6]
    forever = "--forever" in sys.argv
    replace = "--replace" in sys.argv
    t = tlc.Lake(lake_dir).table(table)
    k = int(first)
    end = k + int(count)
    while forever or k < end:
        name = f"{writer}-{k}"
        if replace:
            t.replace(batch(writer, k), batch_id=name, attachments={"batch": name.encode()})
        else:
            t.append(batch(writer, k), batch_id=name)
        k += 1
        if forever:
            print(k, flush=True)


if __name__ == "__main__":
    main()
