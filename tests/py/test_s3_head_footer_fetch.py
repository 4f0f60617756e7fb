"""Footers the head object reads from data files (head_write.c
add_missing_footers): a handle whose head carried no footer of a live large
file reads it in one GET per file, in one wave at most per commit, so an
append pays at most one round trip more for them, once; and never more than
that one read, however long the file's 4-byte footer length says the footer
is."""

import struct
import re
import urllib.parse

import pyarrow as pa
import pytest

import tlc
from fault_proxy import FaultProxy, WaveProxy, round_trips
from store_servers import server_fixture
from test_s3_query_io import (HEAD_KEY, LARGE_ROWS, SCHEMA, batch, bucket_client, check_footers_of_large_files,
                              live_data_files)

s3 = pytest.fixture(scope="module")(server_fixture("s3"))
TAIL = 64 << 10  # TL_HEAD_FOOTER_TAIL
WAVE = 8  # FETCH_THREADS


def is_footer_read(method, path):
    return method == "GET" and "/data/" in urllib.parse.unquote(path)


def is_create(method, path):
    return method == "PUT" and re.search(r"/metadata/v\d+\.metadata\.json$", path) is not None


def is_head(method, path):
    return method == "PUT" and path.endswith("/" + HEAD_KEY)


def is_upload(method, path):
    """A PUT of the commit's batch: its data file, manifest, list and index."""
    return (method == "PUT" and not is_create(method, path) and not is_head(method, path)
            and not path.endswith("/metadata/version-hint.text"))


UPLOADS = 4  # one day's batch: data file, manifest, manifest list, last-value index


def large_files(s3, days):
    """A table whose one append wrote a large file for each of `days` days."""
    url = s3.url()
    t = tlc.Lake(url, s3.option_list()).create_table("m.cpu", SCHEMA, time_column="time", series_key=["host"])
    t.append(pa.concat_tables([batch(d, LARGE_ROWS, d + 1) for d in range(days)]), maintain=False)
    t.close()
    live, footers = live_data_files(s3, url)
    assert len(live) == days and set(footers) == set(live)
    return url, live


def drop_head(s3, url):
    """As when a lost race's head replaced the winner's: no trusted head, so
    the next handle holds neither manifests nor footers."""
    bucket_client(s3).delete_object(Bucket=s3.bucket, Key=url.split("/", 3)[3] + "/" + HEAD_KEY)


def commit_round_trips(proxy, t, day, footers):
    """Round trips of an append from its head's manifest read, or else its
    first upload (a handle without a head reads the parent's list and index
    before: not the commit's). The proxy holds the batch's uploads until
    `footers` footer reads have arrived as well, and the conditional create
    until the head's PUT has: each wave that completes is one round trip
    whatever the machine's load, and one that cannot (a footer read after the
    upload, a head PUT after the create) is let go late and named in
    proxy.incomplete."""
    uploads = [("upload", is_upload, UPLOADS)] + ([("footer", is_footer_read, footers)] if footers else [])
    proxy.expect(uploads, [("create", is_create, 1), ("head", is_head, 1)])
    mark = proxy.mark()
    t.append(batch(day, 100, 50 + day), maintain=False)
    reqs = sorted(proxy.requests_since(mark))  # complete: logged before answered
    assert proxy.incomplete == [], proxy.incomplete
    # The commit's first request: its first upload, the head's manifest read
    # (the last; a handle without a head read it before, on the same
    # thread, as the parent's) or a footer read, whichever started first
    # (the head is built on its own thread, started just before the upload).
    manifest_reads = [i for i, r in enumerate(reqs) if r[2] == "GET" and r[3].endswith("-m0.avro")]
    firsts = [min(i for i, r in enumerate(reqs) if r[2] == "PUT")] + manifest_reads[-1:]
    firsts += [i for i, r in enumerate(reqs) if is_footer_read(r[2], r[3])][:1]
    commit = reqs[min(firsts):]
    # The parent version read back after the create (commit_point.h) is not
    # the upload's: counted apart.
    parent = [r for r in commit if r[2] == "GET" and re.search(r"/metadata/v\d+\.metadata\.json$", r[3])]
    parent += [r for r in commit if r[3].endswith("/metadata/version-hint.text")]
    assert len(parent) == 2, reqs
    commit = [r for r in commit if r not in parent]
    footer_gets = [r for r in commit if is_footer_read(r[2], r[3])]
    return round_trips(commit), len(footer_gets), [(round(r[0] - reqs[0][0], 2), r[2], r[3][-50:]) for r in reqs]


def test_footers_read_from_files_cost_an_append_one_round_trip_at_most(s3):
    url, live = large_files(s3, WAVE + 1)
    drop_head(s3, url)
    with WaveProxy(s3.endpoint) as proxy:
        t = tlc.Lake(url, s3.option_list(aws_endpoint=proxy.endpoint, cache_memory="0")).table("m.cpu")
        # The manifests, then one wave of footers, while the batch uploads.
        trips, gets, log = commit_round_trips(proxy, t, 20, WAVE)
        assert trips <= 3 and gets == WAVE, (trips, gets, log)
        # The handle holds the manifests now: the last footer beside the upload.
        trips, gets, log = commit_round_trips(proxy, t, 21, 1)
        assert (trips, gets) == (2, 1), log
        trips, gets, log = commit_round_trips(proxy, t, 22, 0)
        assert (trips, gets) == (2, 0), log
        t.close()
    assert check_footers_of_large_files(s3, url) == set(live)


def test_a_footer_length_beyond_one_read_is_not_followed(s3):
    url, live = large_files(s3, 1)
    (path, size), = live.items()
    c = bucket_client(s3)
    key = path.split("/", 3)[3]
    body = bytearray(c.get_object(Bucket=s3.bucket, Key=key)["Body"].read())
    assert len(body) == size
    body[-8:] = struct.pack("<I", size - 12) + b"PAR1"  # the longest length that fits the file
    c.put_object(Bucket=s3.bucket, Key=key, Body=bytes(body))
    drop_head(s3, url)
    with FaultProxy(s3.endpoint) as proxy:
        t = tlc.Lake(url, s3.option_list(aws_endpoint=proxy.endpoint, cache_memory="0")).table("m.cpu")
        for day in (1, 2):  # one read of the footer's tail, refused, each time
            t.append(batch(day, 100, 2), maintain=False)
        t.close()
        reads = [r for r in proxy.requests_since(0) if r[2] == "GET" and key in urllib.parse.unquote(r[3])]
    assert len(reads) == 2, reads
    _, footers = live_data_files(s3, url)
    assert path not in footers, len(footers[path])


def test_a_handle_of_small_files_still_carries_a_large_file_another_writer_added(s3):
    """The handle knows its own table of small files has no large file (and
    spares the manifests' parse); once another writer's large file is in,
    the handle's next commit carries its footer, or the one after that."""
    url = s3.url()
    t = tlc.Lake(url, s3.option_list()).create_table("m.cpu", SCHEMA, time_column="time", series_key=["host"])
    for day in range(2):
        t.append(batch(day, 100, day), maintain=False)
    other = tlc.Lake(url, s3.option_list()).table("m.cpu")
    other.append(batch(2, LARGE_ROWS, 7), maintain=False)
    other.close()
    live, footers = live_data_files(s3, url)
    (large,) = [p for p, size in live.items() if size >= 1 << 20]
    assert set(footers) == {large}
    t.append(batch(3, 100, 3), maintain=False)  # loses the race, rebases on the large file
    t.append(batch(4, 100, 4), maintain=False)
    t.close()
    assert check_footers_of_large_files(s3, url) == {large}
