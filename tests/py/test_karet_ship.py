"""`karet ship` end to end, against a real `karet serve` (a local lake, and a
lake in moto's S3 server) that the tests start: every line of the log reaches
the source prefix exactly once, in uploads named in time order, and each call
that uploaded made one run request (a manual job); through appends,
half-written lines, rotation once and twice, copytruncate, a kill between the
upload and the state save, the destination and the run URL down then back, a
CSV log, and a 1 GB backlog split into files. When the engine (karet_run) is
built, the table's rows are compared with the log's lines too."""

import asyncio
import hashlib
import json
import os
import shutil
import signal
import socket
import time

import pytest

from fault_proxy import FaultProxy
from karet_service import PREFIX, SLUG, Server, finished, jobs, make_pipeline, wait_jobs
from ship_support import (LocalDest, S3Dest, Shipper, append, csv_event, data_of, event, lines, ndjson_config,
                          run_url, shipped_lines)
from store_servers import server_fixture

s3_server = pytest.fixture(scope="module")(server_fixture("s3"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def local(tmp_path):
    """karet serve on a local lake with the events pipeline (NDJSON)."""
    srv = Server(tmp_path / "data", tmp_path / "lake").start()
    make_pipeline(srv.worker(), config=ndjson_config())
    yield srv, LocalDest(tmp_path / "lake")
    srv.stop()


def shipper(tmp_path, srv, dest, **kw):
    return Shipper(tmp_path / "events.log", dest.to, tmp_path / "state" / "events.json", run_url=run_url(srv), **kw)


def manual_jobs(srv):
    return [j for j in jobs(srv.worker()) if j["trigger"] == "manual"]


def ok(p):
    assert p.returncode == 0, p.stderr
    return p


def table_rows(srv):
    r = srv.worker().post(f"/api/p/{SLUG}/query", {"sql": "SELECT time, \"user\", value FROM events"})
    assert r.status == 200, r.body
    return sorted(tuple(row) if isinstance(row, list) else tuple(row.values()) for row in r.json()["rows"])


def expected_rows(ks):
    return sorted((json.loads(event(k))["time"], json.loads(event(k))["user"], k + 0.5) for k in ks)


def check_table(srv, ks, n_jobs):
    """Table rows equal the log's lines, once the engine is built."""
    wait_jobs(srv.worker(), lambda js: finished(js, n_jobs))
    assert table_rows(srv) == expected_rows(ks)


# ---- lines arrive exactly once ----


def test_appended_lines_arrive_exactly_once_and_nothing_new_sends_nothing(local, tmp_path):
    srv, dest = local
    ship = shipper(tmp_path, srv, dest)
    log = tmp_path / "events.log"
    expect = []
    for rnd in range(3):
        ks = range(rnd * 100, rnd * 100 + 100)
        append(log, lines(ks))
        expect += [event(k) for k in ks]
        p = ok(ship())
        assert "shipped 100 lines" in p.stdout and "run requested: job-" in p.stdout
        assert shipped_lines(dest) == expect
    names = [n for n, _ in dest.objects()]
    assert len(names) == 3 and names == sorted(names) and len(set(names)) == 3
    assert all(n.startswith("events_") and n.endswith(".ndjson") for n in names)
    assert len(manual_jobs(srv)) == 3
    # Nothing new: no upload, no run request.
    p = ok(ship())
    assert "nothing new" in p.stdout
    assert [n for n, _ in dest.objects()] == names and len(manual_jobs(srv)) == 3
    check_table(srv, range(300), 3)


def test_upload_names_are_fixed_width_growing_and_never_reused(local, tmp_path):
    srv, dest = local
    ship = shipper(tmp_path, srv, dest)
    log = tmp_path / "events.log"
    for k in range(8):  # several calls in one second
        append(log, event(k))
        assert "shipped 1 line (" in ok(ship()).stdout
    names = [n for n, _ in dest.objects()]
    assert len(names) == 8 and names == sorted(names)
    for n in names:
        stem, first, last, seq = n[: -len(".ndjson")].split("_")
        assert (stem, len(first), len(last), len(seq)) == ("events", 10, 10, 6)
        assert int(first) <= int(last) <= time.time()
    # A lost state (both copies) starts after the names already there.
    os.unlink(ship.state)
    shutil.rmtree(dest.lake / PREFIX / ".karet-ship")
    append(log, event(8))
    ok(ship())
    after = [n for n, _ in dest.objects()]
    assert len(after) == 9 and after[:8] == names and after[8] > names[-1]


def test_half_written_line_is_held_back(local, tmp_path):
    srv, dest = local
    ship = shipper(tmp_path, srv, dest)
    log = tmp_path / "events.log"
    full = event(1)
    append(log, event(0) + full[:17])
    ok(ship())
    assert shipped_lines(dest) == [event(0)]
    ok(ship())  # still half-written: nothing new
    assert len(dest.objects()) == 1 and len(manual_jobs(srv)) == 1
    append(log, full[17:] + event(2))
    ok(ship())
    assert shipped_lines(dest) == [event(0), event(1), event(2)]
    check_table(srv, range(3), 2)


# ---- rotation ----


def test_rotation_once_finishes_the_old_file_first(local, tmp_path):
    srv, dest = local
    ship = shipper(tmp_path, srv, dest)
    log = tmp_path / "events.log"
    append(log, lines(range(0, 10)))
    ok(ship())
    append(log, lines(range(10, 20)) + event(20)[:9])  # the tail, with a line cut short
    os.rename(log, f"{log}.1")
    append(f"{log}.1", event(20)[9:])  # the writer finished its line before reopening
    append(log, lines(range(21, 30)))
    p = ok(ship())
    assert "was rotated: finishing" in p.stderr
    assert shipped_lines(dest) == [event(k) for k in range(30)]
    check_table(srv, range(30), 2)


def test_rotation_twice_between_calls(local, tmp_path):
    srv, dest = local
    ship = shipper(tmp_path, srv, dest)
    log = tmp_path / "events.log"
    append(log, lines(range(0, 10)))
    ok(ship())
    append(log, lines(range(10, 20)))
    os.rename(log, f"{log}.1")
    append(log, lines(range(20, 30)))
    os.rename(f"{log}.1", f"{log}.2")
    os.rename(log, f"{log}.1")
    append(log, lines(range(30, 40)))
    ok(ship())
    assert shipped_lines(dest) == [event(k) for k in range(40)]
    # Rotated again, the old files stay: nothing is shipped twice.
    append(log, lines(range(40, 45)))
    os.rename(f"{log}.2", f"{log}.3")
    os.rename(f"{log}.1", f"{log}.2")
    os.rename(log, f"{log}.1")
    append(log, lines(range(45, 50)))
    ok(ship())
    assert shipped_lines(dest) == [event(k) for k in range(50)]
    check_table(srv, range(50), 2)


def test_rotation_with_a_pattern(local, tmp_path):
    srv, dest = local
    ship = shipper(tmp_path, srv, dest, extra=["--rotated", str(tmp_path / "events.log-*")])
    log = tmp_path / "events.log"
    append(log, lines(range(0, 5)))
    ok(ship())
    append(log, lines(range(5, 10)))
    os.rename(log, tmp_path / "events.log-20261112")
    append(log, lines(range(10, 15)))
    time.sleep(0.02)
    os.rename(log, tmp_path / "events.log-20261113")
    append(log, lines(range(15, 20)))
    ok(ship())
    assert shipped_lines(dest) == [event(k) for k in range(20)]


def test_old_file_gone_is_said_loudly_and_shipping_goes_on(local, tmp_path):
    srv, dest = local
    ship = shipper(tmp_path, srv, dest)
    log = tmp_path / "events.log"
    append(log, lines(range(0, 5)))
    ok(ship())
    append(log, lines(range(5, 10)))
    os.rename(log, f"{log}.1")
    os.unlink(f"{log}.1")  # deleted (or compressed) before the next call
    append(log, lines(range(10, 15)))
    p = ok(ship())
    assert "WARNING" in p.stderr and "can no longer be found" in p.stderr and "may be lost" in p.stderr
    assert shipped_lines(dest) == [event(k) for k in [*range(5), *range(10, 15)]]


def test_copytruncate_ships_the_copys_rest_then_starts_from_zero(local, tmp_path):
    srv, dest = local
    ship = shipper(tmp_path, srv, dest)
    log = tmp_path / "events.log"
    append(log, lines(range(0, 10)))
    ok(ship())
    append(log, lines(range(10, 20)))
    shutil.copyfile(log, f"{log}.1")  # logrotate's copytruncate
    os.truncate(log, 0)
    append(log, lines(range(20, 25)))
    p = ok(ship())
    assert "truncated in place" in p.stderr and "copy" in p.stderr
    assert shipped_lines(dest) == [event(k) for k in range(25)]
    # Truncated again with no copy kept, and grown past the old offset: the
    # bytes before the offset differ, so it starts again from 0.
    os.unlink(f"{log}.1")
    os.truncate(log, 0)
    append(log, lines(range(100, 140)))
    p = ok(ship())
    assert "truncated in place" in p.stderr
    assert shipped_lines(dest) == [event(k) for k in [*range(25), *range(100, 140)]]
    check_table(srv, [*range(25), *range(100, 140)], 3)


# ---- failures ----


def test_log_missing_token_refused_and_usage_have_their_exit_codes(local, tmp_path):
    srv, dest = local
    ship = shipper(tmp_path, srv, dest)
    p = ship()
    assert p.returncode == 1 and "does not exist" in p.stderr and dest.objects() == []
    append(tmp_path / "events.log", lines(range(3)))
    p = ship(env={"KARET_WORKER_TOKEN": "wrong-token"})
    assert p.returncode == 5 and "refused the token (HTTP 401)" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert shipped_lines(dest) == [event(k) for k in range(3)] and manual_jobs(srv) == []
    # The request is pending: the next call (nothing new) sends it.
    p = ok(ship())
    assert "run requested" in p.stdout and len(manual_jobs(srv)) == 1 and len(dest.objects()) == 1
    p = ok(ship())
    assert "run requested" not in p.stdout and len(manual_jobs(srv)) == 1
    p = ship("--max-file-size", "lots")
    assert p.returncode == 2 and "--max-file-size" in p.stderr


def test_destination_down_then_back(local, tmp_path):
    srv, dest = local
    log = tmp_path / "events.log"
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where a folder should be")
    ship = Shipper(log, blocker / "events", tmp_path / "state.json", run_url=run_url(srv))
    append(log, lines(range(5)))
    p = ship()
    assert p.returncode == 3 and "Nothing moved on" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and manual_jobs(srv) == []
    append(log, lines(range(5, 8)))
    assert ship().returncode == 3
    blocker.unlink()
    ok(ship())
    assert shipped_lines(LocalDest(blocker, "events")) == [event(k) for k in range(8)]
    assert len(manual_jobs(srv)) == 1


def test_run_url_down_then_back(tmp_path):
    port = free_port()
    srv = Server(tmp_path / "data", tmp_path / "lake", listen=f"127.0.0.1:{port}").start()
    make_pipeline(srv.worker(), config=ndjson_config())
    dest = LocalDest(tmp_path / "lake")
    ship = shipper(tmp_path, srv, dest)
    log = tmp_path / "events.log"
    append(log, lines(range(5)))
    ok(ship())
    srv.stop()
    try:
        append(log, lines(range(5, 10)))
        p = ship()
        assert p.returncode == 4 and "cannot reach the run URL" in p.stderr
        assert shipped_lines(dest) == [event(k) for k in range(10)]  # the position moved on
        p = ship()  # nothing new, but the request is still owed
        assert p.returncode == 4 and len(dest.objects()) == 2
    finally:
        srv = Server(tmp_path / "data", tmp_path / "lake", listen=f"127.0.0.1:{port}").start()
    try:
        p = ok(ship())
        assert "nothing new" in p.stdout and "run requested" in p.stdout
        assert len(manual_jobs(srv)) == 2
        ok(ship())
        assert len(manual_jobs(srv)) == 2 and shipped_lines(dest) == [event(k) for k in range(10)]
        check_table(srv, range(10), 2)
    finally:
        srv.stop()


def test_lost_state_resumes_from_the_copy_in_the_destination(local, tmp_path):
    srv, dest = local
    ship = shipper(tmp_path, srv, dest)
    log = tmp_path / "events.log"
    append(log, lines(range(10)))
    ok(ship())
    os.unlink(ship.state)
    append(log, lines(range(10, 15)))
    p = ok(ship())
    assert "resuming from its copy" in p.stderr
    assert shipped_lines(dest) == [event(k) for k in range(15)]
    # Another host's log under the same name is refused, not overwritten.
    other = Shipper(tmp_path / "other.log", dest.to, tmp_path / "other.json", extra=["--name", "events"])
    append(tmp_path / "other.log", event(99))
    p = other()
    assert p.returncode == 2 and "give this log its own --name" in p.stderr


def test_a_second_call_while_one_runs_does_nothing(local, tmp_path):
    srv, dest = local
    log = tmp_path / "events.log"
    append(log, lines(range(5)))
    ship = shipper(tmp_path, srv, dest)
    every = ship.popen("--every", "1h")
    try:
        deadline = time.time() + 30
        while len(dest.objects()) < 1 and time.time() < deadline:
            time.sleep(0.1)
        p = ok(ship())
        assert "another karet ship" in p.stderr
    finally:
        every.send_signal(signal.SIGTERM)
        assert every.wait(30) == 0
    assert shipped_lines(dest) == [event(k) for k in range(5)]


def test_every_ships_on_its_own(local, tmp_path):
    srv, dest = local
    log = tmp_path / "events.log"
    append(log, lines(range(5)))
    every = shipper(tmp_path, srv, dest).popen("--every", "1s")
    try:
        deadline = time.time() + 60
        while len(shipped_lines(dest)) < 5 and time.time() < deadline:
            time.sleep(0.1)
        append(log, lines(range(5, 9)))
        while len(shipped_lines(dest)) < 9 and time.time() < deadline:
            time.sleep(0.1)
    finally:
        every.send_signal(signal.SIGTERM)
        assert every.wait(30) == 0
    assert shipped_lines(dest) == [event(k) for k in range(9)]


# ---- CSV ----


def test_csv_log_every_upload_starts_with_the_header(tmp_path):
    srv = Server(tmp_path / "data", tmp_path / "lake").start()
    try:
        make_pipeline(srv.worker(), config=ndjson_config(fmt="csv"))
        dest = LocalDest(tmp_path / "lake")
        ship = shipper(tmp_path, srv, dest, extra=["--format", "csv", "--max-file-size", "300"])
        log = tmp_path / "events.log"
        header = "time,user,value\n"
        append(log, header + lines(range(20), csv_event))
        ok(ship())
        append(log, lines(range(20, 25), csv_event) + '2026-11-12T09:00:00,"multi\nline",1.5\n')
        os.rename(log, f"{log}.1")
        append(log, header + lines(range(25, 30), csv_event))
        ok(ship())
        got = shipped_lines(dest, header=header)
        want = lines(range(25), csv_event) + '2026-11-12T09:00:00,"multi\nline",1.5\n' + lines(range(25, 30), csv_event)
        assert "".join(got) == want
        assert all(len(b) <= 300 for _, b in dest.objects())
        assert len(manual_jobs(srv)) == 2
        wait_jobs(srv.worker(), lambda js: finished(js, 2))
        assert len(table_rows(srv)) == 31
    finally:
        srv.stop()


def test_csv_header_given_when_the_log_has_none(local, tmp_path):
    srv, dest = local
    ship = shipper(tmp_path, srv, dest, extra=["--format", "csv", "--header", "time,user,value"])
    log = tmp_path / "events.log"
    append(log, lines(range(4), csv_event))
    ok(ship())
    append(log, lines(range(4, 6), csv_event))
    ok(ship())
    assert "".join(shipped_lines(dest, header="time,user,value\n")) == lines(range(6), csv_event)


def test_gzip(local, tmp_path):
    srv, dest = local
    ship = shipper(tmp_path, srv, dest, extra=["--gzip"])
    append(tmp_path / "events.log", lines(range(1000)))
    ok(ship())
    (name, body), = dest.objects()
    assert name.endswith(".ndjson.gz") and len(body) < len(lines(range(1000))) / 3
    assert data_of(name, body).decode() == lines(range(1000))
    check_table(srv, range(1000), 1)


# ---- S3: the destination in moto, karet serve's lake there too ----


@pytest.fixture
def s3_lake(tmp_path, s3_server):
    prefix = f"lake-{os.urandom(4).hex()}"
    srv = Server(tmp_path / "data", f"s3://{s3_server.bucket}/{prefix}", options=s3_server.options).start()
    make_pipeline(srv.worker(), config=ndjson_config())
    yield srv, S3Dest(s3_server, prefix)
    srv.stop()


def test_s3_appended_lines_arrive_exactly_once(s3_lake, s3_server, tmp_path):
    srv, dest = s3_lake
    ship = shipper(tmp_path, srv, dest, options=s3_server.options)
    log = tmp_path / "events.log"
    for rnd in range(3):
        append(log, lines(range(rnd * 50, rnd * 50 + 50)) + ("{\"half" if rnd == 2 else ""))
        ok(ship())
    assert shipped_lines(dest) == [event(k) for k in range(150)]
    assert len(manual_jobs(srv)) == 3
    check_table(srv, range(150), 3)


def test_s3_destination_down_then_back(s3_lake, s3_server, tmp_path):
    srv, dest = s3_lake
    with FaultProxy(s3_server.endpoint) as proxy:
        ship = shipper(tmp_path, srv, dest, options=s3_server.through(proxy))
        log = tmp_path / "events.log"
        append(log, lines(range(10)))
        ok(ship())
        forward = proxy._forward
        proxy.refuse(lambda path: True, 503)
        append(log, lines(range(10, 20)))
        p = ship()
        assert p.returncode == 3 and "Nothing moved on" in p.stderr
        assert len(manual_jobs(srv)) == 1
        proxy._forward = forward  # back
        ok(ship())
    assert shipped_lines(dest) == [event(k) for k in range(20)]
    assert len(manual_jobs(srv)) == 2
    check_table(srv, range(20), 2)


def test_s3_kill_between_upload_and_state_save(s3_lake, s3_server, tmp_path):
    """The upload lands, but the answer never comes back: the process is
    killed before it saves the position. The next call sends those lines
    again (under a new name); the dedup keys keep each line once in the table."""
    srv, dest = s3_lake
    with FaultProxy(s3_server.endpoint) as proxy:
        ship = shipper(tmp_path, srv, dest, options=s3_server.through(proxy))
        log = tmp_path / "events.log"
        append(log, lines(range(10)))
        ok(ship())
        forward = proxy._forward

        async def hold_uploads(method, path, headers, body):
            answer = await forward(method, path, headers, body)
            if method == "PUT" and "/events_" in path:
                await asyncio.sleep(120)  # landed; the caller never hears
            return answer

        proxy._forward = hold_uploads
        append(log, lines(range(10, 20)))
        p = ship.popen()
        deadline = time.time() + 60
        while len(dest.objects()) < 2 and time.time() < deadline:
            time.sleep(0.05)
        assert len(dest.objects()) == 2
        p.kill()
        p.wait()
        proxy._forward = forward
        append(log, lines(range(20, 25)))
        ok(ship())
    got = shipped_lines(dest)
    assert sorted(set(got)) == sorted(event(k) for k in range(25))
    assert len(got) == 35  # lines 10-19 twice: sent again, never skipped
    check_table(srv, range(25), 2)


# ---- a 1 GB backlog ----


@pytest.mark.slow
def test_one_gigabyte_backlog_is_split_into_files(local, tmp_path):
    srv, dest = local
    log = tmp_path / "events.log"
    block = lines(range(20000)).encode()  # about 1.5 MB of distinct lines
    n = -(-(1 << 30) // len(block))
    digest = hashlib.sha256()
    with open(log, "wb") as f:
        for _ in range(n):
            f.write(block)
            digest.update(block)
    size = os.path.getsize(log)
    ship = shipper(tmp_path, srv, dest)
    p = ok(ship(timeout=1800))
    d = dest.lake / PREFIX
    names = sorted(x.name for x in d.iterdir() if x.is_file())
    assert len(names) == -(-size // (64 << 20)) or len(names) == -(-size // (64 << 20)) + 1, p.stdout
    got = hashlib.sha256()
    for name in names:
        with open(d / name, "rb") as f:
            body = f.read()
        assert 0 < len(body) <= 64 << 20 and body.endswith(b"\n")
        got.update(body)
    assert got.hexdigest() == digest.hexdigest()
    assert len(manual_jobs(srv)) == 1 and f"in {len(names)} files" in p.stdout
    assert "nothing new" in ok(ship()).stdout
