"""`karet serve` end to end: real servers started here, real HTTP. Debounce of
bucket events (5 s quiet, 30 s at most), every route against every kind of
caller, passwords (checked against Python's scrypt) and sessions, config
versions, the job event stream, hostile requests."""

import base64
import hashlib
import json
import os
import socket
import subprocess
import time
from pathlib import Path
import urllib.request

import pytest

from conftest import ROOT

from karet_service import (PREFIX, SLUG, TOKEN, Client, Server, finished, iso_ms, jobs, karet_bin,
                           make_pipeline, pipeline_config, post_event, s3_event, table, wait_jobs)


@pytest.fixture
def local(tmp_path):
    srv = Server(tmp_path / "data", tmp_path / "lake").start()
    yield srv
    srv.stop()


# ---- debounce ----
#
# The windows are the service's settings KARET_DEBOUNCE_QUIET_MS (5 s) and
# KARET_DEBOUNCE_MAX_MS (30 s). Their defaults are read off the jobs list's
# `scheduled.runAt` at once; the behaviour over time runs with shorter windows
# (the same code, a smaller scale), so the tests do not wait out 30 s.

QUIET, CAP = 3.0, 7.0  # the shorter windows, in seconds


def short_windows(tmp_path, quiet=QUIET, cap=CAP):
    return Server(tmp_path / "data", tmp_path / "lake",
                  env={"KARET_DEBOUNCE_QUIET_MS": str(int(quiet * 1000)),
                       "KARET_DEBOUNCE_MAX_MS": str(int(cap * 1000))}).start()


def scheduled(api):
    r = api.get(f"/api/p/{SLUG}/jobs")
    assert r.status == 200, r.body
    return r.json()["scheduled"]


def test_the_default_windows_are_5_s_quiet_and_30_s_at_most(tmp_path):
    srv = Server(tmp_path / "data", tmp_path / "lake").start()
    try:
        api = srv.worker()
        make_pipeline(api)
        sent = time.time()
        assert post_event(api, s3_event("lake", f"{PREFIX}a.csv")).json()["scheduled"] == [SLUG]
        got = scheduled(api)
        assert got["events"] == 1 and sent + 5 - 0.01 <= iso_ms(got["runAt"]) <= time.time() + 5, got
    finally:
        srv.stop()
    # A quiet window longer than the cap: the cap alone sets the run's time.
    env = {"KARET_DEBOUNCE_QUIET_MS": "600000"}
    srv = Server(tmp_path / "data", tmp_path / "lake", env=env).start()
    try:
        api = srv.worker()
        sent = time.time()
        assert post_event(api, s3_event("lake", f"{PREFIX}b.csv")).json()["scheduled"] == [SLUG]
        got = scheduled(api)
        assert got["events"] == 1 and sent + 30 - 0.01 <= iso_ms(got["runAt"]) <= time.time() + 30, got
    finally:
        srv.stop()


def test_events_spread_over_twice_the_quiet_window_make_one_run(tmp_path):
    srv = short_windows(tmp_path, cap=600)
    try:
        api = srv.worker()
        make_pipeline(api)
        for i in range(10):  # one every fifth of the window, for two windows
            last = time.time()
            key = f"{PREFIX}d_{i:04d}.csv"
            assert post_event(api, s3_event("lake", key)).json()["scheduled"] == [SLUG]
            time.sleep(QUIET / 5)
        js = wait_jobs(api, lambda js: finished(js, 1))
        # Nothing is left waiting to run: no second run can come.
        r = api.get(f"/api/p/{SLUG}/jobs?pageSize=100").json()
        js = r["jobs"]
        assert r["scheduled"] is None and len(js) == 1 and js[0]["trigger"] == "webhook", r
        assert iso_ms(js[0]["enqueuedAt"]) >= last + QUIET - 0.01
    finally:
        srv.stop()


def test_events_without_pause_run_at_the_max_wait(tmp_path):
    srv = short_windows(tmp_path)
    try:
        api = srv.worker()
        make_pipeline(api)
        key = f"{PREFIX}steady.csv"
        first, sent = time.time(), []
        # Events every tenth of the quiet window until a run is queued (the
        # backstop: four times the cap).
        while not jobs(api):
            assert time.time() < first + 4 * CAP, "no run was queued"
            sent.append(time.time())
            post_event(api, {"events": [{"eventName": "OBJECT_CREATED_PUT", "bucket": "any",
                                         "object": {"key": key}}]})
            time.sleep(QUIET / 10)
        at = iso_ms(jobs(api)[-1]["enqueuedAt"])
        # Not before the cap, and while events still arrived: less than the
        # quiet window after the last event before it, so only the cap can
        # have fired it.
        prior = max(t for t in sent if t <= at)
        assert first + CAP - 0.01 <= at < prior + QUIET, (first, at, sent)
    finally:
        srv.stop()


