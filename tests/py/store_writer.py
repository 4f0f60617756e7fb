"""An appending process for the object-store concurrency tests.

usage: store_writer.py URL OPTIONS_JSON TABLE WRITER FIRST COUNT
Like writer.py, against a remote warehouse: batch k carries batch id
"<WRITER>-<k>". A batch whose append fails (a storage error after all
retries) is appended again with the same batch id until it commits: the
idempotency key makes that safe, which is what the test checks."""

import json
import sys

import tlc
from writer import batch


def main():
    url, options, table, writer, first, count = sys.argv[1:7]
    lake = tlc.Lake(url, json.loads(options))
    t = lake.table(table)
    failures = 0
    for k in range(int(first), int(first) + int(count)):
        while True:
            try:
                t.append(batch(writer, k), batch_id=f"{writer}-{k}")
                break
            except RuntimeError as e:
                failures += 1
                if failures > 50:
                    raise
                print(f"retrying {writer}-{k}: {e}", file=sys.stderr, flush=True)
                try:
                    t.refresh()
                except RuntimeError:
                    pass
    print(json.dumps({"failures": failures}), flush=True)


if __name__ == "__main__":
    main()
