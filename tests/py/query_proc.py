"""A querying process for the shared read-cache tests.

usage: query_proc.py URL OPTIONS_JSON QUERY
Opens the lake, runs the query, prints one JSON line: the result's rows (as
repr strings, sorted) and the query stats."""

import json
import sys

import tlc


def main():
    url, options, query = sys.argv[1:4]
    stats = {}
    table = tlc.Lake(url, json.loads(options)).sql(query, stats=stats)
    table = table.read_all() if hasattr(table, "read_all") else table
    rows = sorted(repr(r) for r in table.to_pylist())
    print(json.dumps({"rows": rows, "stats": stats}))


if __name__ == "__main__":
    main()
