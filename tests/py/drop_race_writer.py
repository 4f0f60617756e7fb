"""An appending process for the drop-race tests.

usage: drop_race_writer.py URL OPTIONS_JSON TABLE WRITER MODE STOP_FILE
Appends one small batch after another until STOP_FILE exists. MODE "stale"
keeps the handle it opened first (a long-running ingest process); "fresh"
opens the table again for every append (a command run per file). Prints one
JSON line per append: when it started and ended (time.time()) and its
outcome ("ok", or the exception's class name and message)."""

import json
import os
import sys
import time

import tlc
from writer import batch


def main():
    url, options, table, writer, mode, stop = sys.argv[1:7]
    lake = tlc.Lake(url, json.loads(options) or None)
    t = lake.table(table)
    k = 0
    while not os.path.exists(stop):
        start = time.time()
        try:
            if mode == "fresh":
                t = tlc.Lake(url, json.loads(options) or None).table(table)
            t.append(batch(writer, k), batch_id=f"{writer}-{k}", maintain=k % 5 == 4)
            outcome, message = "ok", ""
        except Exception as e:  # every outcome is reported, the test judges
            outcome, message = type(e).__name__, str(e)
        print(json.dumps({"start": start, "end": time.time(), "outcome": outcome, "message": message}),
              flush=True)
        k += 1


if __name__ == "__main__":
    main()