def test_a_stop_turns_pending_upload_batches_into_jobs(tmp_path):
    srv = Server(tmp_path / "data", tmp_path / "lake").start()
    api = srv.worker()
    make_pipeline(api)
    assert post_event(api, s3_event("lake", f"{PREFIX}late.csv")).json()["scheduled"] == [SLUG]
    assert srv.stop() == 0  # before the 5 s passed: the batch must not be lost
    queued = [e for e in srv.job_events() if e["status"] == "queued"]
    assert len(queued) == 1 and queued[0]["trigger"] == "webhook"
    srv = Server(tmp_path / "data", tmp_path / "lake").start()
    try:
        js = wait_jobs(srv.worker(), lambda js: finished(js, 1))
        assert [j["id"] for j in js] == [queued[0]["id"]] and js[0]["attempts"] == 1
    finally:
        srv.stop()


def test_jobs_are_paged_newest_first_by_keyset(local):
    api = local.worker()
    make_pipeline(api)
    made = [api.post(f"/api/p/{SLUG}/jobs").json()["id"] for _ in range(23)]
    seen, before = [], None
    while True:
        page = api.get(f"/api/p/{SLUG}/jobs?pageSize=10" + (f"&before={before}" if before else "")).json()
        seen += [j["id"] for j in page["jobs"]]
        before = page["nextBefore"]
        if before is None:
            break
    assert seen == made[::-1]
    # Jobs made in one millisecond still have distinct, ordered enqueue times.
    times = [j["enqueuedAt"] for j in api.get(f"/api/p/{SLUG}/jobs?pageSize=100").json()["jobs"]]
    assert times == sorted(set(times), reverse=True)
    assert len(api.get(f"/api/p/{SLUG}/jobs").json()["jobs"]) == 23  # default page: 25
    assert len(api.get(f"/api/p/{SLUG}/jobs?pageSize=1000").json()["jobs"]) == 23  # capped at 100
    # The peer's cursor, an enqueue time, works too.
    jobs_all = api.get(f"/api/p/{SLUG}/jobs?pageSize=100").json()["jobs"]
    older = api.get(f"/api/p/{SLUG}/jobs?pageSize=100&before={jobs_all[0]['enqueuedAt']}").json()["jobs"]
    assert all(j["enqueuedAt"] < jobs_all[0]["enqueuedAt"] for j in older) and len(older) >= 1


