"""The duplicate check of a batch id at several history lengths: ours and the
reference side by side (and an older build of ours, TL_BUILD_BASELINE=DIR).

usage: python bench/append/bench_batch_check.py [--sizes 100,3000] [--repeat 300] [--no-build]
Each implementation appends N + 200 one-row batches, each with a batch id and
no inline maintenance, then expires all but the newest N snapshots (ours moves
the 200 oldest ids to its batch ledger; the reference forgets them). Then, the
median ms of:
  redelivery    an append of a batch a kept snapshot committed (a duplicate:
                nothing written; both implementations)
  check new     tl_table_batches_committed of one id never committed (ours)
  check kept    ... of an id a kept snapshot committed (ours)
  check ledger  ... of an id only the batch ledger holds (ours)
Ratios are reference / ours: above 1 means we are faster.
"""

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402

EXTRA = 200  # snapshots expired, their ids in our ledger
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def one_row(i):
    import pyarrow as pa

    schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("dev", pa.int32()), ("val", pa.float64())])
    return pa.table({"time": [T0 + dt.timedelta(seconds=i)], "dev": [1], "val": [float(i)]}, schema=schema)


def bench(lake_cls, lake_dir, sizes, repeat, ours):
    """Runs in either implementation: lake_cls is tlc.Lake or timelake.Lake."""
    out = {}
    for n in sizes:
        lake = lake_cls(f"{lake_dir}/n{n}")
        props = {"timelake.max-snapshots": str(n), "timelake.min-snapshots": "1"}
        table = lake.create_table("t", one_row(0).schema, time_column="time", series_key=["dev"],
                                  properties=props)
        for i in range(n + EXTRA):
            table.append(one_row(i), batch_id=f"b{i}", maintain=False)
        table.maintain(compact=False, retention=False, rollups=False)
        kept = f"b{n + EXTRA - 1}"
        row = one_row(0)
        res = {"redelivery": common.timed(lambda: table.append(row, batch_id=kept), repeat)[0]}
        if ours:
            assert table.batches_committed(["new", kept, "b0"]) == [False, True, True]
            for label, i in (("check new", "new"), ("check kept", kept), ("check ledger", "b0")):
                res[label] = common.timed(lambda: table.batches_committed([i]), repeat * 10)[0]
        out[n] = res
    return out


def as_ours(lib, work, args):
    """Our result with the library at lib, in a process of its own."""
    env = dict(os.environ, TL_LIB=lib)
    proc = subprocess.run([sys.executable, __file__, "--as-ours", work, "--sizes", args.sizes, "--repeat",
                           str(args.repeat)], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"run with {lib} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100,3000")
    ap.add_argument("--repeat", type=int, default=300)
    ap.add_argument("--no-build", action="store_true", help="use the library TL_LIB names instead of building build/")
    ap.add_argument("--as-reference", metavar="DIR", help=argparse.SUPPRESS)
    ap.add_argument("--as-ours", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.as_reference or args.as_ours:
        if args.as_reference:
            import timelake as impl
        else:
            import tlc as impl
        print(json.dumps(bench(impl.Lake, args.as_reference or args.as_ours, sizes, args.repeat,
                               args.as_ours is not None)))
        return
    work = tempfile.mkdtemp(prefix="tl-bench-batch-check-")
    try:
        if not args.no_build:
            common.release_library()
        lib = os.environ.get("TL_LIB", str(common.ROOT / "build" / "libtimelake.so"))
        runs = [("ours", as_ours(lib, work + "/ours", args))]
        baseline = os.environ.get("TL_BUILD_BASELINE")
        if baseline:
            runs.append(("before", as_ours(f"{baseline}/libtimelake.so", work + "/before", args)))
        ref = common.run_reference(__file__, "--as-reference", work + "/ref", "--sizes", args.sizes,
                                   "--repeat", str(args.repeat))
        print(f"{EXTRA} batch ids in the ledger; median ms (checks of ours: of {args.repeat * 10})")
        for n in sizes:
            r = ref[str(n)]["redelivery"]
            for name, res in runs:
                o = res[str(n)]
                checks = "  ".join(f"{k} {o[k]:.4f}" for k in ("check new", "check kept", "check ledger"))
                print(f"{n:>5} snapshots {name:>6}: redelivery {o['redelivery']:.3f} (ref {r:.3f}, "
                      f"{r / o['redelivery']:.2f}x)  {checks}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