def test_lake_files(tmp_path):
    srv = Server(tmp_path / "data", tmp_path / "lake", extra=["--max-upload", "1000000"]).start()
    try:
        api = srv.worker()
        make_pipeline(api)
        body = b"time,user,value\n" + b"2026-11-12T03:00:00,u1,1.5\n" * 1000
        r = api.request("PUT", f"/api/lake?key={PREFIX}f.csv", raw=body)
        assert r.status == 200 and r.json() == {"ok": True, "key": f"{PREFIX}f.csv", "size": len(body),
                                                "scheduled": [SLUG]}
        assert (tmp_path / "lake" / PREFIX / "f.csv").read_bytes() == body
        assert api.request("PUT", "/api/lake?key=notes/readme.txt", raw=b"hi").json()["scheduled"] == []
        listing = api.get(f"/api/lake?prefix={PREFIX}").json()
        assert [f["key"] for f in listing["files"]] == [f"{PREFIX}f.csv"]
        assert listing["files"][0]["size"] == len(body) and listing["files"][0]["lastModified"]
        assert api.get("/api/lake").json()["folders"] == ["notes/", "pipelines/"]
        r = api.get(f"/api/lake/object?key={PREFIX}f.csv")
        assert r.body == body and 'filename="f.csv"' in r.headers["Content-Disposition"]
        for bad in ("../x", "/etc/passwd", "a//b", "a/./b", "a/", "warehouse/web.events/x"):
            r = api.request("PUT", f"/api/lake?key={bad}", raw=b"x")
            assert r.status == 422 and r.json()["error"] in ("invalid_key", "reserved_key"), (bad, r.body)
        assert api.get("/api/lake?prefix=../").status == 422
        assert api.get("/api/lake?prefix=nofolder").status == 422
        # Over --max-upload: refused, and nothing is left at the key.
        r = raw_http(srv.port, b"PUT /api/lake?key=big/x.csv HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                     + TOKEN.encode() + b"\r\nContent-Length: 1000001\r\nConnection: close\r\n\r\n")
        assert r.startswith(b"HTTP/1.1 413")
        chunk = b"y" * 100_000
        body2 = b"".join(b"%x\r\n" % len(chunk) + chunk + b"\r\n" for _ in range(12)) + b"0\r\n\r\n"
        r = raw_http(srv.port, b"PUT /api/lake?key=big/y.csv HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                     + TOKEN.encode() + b"\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + body2)
        assert r.startswith(b"HTTP/1.1 413")
        assert api.get("/api/lake/object?key=big/y.csv").status == 404
        assert not (tmp_path / "lake" / "big").exists() or not any((tmp_path / "lake" / "big").iterdir())
        assert api.request("DELETE", f"/api/lake?key={PREFIX}f.csv").status == 200
        assert api.get(f"/api/lake/object?key={PREFIX}f.csv").status == 404
        assert api.request("DELETE", f"/api/lake?key={PREFIX}f.csv").status == 200  # already gone: fine
    finally:
        srv.stop()


# ---- routes x callers ----

ROUTES = [
    ("GET", "/api/pipelines", None, "viewer"),
    ("POST", "/api/pipelines", {"name": "x"}, "editor"),
    ("GET", "/api/pipelines/web", None, "viewer"),
    ("PATCH", "/api/pipelines/web", {"name": "Web"}, "admin"),
    ("DELETE", "/api/pipelines/nope", None, "admin"),
    ("GET", "/api/p/web/config", None, "viewer"),
    ("PUT", "/api/p/web/config", {}, "editor"),
    ("GET", "/api/p/web/config/history", None, "viewer"),
    ("GET", "/api/p/web/config/history/1", None, "viewer"),
    ("POST", "/api/p/web/config/history/1/revert", None, "editor"),
    ("POST", "/api/p/web/validate", {}, "viewer"),
    ("POST", "/api/expressions/parse", {"texts": ["a + 1"]}, "viewer"),
    ("POST", "/api/expressions/format", {"exprs": [{"kind": "null"}]}, "viewer"),
    ("PATCH", "/api/account", {"currentPassword": "x", "newPassword": "short"}, "viewer"),
    ("GET", "/api/p/web/jobs", None, "viewer"),
    ("POST", "/api/p/web/jobs", None, "editor"),
    ("GET", "/api/p/web/jobs/job-1-x", None, "viewer"),
    ("POST", "/api/p/web/jobs/job-1-x/cancel", None, "editor"),
    ("GET", "/api/p/web/tables", None, "viewer"),
    ("GET", "/api/p/web/tables/events/rows", None, "viewer"),
    ("POST", "/api/p/web/query", {"sql": "SELECT 1"}, "viewer"),
    ("GET", "/api/p/web/queries", None, "viewer"),
    ("POST", "/api/p/web/queries", {"name": "q", "sql": "SELECT 1"}, "editor"),
    ("GET", "/api/p/web/queries/q", None, "viewer"),
    ("DELETE", "/api/p/web/queries/zz", None, "editor"),
    ("GET", "/api/lake", None, "viewer"),
    ("PUT", "/api/lake?key=other/x.txt", b"x", "editor"),
    ("DELETE", "/api/lake?key=other/y.txt", None, "editor"),
    ("GET", "/api/lake/object?key=other/x.txt", None, "viewer"),
    ("GET", "/api/users", None, "admin"),
    ("POST", "/api/users", {"username": "zed", "password": "12345678", "role": "viewer"}, "admin"),
    ("GET", "/api/users/zed", None, "admin"),
    ("PATCH", "/api/users/zed", {"role": "editor"}, "admin"),
    ("DELETE", "/api/users/nobody", None, "admin"),
]
RANK = {"viewer": 1, "editor": 2, "admin": 3}


def sign_in(srv, username, password):
    r = srv.client().post("/api/auth/sign-in/username", {"username": username, "password": password})
    assert r.status == 200, r.body
    cookie = r.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=" in cookie
    return cookie.split(";")[0].split("=", 1)[1]


def test_every_route_against_every_caller(local):
    api = local.worker()
    make_pipeline(api)
    for name, role in (("vera", "viewer"), ("eddy", "editor"), ("ada", "admin")):
        assert api.post("/api/users", {"username": name, "password": "password-" + name, "role": role}).status == 201
    callers = {
        "none": (Client(local.base), 0),
        "bad": (Client(local.base, token="wrong"), 0),
        "viewer": (Client(local.base, cookie=sign_in(local, "vera", "password-vera")), 1),
        "editor": (Client(local.base, cookie=sign_in(local, "eddy", "password-eddy")), 2),
        "admin": (Client(local.base, cookie=sign_in(local, "ada", "password-ada")), 3),
        "worker": (api, 3),
    }
    for method, path, body, need in ROUTES:
        for who, (client, rank) in callers.items():
            raw = body if isinstance(body, bytes) else None
            r = client.request(method, path, None if raw else body, raw=raw)
            where = f"{method} {path} as {who}: {r.status} {r.body[:200]!r}"
            if rank == 0:
                assert r.status == 401, where
                assert r.json()["error"] == "unauthorized", where
            elif rank < RANK[need]:
                assert r.status == 403, where
                assert r.json()["error"] == "forbidden", where
            else:
                assert r.status not in (401, 403), where
    # Public routes answer everyone.
    assert Client(local.base).get("/health").status == 200
    assert Client(local.base).get("/api/auth/me").status == 401
    # A cookie write from another origin is refused.
    other = Client(local.base, cookie=callers["admin"][0].cookie, origin=False)
    r = other.request("POST", f"/api/p/{SLUG}/jobs", headers={"Origin": "http://evil.example"})
    assert r.status == 403 and r.json()["error"] == "cross_origin"


def test_webhook_fails_closed_without_a_secret(tmp_path):
    srv = Server(tmp_path / "data", tmp_path / "lake", env={"KARET_WEBHOOK_SECRET": ""}).start()
    try:
        r = srv.client().post("/events/s3", {"Records": []}, headers={"X-Karet-Webhook-Secret": ""})
        assert r.status == 401
        r = srv.client().post("/events/s3", {"Records": []}, headers={"Authorization": "Bearer "})
        assert r.status == 401
    finally:
        srv.stop()
    srv = Server(tmp_path / "data", tmp_path / "lake").start()
    try:
        assert srv.client().post("/events/s3", {"Records": []}, headers={"X-Karet-Webhook-Secret": "no"}).status == 401
        assert post_event(srv.client(), {"Records": []}).json() == {"received": 0, "scheduled": []}
    finally:
        srv.stop()


def test_a_refused_caller_is_told_why_and_what_to_do(tmp_path):
    """Each 401 names what was wrong with the credentials and what to do: the
    empty token of a shell without KARET_WORKER_TOKEN (a second terminal),
    another token, another scheme, an ended session, a server started
    without a token, and the same for the webhook's secret."""
    def refused(srv, headers, path=f"/api/p/{SLUG}/jobs", method="GET"):
        r = Client(srv.base).request(method, path, {"Records": []} if method == "POST" else None, headers=headers)
        assert r.status == 401 and r.json()["error"] == "unauthorized", r.body
        return r.json()["message"]

    srv = Server(tmp_path / "data", tmp_path / "lake").start()
    try:
        assert "sign in (POST /api/auth/sign-in/username) or send the worker token" in refused(srv, {})
        assert "sign in (POST" in refused(srv, {}, path="/api/no/such/route")
        for empty in ("Bearer ", "Bearer", "bearer  "):
            assert "the bearer token is empty: is KARET_WORKER_TOKEN set in this shell?" in refused(
                srv, {"Authorization": empty}), empty
        assert "is not this server's KARET_WORKER_TOKEN" in refused(srv, {"Authorization": "Bearer nope"})
        assert 'must be "Bearer <token>"' in refused(srv, {"Authorization": "Basic YWRhOnB3"})
        assert "the session expired or was ended" in refused(srv, {"Cookie": "karet_session=gone"})
        assert "send the webhook secret (KARET_WEBHOOK_SECRET)" in refused(srv, {}, "/events/s3", "POST")
        assert "is not this server's KARET_WEBHOOK_SECRET" in refused(
            srv, {"X-Karet-Webhook-Secret": "nope"}, "/events/s3", "POST")
    finally:
        srv.stop()
    srv = Server(tmp_path / "data", tmp_path / "lake", env={"KARET_WORKER_TOKEN": "", "KARET_WEBHOOK_SECRET": ""}).start()
    try:
        assert "started without KARET_WORKER_TOKEN" in refused(srv, {"Authorization": f"Bearer {TOKEN}"})
        assert "started without KARET_WEBHOOK_SECRET" in refused(
            srv, {"X-Karet-Webhook-Secret": "x"}, "/events/s3", "POST")
    finally:
        srv.stop()


def test_json_replies_end_with_a_newline(local):
    """What curl prints ends its line: the next reply or the shell's prompt
    does not run on after it."""
    for r in (local.worker().get("/api/pipelines"), Client(local.base).get("/api/pipelines")):
        assert r.body.endswith(b"}\n") and r.body.count(b"\n") == 1, r.body
        json.loads(r.body)


# ---- passwords and sessions ----


def hash_password(password):
    out = subprocess.run([karet_bin(), "hash-password"], input=password + "\n", capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


def test_hash_password_is_the_peers_scrypt_format(tmp_path):
    h = hash_password("correct horse")
    kind, n, r, p, salt, key = h.split("$")
    assert (kind, n, r, p) == ("scrypt", "131072", "8", "1")
    salt, key = base64.b64decode(salt), base64.b64decode(key)
    assert len(salt) == 16 and len(key) == 64
    # An independent oracle: Python's scrypt gives the same key.
    assert hashlib.scrypt(b"correct horse", salt=salt, n=131072, r=8, p=1, maxmem=256 << 20, dklen=64) == key
    srv = Server(tmp_path / "data", tmp_path / "lake",
                 env={"KARET_ADMIN_USERNAME": "boss", "KARET_ADMIN_PASSWORD_HASH": h}).start()
    try:
        cookie = sign_in(srv, "boss", "correct horse")
        me = Client(srv.base, cookie=cookie).get("/api/auth/me").json()
        assert me["user"] == {"username": "boss", "role": "admin", "service": False}
        r = srv.client().post("/api/auth/sign-in/username", {"username": "boss", "password": "wrong horse"})
        assert r.status == 401 and r.json()["error"] == "invalid_credentials"
        # The environment's admin is not edited through the API.
        assert srv.worker().request("PATCH", "/api/users/boss", {"role": "viewer"}).json()["error"] == "bootstrap_admin"
        # Sessions are stored hashed: the token is nowhere in the database.
        db = (tmp_path / "data" / "karet.db").read_bytes()
        db += (tmp_path / "data" / "karet.db-wal").read_bytes() if (tmp_path / "data" / "karet.db-wal").exists() else b""
        assert cookie.encode() not in db
        # Sign-out ends the session.
        assert Client(srv.base, cookie=cookie).post("/api/auth/sign-out").status == 200
        assert Client(srv.base, cookie=cookie).get("/api/auth/me").status == 401
    finally:
        srv.stop()


def test_role_or_password_change_revokes_sessions_and_sign_in_is_throttled(local):
    api = local.worker()
    api.post("/api/users", {"username": "dan", "password": "password-dan", "role": "editor"})
    cookie = sign_in(local, "dan", "password-dan")
    dan = Client(local.base, cookie=cookie)
    assert dan.get("/api/pipelines").status == 200
    assert api.request("PATCH", "/api/users/dan", {"role": "viewer"}).status == 200
    assert dan.get("/api/pipelines").status == 401
    cookie = sign_in(local, "dan", "password-dan")
    assert api.request("PATCH", "/api/users/dan", {"password": "another-password"}).status == 200
    assert Client(local.base, cookie=cookie).get("/api/pipelines").status == 401
    # A bucket of 5 attempts refilled one per 15 s (the timing itself is
    # test_serve_auth.c's, on a fake clock): the first 5 are checked, and the
    # bucket must run dry however slowly a loaded machine verifies each
    # (at 7 s an attempt it takes about 10).
    codes = []
    while len(codes) < 40 and 429 not in codes:
        codes.append(local.client().post("/api/auth/sign-in/username",
                                         {"username": "dan", "password": "nope-nope"}).status)
    assert codes[:5] == [401] * 5 and codes[-1] == 429 and set(codes[:-1]) == {401}, codes
    r = local.client().post("/api/auth/sign-in/username", {"username": "dan", "password": "another-password"})
    assert r.status == 429 and int(r.headers["Retry-After"]) >= 1


# ---- configs ----


def test_config_versions_stale_saves_history_and_revert(local):
    api = local.worker()
    make_pipeline(api)
    r = api.get(f"/api/p/{SLUG}/config")
    assert r.status == 200 and r.headers["X-Karet-Config-Version"] == "1"
    cfg = r.json()
    cfg["analytic_tables"][0]["name"] = "Renamed"
    r = api.put(f"/api/p/{SLUG}/config", cfg, headers={"X-Karet-Config-Version": "1"})
    assert r.status == 200 and r.json()["version"] == 2
    r = api.put(f"/api/p/{SLUG}/config", cfg, headers={"X-Karet-Config-Version": "1"})
    assert r.status == 412 and r.json()["error"] == "stale_config" and r.json()["currentVersion"] == 2
    bad = dict(cfg, surprise=1)
    r = api.put(f"/api/p/{SLUG}/config", bad, headers={"X-Karet-Config-Version": "2"})
    assert r.status == 422 and r.json()["error"] == "invalid_config" and r.json()["problems"]
    assert api.put(f"/api/p/{SLUG}/config", raw=b"{not json", headers={"X-Karet-Config-Version": "2"}).status == 422
    h = api.get(f"/api/p/{SLUG}/config/history").json()
    assert [v["version"] for v in h["versions"]] == [2, 1] and h["current"] == 2
    r = api.post(f"/api/p/{SLUG}/config/history/1/revert")
    assert r.json() == {"ok": True, "version": 3, "revertedFrom": 1, "unchanged": False}
    assert api.get(f"/api/p/{SLUG}/config").json() == pipeline_config()
    assert api.get(f"/api/p/{SLUG}/config/history/9").status == 404


def test_saving_the_live_config_makes_no_version(local):
    """A save whose config is the live one (whatever its key order and
    spacing) is a successful no-op: the live version and its ETag, no new
    version. A precondition is checked first: naming an older version is
    412 even when the content is what is live now."""
    api = local.worker()
    cfg = pipeline_config()
    cfg["mappings"][0]["where"] = {"kind": "gt", "left": {"kind": "col", "name": "value"},
                                   "right": {"kind": "num", "value": 0.3}}
    make_pipeline(api, config=cfg)
    path = f"/api/p/{SLUG}/config"

    def versions():
        return [v["version"] for v in api.get(f"{path}/history").json()["versions"]]

    live = api.get(path)
    assert live.status == 200 and live.headers["ETag"] == '"1"'
    assert b'"value":0.3}' in live.body  # as written, not 0.29999999999999999
    same = json.dumps(live.json(), sort_keys=True, indent=3).encode()
    for headers in ({"X-Karet-Config-Version": "1"}, {"If-Match": '"1"'}, {}):
        r = api.put(path, raw=same, headers=headers)
        assert r.status == 200 and r.json() == {"ok": True, "version": 1, "unchanged": True}, r.body
        assert r.headers["X-Karet-Config-Version"] == "1" and r.headers["ETag"] == '"1"'
    assert versions() == [1]
    # A number of the other type is a change: num 1 is an integer, 1.0 a float.
    cfg["mappings"][0]["where"]["right"]["value"] = 1
    r = api.put(path, cfg, headers={"If-Match": '"1"'})
    assert r.status == 200 and r.json() == {"ok": True, "version": 2, "unchanged": False}
    r = api.put(path, raw=json.dumps(cfg).replace('"value": 1}', '"value": 1.0}').encode(),
                headers={"If-Match": '"2"'})
    assert r.status == 200 and r.json() == {"ok": True, "version": 3, "unchanged": False}, r.body
    # Stale: version 3 is live; a save from version 2 with version 3's content is still 412.
    r = api.put(path, raw=api.get(path).body, headers={"X-Karet-Config-Version": "2"})
    assert r.status == 412 and r.json()["currentVersion"] == 3 and r.headers["ETag"] == '"3"'
    # A revert to the live version's content makes no version either.
    r = api.post(f"{path}/history/3/revert")
    assert r.json() == {"ok": True, "version": 3, "revertedFrom": 3, "unchanged": True}
    assert versions() == [3, 2, 1]
    r = api.post(f"{path}/history/1/revert")
    assert r.json() == {"ok": True, "version": 4, "revertedFrom": 1, "unchanged": False}
    assert versions() == [4, 3, 2, 1]


# ---- lake files and SQL ----



# ---- restarts ----





# ---- load and hostile requests ----



def raw_http(port, data, read=True):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(data)
        if not read:
            return b""
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
        return out


def test_hostile_requests_get_clear_4xx_and_lose_nothing(tmp_path):
    srv = Server(tmp_path / "data", tmp_path / "lake").start()
    try:
        api = srv.worker()
        make_pipeline(api)
        assert api.post("/api/pipelines", raw=b"{\"name\": ").status == 422
        assert api.post("/api/pipelines", {"name": 5}).json()["error"] == "invalid_name"
        assert api.post("/api/pipelines", {"name": "x", "config": []}).json()["error"] == "invalid_config"
        assert api.post("/api/pipelines", {"name": "y", "slug": "../../etc"}).json()["error"] == "invalid_slug"
        assert api.get("/api/nothing/here").status == 404
        assert api.get("/nothing").status == 404
        assert api.request("PATCH", f"/api/p/{SLUG}/jobs").status == 405
        assert api.get(f"/api/p/{SLUG}/jobs?before=nope").status == 400
        # A body without a length, larger than any JSON body may be: read, dropped, 413.
        chunk = b"x" * (1 << 20)
        body = b"".join(b"%x\r\n" % len(chunk) + chunk + b"\r\n" for _ in range(5)) + b"0\r\n\r\n"
        r = raw_http(srv.port, b"POST /api/pipelines HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                     + TOKEN.encode() + b"\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + body)
        assert r.startswith(b"HTTP/1.1 413") and b"too_large" in r
        r = raw_http(srv.port, b"POST /api/pipelines HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode()
                     + b"\r\nContent-Length: 99999999999\r\nConnection: close\r\n\r\n")
        assert r.startswith(b"HTTP/1.1 413")
        # A slow client holding a half-sent request does not hold up others.
        slow = socket.create_connection(("127.0.0.1", srv.port))
        slow.sendall(b"POST /api/p/web/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n")
        assert api.get("/health").status == 200
        # Event envelopes of the wrong shape.
        assert post_event(api, {"nope": 1}).status == 400
        assert post_event(api, {"Records": [1, "x", {"eventName": 3}]}).json() == {"received": 3, "scheduled": []}
        assert api.post(f"/api/p/{SLUG}/jobs").status == 202
        slow.close()
        wait_jobs(api, lambda js: finished(js, 1))
        assert api.get("/health").json()["status"] == "ok"
    finally:
        assert srv.stop() == 0


def test_bare_karet_serve_prints_how_to_sign_in(tmp_path):
    proc = subprocess.Popen([karet_bin(), "serve", "--listen", "127.0.0.1:0"], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={k: v for k, v in os.environ.items() if not k.startswith("KARET_")})
    try:
        banner = [proc.stderr.readline() for _ in range(4)]
        assert banner[0].startswith("Karet is serving http://127.0.0.1:")
        password = banner[3].split("with password ")[1].split()[0]
        port = int(banner[0].strip().rsplit(":", 1)[1])
        srv = Server(tmp_path / "karet-data", tmp_path / "karet-lake")
        srv.base, srv.port = f"http://127.0.0.1:{port}", port
        cookie = sign_in(srv, "admin", password)
        assert Client(srv.base, cookie=cookie).get("/api/pipelines").json() == {"pipelines": []}
        assert (tmp_path / "karet-data" / "karet.db").exists() and (tmp_path / "karet-lake").is_dir()
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_pipelines_from_templates(local):
    api = local.worker()
    names = sorted(p.stem for p in (ROOT / "karet" / "templates").glob("*.json")) + ["blank", "csv_events"]
    for i, name in enumerate(names):
        r = api.post("/api/pipelines", {"name": f"From {name}", "slug": f"t{i}", "template": name})
        assert r.status == 200, (name, r.body)
        cfg = api.get(f"/api/p/t{i}/config").json()
        for src in cfg["source_containers"]:
            assert src["path_prefix"].startswith(f"pipelines/t{i}/"), (name, src)
        assert api.post(f"/api/p/t{i}/validate", cfg).json() == {"ok": True, "problems": []}
    r = api.post("/api/pipelines", {"name": "x", "template": "nope"})
    assert r.status == 422 and r.json()["error"] == "invalid_template"
    assert api.post("/api/pipelines", {"name": "From blank", "slug": "t0"}).json()["error"] == "already_exists"
    listed = api.get("/api/pipelines").json()["pipelines"]
    assert sorted(p["slug"] for p in listed) == [f"t{i}" for i in range(len(names))]
    assert api.request("PATCH", "/api/pipelines/t0", {"name": "Renamed"}).json()["name"] == "Renamed"
    assert api.request("PATCH", "/api/pipelines/t0", {"newSlug": "zz"}).json()["error"] == "slug_immutable"
    assert api.request("DELETE", "/api/pipelines/t0").json()["ok"] is True
    assert api.get("/api/p/t0/config").status == 404


def tl_table(tmp_path, lake, name, rows):
    """A table made with the timelake CLI (not by a run), to test the read side alone."""
    cli = str(Path(karet_bin()).parent / "timelake")
    wh = str(lake / "warehouse")
    subprocess.run([cli, "create", name, "--lake", wh, "--schema", "time:string,user:string,value:float64"],
                   check=True, capture_output=True)
    f = tmp_path / f"{name}.csv"
    f.write_text("time,user,value\n" + "".join(f"2026-11-12T03:00:{i % 60:02d},u{i},{i}.5\n" for i in range(rows)))
    subprocess.run([cli, "append", str(f), "--table", name, "--lake", wh], check=True, capture_output=True)


def test_tables_rows_and_read_only_sql(tmp_path):
    srv = Server(tmp_path / "data", tmp_path / "lake").start()
    try:
        api = srv.worker()
        make_pipeline(api)
        make_pipeline(api, "other", pipeline_config("pipelines/other/events/"))
        assert table(api)["rowCount"] == 0 and table(api)["exists"] is False
        tl_table(tmp_path, tmp_path / "lake", "web.events", 30)
        tl_table(tmp_path, tmp_path / "lake", "other.events", 5)
        t = table(api)
        assert (t["rowCount"], t["fileCount"], t["exists"]) == (30, 1, True) and t["bytes"] > 0 and t["version"] >= 1
        assert t["schema"] == pipeline_config()["analytic_tables"][0]["schema"]
        assert abs(iso_ms(t["lastCommitAt"]) - time.time()) < 600 and table(api, "other")["lastCommitAt"]
        rows = api.get(f"/api/p/{SLUG}/tables/events/rows?limit=7").json()
        assert rows["rowCount"] == 7 and rows["columns"] == ["time", "user", "value"]
        assert api.get(f"/api/p/{SLUG}/tables/nope/rows").status == 404
        r = api.post(f"/api/p/{SLUG}/query", {"sql": "SELECT count(*) AS n, sum(value) AS s FROM events"})
        assert r.status == 200 and r.json()["rows"] == [{"n": 30, "s": sum(i + 0.5 for i in range(30))}], r.body
        r = api.post(f"/api/p/{SLUG}/query", {"sql": "SELECT * FROM events ORDER BY user"})
        assert r.json()["rowCount"] == 30 and r.json()["truncated"] is False
        for sql in ("SELECT * FROM other.events", "DELETE FROM events", "COPY events TO '/tmp/x.csv'",
                    "SELECT * FROM read_csv('/etc/passwd')", "INSTALL httpfs", "ATTACH '/tmp/x.db' AS x",
                    "SELECT * FROM duckdb_tables()", "SELEC 1"):
            r = api.post(f"/api/p/{SLUG}/query", {"sql": sql})
            assert r.status == 400 and r.json()["error"] == "query_error", (sql, r.body)
        assert api.post(f"/api/p/{SLUG}/query", {"sql": "  "}).json()["error"] == "missing_sql"
        assert api.post(f"/api/p/{SLUG}/query", {"sql": 5}).json()["error"] == "missing_sql"
        r = api.post(f"/api/p/{SLUG}/query", {"sql": "SELECT 1" + " " * 10000})
        assert r.status == 422 and r.json()["error"] == "query_too_long"
        r = api.post("/api/p/other/query", {"sql": "SELECT count(*) AS n FROM events"})
        assert r.json()["rows"] == [{"n": 5}]
        # Saved queries.
        assert api.post(f"/api/p/{SLUG}/queries", {"name": "All Users", "sql": "SELECT user FROM events"}).status == 201
        assert api.post(f"/api/p/{SLUG}/queries", {"name": "all users", "sql": "SELECT 1"}).status == 409
        assert api.get(f"/api/p/{SLUG}/queries").json()["queries"] == [
            {"id": "all-users", "name": "All Users", "sql": "SELECT user FROM events"}]
        assert api.request("DELETE", f"/api/p/{SLUG}/queries/all-users").status == 200
        assert api.get(f"/api/p/{SLUG}/queries/all-users").status == 404
        # Deleting a pipeline drops its tables, and only its own.
        assert api.request("DELETE", "/api/pipelines/other").json()["tablesDropped"] == 1
        assert table(api)["rowCount"] == 30
    finally:
        srv.stop()


def test_demo_seeds_a_pipeline_and_files_that_start_a_run(tmp_path):
    # The demo's files start a run after a 1 s quiet window, not the default 5 s.
    srv = Server(tmp_path / "data", tmp_path / "lake", extra=["--demo"], env={"KARET_DEBOUNCE_QUIET_MS": "1000"}).start()
    try:
        api = srv.worker()
        assert [p["slug"] for p in api.get("/api/pipelines").json()["pipelines"]] == ["demo"]
        files = api.get("/api/lake?prefix=pipelines/demo/events/").json()["files"]
        assert [f["key"].rsplit("/", 1)[1] for f in files] == ["events_0001.csv", "events_0002.csv",
                                                                "events_0003.csv"]
        js = wait_jobs(api, lambda js: len(js) == 1, slug="demo")
        assert js[0]["trigger"] == "webhook"
    finally:
        srv.stop()
    # A second start with --demo leaves a service that has pipelines alone.
    srv = Server(tmp_path / "data", tmp_path / "lake", extra=["--demo"]).start()
    try:
        assert len(srv.worker().get("/api/pipelines").json()["pipelines"]) == 1
        assert len(jobs(srv.worker(), "demo")) == 1
    finally:
        srv.stop()


def test_job_events_stream(local):
    api = local.worker()
    make_pipeline(api)
    req = urllib.request.Request(f"{local.base}/api/p/{SLUG}/jobs/events",
                                                       headers={"Authorization": f"Bearer {TOKEN}"})
    stream = urllib.request.urlopen(req, timeout=60)
    assert stream.headers["Content-Type"] == "text/event-stream"
    job = api.post(f"/api/p/{SLUG}/jobs").json()
    seen = []
    while not seen or seen[-1]["status"] not in ("completed", "failed"):
        line = stream.readline().decode()
        if line.startswith("data: "):
            rec = json.loads(line[6:])
            assert rec["id"] == job["id"]
            seen.append(rec)
    stream.close()
    assert [s["status"] for s in seen][0] == "queued" and "running" in [s["status"] for s in seen]
