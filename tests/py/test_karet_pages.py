"""Karet's web pages in a real browser (headless Chromium) against a real
`karet serve`: sign in and out, pipelines from templates, the Jobs page live
(the event stream and the polling fallback, the countdown of an upload
batch, the Run button against double clicks), roles (what a viewer is not
offered, the server refuses anyway). Every page visited is screenshotted
and checked for unlabeled controls and console errors."""

import json
import shutil
import time

import pytest
from selenium.webdriver.common.keys import Keys

from karet_browser import Browser, shots_dir
from karet_service import SECRET, Client, Server, post_event, s3_event

USERS = {"ada": ("admin", "password-ada"), "eddy": ("editor", "password-eddy"),
         "vera": ("viewer", "password-vera")}


@pytest.fixture(scope="module")
def users_data(tmp_path_factory):
    """A data folder holding USERS, made once: each password costs scrypt's
    128 MiB and a third of a second, three per test otherwise. Each test's
    server starts on its own copy, as a server restarted on its data would."""
    d = tmp_path_factory.mktemp("users")
    srv = Server(d / "data", d / "lake").start()
    api = srv.worker()
    for name, (role, pw) in USERS.items():
        assert api.post("/api/users", {"username": name, "password": pw, "role": role}).status == 201
    assert srv.stop() == 0
    return d / "data"


@pytest.fixture
def server(tmp_path, users_data):
    shutil.copytree(users_data, tmp_path / "data")
    srv = Server(tmp_path / "data", tmp_path / "lake").start()
    yield srv
    srv.stop()


@pytest.fixture
def browsers(server, request):
    made = []

    def make(user=None, width=1280, height=900):
        b = Browser(server.base, shots_dir(request.node.name), width, height)
        made.append(b)
        if user:
            b.sign_in(user, USERS[user][1])
        return b

    yield make
    for b in made:
        b.quit()


def pick(b, selector, value):
    from selenium.webdriver.support.ui import Select

    Select(b.css(selector)).select_by_value(value)


def create_pipeline(api, name, template):
    r = api.post("/api/pipelines", {"name": name, "template": template})
    assert r.status == 200, r.body
    return r.json()["pipeline"]


# ---- signing in and out ----


def test_sign_in_wrong_then_right_then_out(server, browsers):
    b = browsers()
    b.get("/p/x/jobs")
    assert b.path().startswith("/sign-in?next=%2Fp%2Fx%2Fjobs"), b.path()
    b.check_page("sign-in")
    b.type("#username", "ada")
    b.type("#password", "not-the-password")
    b.expected_network.append("/api/auth/sign-in/username")
    b.css("#sign-in-form button[type=submit]").click()
    err = b.wait(lambda: b.css("#sign-in-error").is_displayed() and b.css("#sign-in-error"), what="the error")
    assert err.text == "Wrong username or password."
    b.check_page("sign-in-wrong-password")
    b.type("#password", USERS["ada"][1])
    b.css("#password").submit()
    # Back where the user was headed: a pipeline that does not exist.
    b.wait(lambda: b.path() == "/p/x/jobs", what="the page asked for")
    assert "No such pipeline" in b.text("main")
    b.expected_network.append("/p/x/jobs")
    b.get("/pipelines")
    assert b.text(".who .user") == "ada" and b.text(".who .badge") == "admin"
    b.css("#sign-out").click()
    b.wait(lambda: b.path().startswith("/sign-in"), what="the sign-in page")
    b.get("/pipelines")
    assert b.path().startswith("/sign-in"), "the session must be gone"


def test_unknown_pages_and_runs_are_pages_too(server, browsers):
    b = browsers("vera")
    b.expected_network += ["/no/such/page", "/p/nope/data", "/jobs/job-0-none"]
    b.get("/no/such/page")
    assert b.text("h1") == "Not found" and b.all("a[href='/pipelines']")
    b.get("/p/nope/data")
    assert b.text("h1") == "No such pipeline"
    slug = create_pipeline(server.worker(), "Events", "csv_events")
    b.get(f"/p/{slug}/jobs/job-0-none")
    assert b.text("h1") == "No such run"
    b.check_page("not-found")
    # An API path stays JSON, whatever the browser accepts.
    assert server.worker().get("/api/nope").json()["error"] == "not_found"


def test_sign_in_keyboard_only(server, browsers):
    from selenium.webdriver.common.keys import Keys

    b = browsers()
    b.get("/sign-in")
    active = b.d.switch_to.active_element
    assert active.get_attribute("id") == "username", "the username field has the focus"
    active.send_keys("eddy", Keys.TAB)
    b.d.switch_to.active_element.send_keys(USERS["eddy"][1], Keys.ENTER)
    b.wait(lambda: b.path() == "/pipelines", what="the pipelines page")
    assert "eddy" in b.text(".who")


# ---- pipelines ----


def test_create_pipelines_from_templates(server, browsers):
    b = browsers("eddy")
    b.check_page("pipelines-empty")
    assert "No pipelines yet" in b.text("main")
    options = [o.get_attribute("value") for o in b.all("#new-template option")]
    assert {"blank", "access_logs", "bank_statements"} <= set(options), options
    b.type("#new-name", "Web <access> logs")
    pick(b, "#new-template", "access_logs")
    b.css("#new-pipeline button[type=submit]").click()
    b.wait(lambda: b.path() == "/p/web-access-logs/editor", what="the new pipeline's editor")
    cfg = server.worker().get("/api/p/web-access-logs/config").json()
    assert cfg["source_containers"][0]["format"] == "ndjson"
    assert cfg["source_containers"][0]["path_prefix"].startswith("pipelines/web-access-logs/")
    b.get("/pipelines")
    b.type("#new-name", "Bank statements")
    pick(b, "#new-template", "bank_statements")
    b.css("#new-pipeline button[type=submit]").click()
    b.wait(lambda: b.path() == "/p/bank-statements/editor", what="the second pipeline")
    cfg = server.worker().get("/api/p/bank-statements/config").json()
    assert cfg["source_containers"][0]["format"] == "csv" and cfg["dimensions"][0]["match"] == "keyword_substring"
    b.get("/pipelines")
    titles = [e.text for e in b.all(".card.pipeline h2")]
    assert titles == ["Bank statements", "Web <access> logs"], titles  # escaped, shown as text
    assert "No runs yet" in b.text(".cards")
    b.check_page("pipelines-two-cards")
    # A name already taken is an error in place, not a lost form.
    b.type("#new-name", "Bank statements")
    b.expected_network.append("/api/pipelines")
    b.css("#new-pipeline button[type=submit]").click()
    err = b.wait(lambda: b.css("#new-error").is_displayed() and b.css("#new-error"), what="the error")
    assert "exists" in err.text
    b.check_page("pipelines-name-taken", width=390)


# ---- expressions as text, over HTTP ----


def test_expression_text_api(server):
    api = server.worker()
    texts = ["status >= 500 and not contains(lower(path), \"/health\")", "concat(\" \", a, col(\"b c\"))",
             "if(x < 0, -x, x) * 1.5", "dim_ref(categories, description, \"category\")", "a +", "foo(1)"]
    r = api.post("/api/expressions/parse", {"texts": texts})
    assert r.status == 200
    res = r.json()["results"]
    assert [("expr" in x) for x in res] == [True, True, True, True, False, False]
    assert res[0]["expr"]["kind"] == "and" and res[3]["expr"] == {
        "kind": "dim_ref", "dim_id": "categories", "input": {"kind": "col", "name": "description"}, "value": "category"}
    assert res[4]["position"] == 3 and "ends too soon" in res[4]["error"]
    assert "unknown function foo" in res[5]["error"]
    back = api.post("/api/expressions/format", {"exprs": [x["expr"] for x in res[:4]] + [{"kind": "nope"}]}).json()["results"]
    assert [x.get("text") for x in back[:4]] == [
        "status >= 500 and not contains(lower(path), \"/health\")", "concat(\" \", a, col(\"b c\"))",
        "if(x < 0, 0 - x, x) * 1.5", "dim_ref(categories, description, \"category\")"]
    assert "unknown expression kind" in back[4]["error"]
    assert api.post("/api/expressions/parse", {"texts": "a"}).status == 422
    assert api.post("/api/expressions/parse", {"texts": [1]}).json()["results"][0]["error"] == "each text must be a string"
    assert api.post("/api/expressions/format", {"exprs": ["x"] * 5001}).status == 422


# ---- the Jobs page ----


def job_rows(b):
    return [r for r in b.all("#jobs-live tbody tr[data-status]")]


def test_jobs_page_live_run_button_and_countdown(server, browsers):
    api = server.worker()
    slug = create_pipeline(api, "Events", "csv_events")
    b = browsers("eddy")
    b.get(f"/p/{slug}/jobs")
    assert "No runs yet" in b.text("#jobs-live")
    assert f"pipelines/{slug}/events/" in b.text("#jobs-live")
    b.wait(lambda: "Live" in b.text("#live"), what="the event stream")
    b.check_page("jobs-empty")
    # A double click on Run starts one run, not two, even when the first
    # click's run was answered before the second click came (a fast server,
    # or a loaded machine spreading the clicks): the clicks as the browser
    # delivers them, the second with detail 2, and the page's POSTs counted
    # as it makes them.
    b.js("""window.runPosts = 0;
            const real = window.fetch;
            window.fetch = (url, init) => {
              if (init && init.method === "POST" && /[/]jobs([?]|$)/.test(String(url))) window.runPosts++;
              return real(url, init);
            };""")
    run = b.css("#run")
    click = "arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, detail: arguments[1]}))"
    b.js(click, run, 1)
    b.wait(lambda: len(job_rows(b)) == 1, what="the run to appear")
    b.wait(lambda: b.js("return !arguments[0].disabled", run), what="the Run button to be let go")
    b.js(click, run, 2)  # a listener starts its POST before dispatchEvent returns
    assert b.js("return window.runPosts") == 1
    assert len(api.get(f"/api/p/{slug}/jobs").json()["jobs"]) == 1
    assert len(job_rows(b)) == 1
    # An API call from elsewhere appears without a reload (event stream).
    b.js("window.__marker = 1")
    job = api.post(f"/api/p/{slug}/jobs").json()
    b.wait(lambda: b.all(f"#job-{job['id']}"), what="the second run to appear")
    b.wait(lambda: b.css(f"#job-{job['id']}").get_attribute("data-status") in ("completed", "failed"),
           what="the second run to finish")
    assert b.js("return window.__marker") == 1, "the page must not have reloaded"
    # An upload event: the batch counts down, then its run appears.
    assert post_event(api, s3_event("lake", f"pipelines/{slug}/events/a.csv")).json()["scheduled"] == [slug]
    b.wait(lambda: b.all("#scheduled"), what="the waiting batch")
    countdown = b.text("#scheduled .countdown")
    assert countdown.startswith("runs in ") and countdown.endswith(" s"), countdown
    b.check_page("jobs-countdown")
    b.wait(lambda: not b.all("#scheduled") and len(job_rows(b)) == 3, timeout=30, what="the webhook run")
    # Rows are drawn again as runs change state: each look finds them afresh.
    b.wait(lambda: job_rows(b)[0].find_element("css selector", "td:nth-child(3)").text == "webhook",
           what="the webhook run on top")
    # Open a run: its details; a full run asked for from the checkbox.
    b.css("#full-run").click()
    b.css("#run").click()
    b.wait(lambda: len(job_rows(b)) == 4, what="the full run")
    jobs = api.get(f"/api/p/{slug}/jobs").json()["jobs"]
    assert jobs[0]["clean"] is True and all(not j["clean"] for j in jobs[1:])
    b.wait(lambda: job_rows(b)[0].get_attribute("data-status") in ("completed", "failed"), what="it to finish")
    b.click("#jobs-live tbody tr[data-status] button.toggle")
    b.wait(lambda: (lambda d: d.is_displayed() and "Files processed" in d.text and "a full run" in d.text)(
        b.css(f"#d-{jobs[0]['id']}")), what="the run's details")
    # The opened run is a link: the address names it, a reload shows it open.
    assert b.path() == f"/p/{slug}/jobs?open={jobs[0]['id']}", b.path()
    b.js("window.__marker = 2")
    b.get(b.path())
    opened = b.css(f"#d-{jobs[0]['id']}")
    assert b.js("return window.__marker") is None and opened.is_displayed()
    b.wait(lambda: b.js("return performance.getEntriesByType('resource')"
                        ".some((e) => e.name.includes('fragment=1') && e.responseEnd > 0)"),
           what="the first refresh once the event stream is up")
    b.next_frames()
    assert opened.is_displayed(), "the opened run was drawn again by the first refresh"
    b.check_page("jobs-opened")
    # The opened run stays open when the list refreshes.
    api.post(f"/api/p/{slug}/jobs")
    b.wait(lambda: len(job_rows(b)) == 5, what="a fifth run")
    b.wait(lambda: b.css(f"#d-{jobs[0]['id']}").is_displayed(), what="the details still open")
    # Its own page.
    b.get(f"/p/{slug}/jobs/{jobs[0]['id']}")
    assert "Files processed" in b.text("#job-one")
    b.check_page("job-page")
    b.check_page("jobs-phone", width=390)


def test_jobs_page_polls_without_the_event_stream(server, browsers):
    api = server.worker()
    slug = create_pipeline(api, "Events", "csv_events")
    b = browsers("vera")
    # Block the stream: the page falls back to polling every 5 s.
    b.d.execute_cdp_cmd("Network.enable", {})
    b.d.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/jobs/events*"]})
    b.expected_network.append("/jobs/events")
    b.get(f"/p/{slug}/jobs")
    b.wait(lambda: "every 5 s" in b.text("#live"), what="the polling notice")
    job = api.post(f"/api/p/{slug}/jobs").json()
    b.wait(lambda: b.all(f"#job-{job['id']}"), timeout=15, what="the run to appear by polling")


def two_tables_config():
    """Two sources, each mapped into its own table."""
    cols = [{"name": "time", "type": "string"}, {"name": "user", "type": "string"},
            {"name": "value", "type": "float64"}]
    cfg = {"version": 1, "dimensions": [], "source_containers": [], "mappings": [], "analytic_tables": []}
    for t in ("a", "b"):
        cfg["source_containers"].append({"id": f"src_{t}", "name": t, "path_prefix": f"pipelines/two/{t}/",
                                         "format": "csv", "schema": cols})
        cfg["mappings"].append({"id": f"map_{t}", "name": t, "source_container_id": f"src_{t}",
                                "analytic_table_id": t,
                                "columns": [{"name": c["name"], "expr": {"kind": "col", "name": c["name"]}}
                                            for c in cols]})
        cfg["analytic_tables"].append({"id": t, "name": t, "schema": cols, "partition_keys": [], "dedup_keys": []})
    return cfg


def finished_run(api, slug, clean=False):
    job = api.post(f"/api/p/{slug}/jobs" + ("?clean=true" if clean else "")).json()
    deadline = time.time() + 60
    while time.time() < deadline:
        rec = api.get(f"/api/p/{slug}/jobs/{job['id']}").json()
        if rec["status"] in ("completed", "failed"):
            assert rec["status"] == "completed", rec
            return rec
        time.sleep(0.05)
    raise AssertionError(f"run {job['id']} did not finish")


def test_live_lists_keep_the_rows_that_did_not_change(server, browsers):
    """The live lists put in only what changed: a finished run's row and its
    opened details, and the line of a table no run changed, stay the very
    elements they were while other runs come and go, so nothing a reader (or
    a test) holds is pulled from under it."""
    api = server.worker()
    assert api.post("/api/pipelines", {"name": "Two", "slug": "two", "config": two_tables_config()}).status == 200
    for t, rows in (("a", 3), ("b", 2)):
        body = "time,user,value\n" + "".join(f"2026-11-12T03:1{i}:00,u{i},{i}.5\n" for i in range(rows))
        assert api.put(f"/api/lake?key=pipelines/two/{t}/2026-11-12T0310.csv", raw=body.encode()).status == 200
    first = finished_run(api, "two")
    b = browsers("vera")
    b.get("/p/two/jobs")
    b.wait(lambda: "Live" in b.text("#live"), what="the event stream")
    row = b.css(f"#job-{first['id']}")
    b.click(f"#job-{first['id']} button.toggle")
    details = b.wait(lambda: b.css(f"#d-{first['id']}").is_displayed() and b.css(f"#d-{first['id']}"),
                     what="the run's details")
    second = finished_run(api, "two")
    b.wait(lambda: b.attr(f"#job-{second['id']}", "data-status") == "completed", what="the second run, finished")
    assert row.get_attribute("data-status") == "completed", "the first run's row was drawn again"
    assert details.is_displayed() and "Files processed" in details.text
    # The Data page: a run that adds rows to table b only puts in b's line.
    b.get("/p/two/data")
    line_a = b.css('#table-list li[data-table="a"]')
    assert line_a.find_element("css selector", ".rows").get_attribute("data-rows") == "3"
    assert api.put("/api/lake?key=pipelines/two/b/2026-11-12T0320.csv",
                   raw=b"time,user,value\n2026-11-12T03:20:00,u9,9.5\n").status == 200
    finished_run(api, "two")
    b.wait(lambda: b.attr('#table-list li[data-table="b"] .rows', "data-rows") == "3", what="table b's new count")
    assert line_a.find_element("css selector", ".rows").get_attribute("data-rows") == "3", "a's line was replaced"
    b.check_page("live-lists-kept")


def test_what_a_run_skipped_is_on_the_screen(server, browsers):
    """A run's skipped lines and values read as null are listed where the
    reader sees them (they once shared the skip link's class, which puts it
    9,999 px to the left until focused), each with its file, line and why."""
    api = server.worker()
    slug = create_pipeline(api, "Events", "csv_events")
    body = b"time,user,value\n2026-11-12T03:11:00,bob\n2026-11-12T03:12:00,carol,abc\n"
    assert api.put(f"/api/lake?key=pipelines/{slug}/events/2026-11-12T0310.csv", raw=body).status == 200
    # A file that cannot be read (no column "value"): an error of the run, which the list says.
    assert api.put(f"/api/lake?key=pipelines/{slug}/events/2026-11-12T0320.csv", raw=b"time,user\nx,y\n").status == 200
    run = finished_run(api, slug)
    assert run["partitions_written"] == 1, run  # the table has no partition keys: one partition
    b = browsers("vera")
    for path, opened in ((f"/p/{slug}/jobs/{run['id']}", "#job-one"), (f"/p/{slug}/jobs?open={run['id']}", f"#d-{run['id']}")):
        b.get(path)
        facts = b.js("""return Object.fromEntries([...document.querySelectorAll(arguments[0] + ' dl.facts dt')]
                         .map((dt) => [dt.textContent, dt.nextElementSibling.textContent]));""", opened)
        assert facts["Rows written"] == "1" and facts["Partitions written"] == "1", facts
        shown = b.js("""return [...document.querySelectorAll(arguments[0] + ' ul.problems li.skipped')].map((li) => {
            const r = li.getBoundingClientRect();
            return [li.textContent, r.left >= 0 && r.right <= innerWidth && r.width > 0 && r.height > 0];
        });""", opened)
        key = f"pipelines/{slug}/events/2026-11-12T0310.csv"
        assert [t for t, _ in shown] == [f"{key}:2 — 2 fields, expected 3 (line skipped)",
                                         f"{key}:3 — column value: \"abc\" is not a valid float64 (value read as null)"], shown
        assert all(on_screen for _, on_screen in shown), shown
        assert "Lines skipped and values read as null (2)" in b.text(opened)
        errors = b.js("return [...document.querySelectorAll(arguments[0] + ' ul.problems li:not(.skipped)')]"
                      ".map((li) => li.textContent)", opened)
        assert len(errors) == 1 and errors[0].startswith(key.replace("0310", "0320") + ": the header has no column"), errors
    assert b.text(f"#job-{run['id']} .progress-text") == "2 files · 1 row written · 1 error"
    b.check_page("job-skipped-lines")


def test_jobs_paging_through_many_runs(server, browsers):
    api = server.worker()
    slug = create_pipeline(api, "Events", "csv_events")
    ids = [api.post(f"/api/p/{slug}/jobs").json()["id"] for _ in range(30)]
    b = browsers("vera")
    b.get(f"/p/{slug}/jobs")
    b.wait(lambda: all(r.get_attribute("data-status") not in ("queued", "running") for r in job_rows(b)),
           what="the runs to finish")
    assert len(job_rows(b)) == 25
    assert "Runs 1–25 of 30" in b.text(".pager")
    b.click(".pager a[rel=next]")
    b.wait_ready()
    # The live list may draw its rows again while they are read: each look
    # finds them afresh (a row read once can be gone by the next call).
    want = [f"job-{i}" for i in reversed(ids[:5])]
    b.wait(lambda: [r.get_attribute("id") for r in job_rows(b)] == want, what=f"the second page's runs {want}")
    assert "Runs 26–30 of 30" in b.text(".pager")
    b.check_page("jobs-second-page")


# ---- roles ----


def test_viewer_is_not_offered_what_it_may_not_do_and_is_refused(server, browsers):
    api = server.worker()
    slug = create_pipeline(api, "Events", "csv_events")
    b = browsers("vera")
    b.get("/pipelines")
    assert not b.all("#new-pipeline"), "a viewer is not offered to create a pipeline"
    b.get(f"/p/{slug}/jobs")
    assert not b.all("#run") and not b.all("#full-run"), "a viewer sees no Run button"
    b.check_page("jobs-viewer")
    # A forged request from the viewer's own session is refused by the server.
    b.expected_network.append(f"/api/p/{slug}/jobs")
    res = b.d.execute_async_script(
        """const done = arguments[arguments.length - 1];
           fetch('/api/p/' + arguments[0] + '/jobs', {method: 'POST', credentials: 'same-origin'})
             .then(r => r.json().then(j => done([r.status, j.error])));""", slug)
    assert res == [403, "forbidden"], res
    assert api.get(f"/api/p/{slug}/jobs").json()["jobs"] == []
    # The same with the session cookie from another site (no same Origin).
    c = Client(server.base, cookie=b.cookie(), origin=False)
    assert c.post(f"/api/p/{slug}/jobs", headers={"Origin": "http://evil.example"}).status == 403
    editor = browsers("eddy")
    c = Client(server.base, cookie=editor.cookie(), origin=False)
    r = c.post(f"/api/p/{slug}/jobs", headers={"Origin": "http://evil.example"})
    assert r.status == 403 and r.json()["error"] == "cross_origin"
    assert b.js_errors() == []


# ---- the lake browser ----


def drop_file(b, selector, name, text):
    """Drops a file made in the page onto an element, as a drag from the desktop does."""
    b.js("""const dt = new DataTransfer();
            dt.items.add(new File([arguments[2]], arguments[1], {type: 'text/csv'}));
            const zone = document.querySelector(arguments[0]);
            for (const t of ['dragenter', 'dragover', 'drop'])
              zone.dispatchEvent(new DragEvent(t, {dataTransfer: dt, bubbles: true, cancelable: true}));""",
         selector, name, text)


def test_lake_browser_upload_download_delete(server, browsers, tmp_path):
    api = server.worker()
    slug = create_pipeline(api, "Events", "csv_events")
    prefix = f"pipelines/{slug}/events/"
    b = browsers("eddy")
    b.get("/lake")
    b.check_page("lake-root-empty")
    b.get(f"/lake?prefix={prefix}")
    assert f"feed {'Events'}" in b.text(".feeds") or "feed Events" in b.text(".feeds")
    assert "This folder is empty" in b.text("#lake-live")
    # Pick a file: it uploads with a progress bar, then the listing shows it.
    data = "time,user,value\n" + "".join(f"2026-11-12T03:00:{i:02d},u{i},{i}.5\n" for i in range(40))
    f = tmp_path / "2026-11-12T0300.csv"
    f.write_text(data)
    b.css("#upload-files").send_keys(str(f))
    b.wait(lambda: "done" in b.text("#uploads"), what="the upload to finish")
    assert f"run of {slug} scheduled" in b.text("#uploads")
    bar = b.css("#uploads progress")
    assert bar.get_attribute("value") == bar.get_attribute("max")
    b.wait(lambda: "2026-11-12T0300.csv" in b.text("#lake-live"), what="the file in the listing")
    row = b.css("#lake-live tbody tr")
    assert row.find_element("css selector", "td:nth-child(2)").get_attribute("title") == f"{len(data)} bytes"
    listed = api.get(f"/api/lake?prefix={prefix}").json()["files"]
    assert [x["key"] for x in listed] == [prefix + "2026-11-12T0300.csv"] and listed[0]["size"] == len(data)
    # Drop a second file.
    drop_file(b, "#dropzone", "2026-11-12T0310.csv", "time,user,value\n2026-11-12T03:10:00,z,1\n")
    b.wait(lambda: "2026-11-12T0310.csv" in b.text("#lake-live"), what="the dropped file")
    b.check_page("lake-two-files")
    # Download: the same bytes.
    href = b.css("#lake-live a[download]").get_attribute("href")
    got = b.d.execute_async_script("""const done = arguments[arguments.length - 1];
        fetch(arguments[0]).then(r => r.text()).then(done);""", href)
    assert got == data
    # Delete after a confirmation: Cancel keeps it, Delete removes it.
    b.css("#lake-live button[data-delete]").click()
    b.wait(lambda: b.css("dialog[open]"), what="the confirmation")
    b.check_page("lake-confirm-delete")
    b.css("dialog[open] .actions button:not(.danger)").click()
    assert len(b.all("#lake-live tbody tr")) == 2
    b.css("#lake-live button[data-delete]").click()
    b.css("dialog[open] button.danger").click()
    b.wait(lambda: len(b.all("#lake-live tbody tr")) == 1, what="the row to go")
    assert [x["key"] for x in api.get(f"/api/lake?prefix={prefix}").json()["files"]] == [prefix + "2026-11-12T0310.csv"]
    # Folders are links; the breadcrumbs lead back.
    b.get("/lake?prefix=pipelines/")
    b.css(f'#lake-live a[href="/lake?prefix=pipelines%2F{slug}%2F"]').click()
    b.wait_ready()
    assert b.text(".crumbs strong") == slug
    b.check_page("lake-phone", width=390)


def test_lake_browser_for_a_viewer(server, browsers):
    api = server.worker()
    slug = create_pipeline(api, "Events", "csv_events")
    key = f"pipelines/{slug}/events/a.csv"
    assert api.put(f"/api/lake?key={key}", raw=b"time,user,value\n").status == 200
    b = browsers("vera")
    b.get(f"/lake?prefix=pipelines/{slug}/events/")
    assert "a.csv" in b.text("#lake-live")
    assert not b.all("#dropzone") and not b.all("button[data-delete]"), "a viewer may not upload or delete"
    b.check_page("lake-viewer")
    b.expected_network.append("/api/lake")
    status = b.d.execute_async_script("""const done = arguments[arguments.length - 1];
        fetch('/api/lake?key=' + encodeURIComponent(arguments[0]), {method: 'DELETE'}).then(r => done(r.status));""", key)
    assert status == 403
    assert api.get(f"/api/lake?prefix=pipelines/{slug}/events/").json()["files"]


# ---- the pipeline editor ----


def expr_input(b, column):
    """The expression input of a mapping column (by its table column name)."""
    for row in b.all("#panel .col-row.expr"):
        if row.find_element("css selector", "input").get_attribute("value") == column:
            return row.find_elements("css selector", "input")[1]
    raise AssertionError(f"no column {column}")


def select_node(b, key):
    b.css(f'[data-node="{key}"]').click()
    b.wait(lambda: b.css(f'[data-node="{key}"]').get_attribute("aria-pressed") == "true", what=f"{key} selected")


def test_editor_edit_validate_save_conflict_history_revert(server, browsers):
    api = server.worker()
    slug = create_pipeline(api, "Events", "csv_events")
    b = browsers("eddy")
    b.get(f"/p/{slug}/editor")
    nodes = [n.get_attribute("aria-label") for n in b.all("#graph [data-node]")]
    assert nodes == ["Source Events", "Mapping Events", "Table Events"], nodes
    assert b.all("#graph path.edge") and len(b.all("#graph path.edge")) == 2
    assert "1 source, 1 mapping, 1 table, 0 dimensions." in b.text("#panel")
    b.check_page("editor-start")
    # Keyboard: Tab to the mapping box, Enter opens its panel.
    from selenium.webdriver.common.keys import Keys

    b.css('[data-node="source:0"]').send_keys(Keys.TAB)
    active = b.d.switch_to.active_element
    assert active.get_attribute("data-node") == "mapping:0"
    active.send_keys(Keys.ENTER)
    b.wait(lambda: "Mapping" in b.css("#panel h2").get_attribute("textContent"), what="the mapping panel")
    assert expr_input(b, "value").get_attribute("value") == "value"
    # A broken expression: the error in place, at its character.
    e = expr_input(b, "value")
    e.clear()
    e.send_keys("value *")
    err = b.wait(lambda: [x for x in b.all("#panel .col-row.expr .error") if x.is_displayed()], what="the error")
    assert "ends too soon" in err[0].text and "character 8" in err[0].text
    assert e.get_attribute("aria-invalid") == "true"
    assert "1 problem" in b.css('[data-node="mapping:0"]').get_attribute("aria-label")
    b.check_page("editor-expression-error")
    e.send_keys(" 2")
    b.wait(lambda: not [x for x in b.all("#panel .col-row.expr .error") if x.is_displayed()], what="the error to go")
    w = b.css("#panel .field[data-path='/mappings/0/where'] input")
    w.send_keys("value >= 0 and user != \"bot\"")
    # A problem only validation finds: a column the source does not have.
    u = expr_input(b, "user")
    u.clear()
    u.send_keys("upper(nosuch)")
    b.css("#validate").click()  # at once: it reads the text still waiting for its typing pause
    b.wait(lambda: b.css("#problems").is_displayed(), what="the problems")
    assert "nosuch" in b.text("#problems")
    assert "has-error" in b.css('[data-node="mapping:0"]').get_attribute("class")
    problem = b.wait(lambda: b.all("#panel .problem"), what="the problem beside its field")[0]
    row = problem.find_element("xpath", "./ancestor::*[@data-path][1]")
    assert row.get_attribute("data-path") == "/mappings/0/columns/1", row.get_attribute("data-path")
    b.check_page("editor-validation-problem")
    u = expr_input(b, "user")  # the panel was drawn again with the problem
    u.clear()
    u.send_keys("upper(user)")
    b.css("#validate").click()
    b.wait(lambda: not b.css("#problems").is_displayed(), what="no problems")
    b.css("#save").click()
    b.wait(lambda: b.text("#save-state") == "Saved · v2", what="the save")
    cfg = api.get(f"/api/p/{slug}/config").json()
    cols = {c["name"]: c["expr"] for c in cfg["mappings"][0]["columns"]}
    assert cols["value"] == {"kind": "mul", "left": {"kind": "col", "name": "value"}, "right": {"kind": "num", "value": 2}}
    assert cols["user"] == {"kind": "upper", "input": {"kind": "col", "name": "user"}}
    assert cfg["mappings"][0]["where"]["kind"] == "and"
    # A second session saves first: this one's save reports the conflict.
    other = browsers("ada")
    other.get(f"/p/{slug}/editor")
    select_node(other, "mapping:0")
    name = other.css("#panel .field[data-path='/mappings/0/name'] input")
    name.clear()
    name.send_keys("Renamed by ada")
    other.css("#save").click()
    other.wait(lambda: other.text("#save-state") == "Saved · v3", what="ada's save")
    select_node(b, "table:0")
    b.css("#panel .field[data-path='/analytic_tables/0/dedup_keys'] input").send_keys(", value")
    b.expected_network.append(f"/api/p/{slug}/config")
    b.css("#save").click()
    b.wait(lambda: b.css("#conflict").is_displayed(), what="the conflict")
    assert "version 3" in b.text("#conflict")
    b.css("#conflict .actions button").click()  # show their changes
    b.wait(lambda: "Renamed by ada" in b.text("#conflict"), what="their diff")
    b.check_page("editor-conflict")
    [x for x in b.all("#conflict .actions button") if "over theirs" in x.text][0].click()
    b.wait(lambda: b.text("#save-state") == "Saved · v4", what="the save over theirs")
    cfg = api.get(f"/api/p/{slug}/config").json()
    assert cfg["analytic_tables"][0]["dedup_keys"] == ["time", "user", "value"]
    # History: v2 differs from the live v4; revert to it.
    b.wait(lambda: len(b.all("#versions button")) == 4, what="four versions")
    [x for x in b.all("#versions button") if x.get_attribute("data-version") == "2"][0].click()
    b.wait(lambda: b.all("#version-view pre.diff"), what="the diff")
    removed = [x.text for x in b.all("#version-view pre.diff .del")]
    added = [x.text for x in b.all("#version-view pre.diff .add")]
    # Saving "mine over theirs" dropped ada's rename; v4 differs from v2 by the dedup key.
    assert [x.replace(" ", "") for x in removed] == ['-"user",', '-"value"'], removed
    assert [x.replace(" ", "") for x in added] == ['+"user"'], added
    b.check_page("editor-history-diff")
    [x for x in b.all("#version-view button") if "Revert" in x.text][0].click()
    b.wait(lambda: b.text("#save-state") == "Saved · v5", what="the revert")
    v2 = api.get(f"/api/p/{slug}/config/history/2").json()["config"]
    assert api.get(f"/api/p/{slug}/config").json() == v2
    hist = api.get(f"/api/p/{slug}/config/history").json()["versions"]
    assert hist[0]["version"] == 5 and "reverted to v2" in hist[0]["note"]
    assert b.wait(lambda: "reverted to v2" in b.text("#versions"), what="the new version listed")
    b.check_page("editor-phone", width=390)


def test_editor_save_of_the_live_config_makes_no_version(server, browsers):
    """Save with nothing changed (or a change undone) makes no version and
    says so; the templates' configs come back from the editor as they were."""
    api = server.worker()
    b = browsers("eddy")
    for name, template in (("Logs", "access_logs"), ("Bank", "bank_statements")):
        slug = create_pipeline(api, name, template)
        b.get(f"/p/{slug}/editor")
        b.js("document.getElementById('toasts').replaceChildren()")
        b.css("#save").click()
        b.wait(lambda: "Nothing changed: version 1 stays the live one." in b.text("#toasts"),
               what="the unchanged save's notice")
        assert b.text("#save-state") == "Saved · v1"
        hist = api.get(f"/api/p/{slug}/config/history").json()["versions"]
        assert [v["version"] for v in hist] == [1], hist
    b.check_page("editor-save-unchanged")
    # A change typed and taken back: still nothing to save.
    select_node(b, "table:0")
    field = b.css("#panel .field[data-path='/analytic_tables/0/name'] input")
    field.send_keys("x")
    b.wait(lambda: b.text("#save-state") == "Unsaved changes", what="the edit")
    field.send_keys(Keys.BACKSPACE)
    b.css("#save").click()
    b.wait(lambda: b.text("#save-state") == "Saved · v1", what="the save")
    assert [v["version"] for v in api.get(f"/api/p/{slug}/config/history").json()["versions"]] == [1]
    # A change is saved as a new version, as before.
    field = b.css("#panel .field[data-path='/analytic_tables/0/name'] input")
    field.send_keys("!")
    b.css("#save").click()
    b.wait(lambda: b.text("#save-state") == "Saved · v2", what="the save of a change")
    b.wait(lambda: "Saved as version 2." in b.text("#toasts"), what="its notice")


def test_editor_keeps_whole_floats_floats(server, browsers):
    """JavaScript reads num 1.0 (a float) as 1 (an integer): the page writes
    it back as 1.0, so a Save with nothing changed makes no version and a
    Save of another change keeps the float (and what it computes)."""
    from karet_service import pipeline_config

    api = server.worker()
    cfg = pipeline_config("pipelines/floats/events/")
    cfg["mappings"][0]["where"] = {"kind": "gt", "left": {"kind": "col", "name": "value"},
                                   "right": {"kind": "num", "value": 1.0}}
    cfg["analytic_tables"][0]["schema"][2]["assertions"] = {"min": -0.0, "max": 1e6}
    assert api.post("/api/pipelines", {"name": "Floats", "slug": "floats", "config": cfg}).status == 200
    live = api.get("/api/p/floats/config").body
    b = browsers("eddy")
    b.get("/p/floats/editor")
    b.css("#save").click()
    b.wait(lambda: "Nothing changed: version 1 stays the live one." in b.text("#toasts"),
           what="the unchanged save's notice")
    select_node(b, "table:0")
    field = b.css("#panel .field[data-path='/analytic_tables/0/name'] input")
    field.send_keys("!")
    b.css("#save").click()
    b.wait(lambda: b.text("#save-state") == "Saved · v2", what="the save of a change")
    saved = api.get("/api/p/floats/config").body
    assert b'"right":{"kind":"num","value":1.0}' in saved, saved
    assert b'"assertions":{"min":-0.0,"max":1000000.0}' in saved, saved
    assert saved.replace(b'"name":"Events!"', b'"name":"Events"') == live


def test_editor_save_right_after_typing_sends_the_new_expression(server, browsers):
    """Save while the typing pause's parse is still unanswered: the page waits
    for it and saves the new tree, not the old. The page's fetch holds the
    parse's answer here until Save has been clicked, as a slow server would."""
    api = server.worker()
    slug = create_pipeline(api, "Events", "csv_events")
    b = browsers("eddy")
    b.get(f"/p/{slug}/editor")
    select_node(b, "mapping:0")
    b.js("""const real = window.fetch;
            window.heldParses = [];
            window.holding = true;
            window.fetch = (url, init) => window.holding && String(url).includes("/api/expressions/parse")
              ? new Promise((resolve) => window.heldParses.push({body: init.body, go: () => resolve(real(url, init))}))
              : real(url, init);""")
    u = expr_input(b, "user")
    u.clear()
    u.send_keys("upper(user)")
    b.wait(lambda: b.js("return window.heldParses.some((p) => p.body.includes('upper(user)'))"),
           what="the typing pause's parse of the whole text")
    b.css("#save").click()
    b.js("window.holding = false; window.heldParses.forEach((p) => p.go())")
    b.wait(lambda: b.text("#save-state") == "Saved · v2", what="the save")
    want = api.post("/api/expressions/parse", {"texts": ["upper(user)"]}).json()["results"][0]["expr"]
    cols = api.get(f"/api/p/{slug}/config").json()["mappings"][0]["columns"]
    assert [c["expr"] for c in cols if c["name"] == "user"] == [want], cols


def test_editor_folder_picker_and_new_nodes(server, browsers):
    api = server.worker()
    slug = create_pipeline(api, "Events", "csv_events")
    for key in (f"pipelines/{slug}/events/a.csv", f"pipelines/{slug}/archive/b.csv"):
        assert api.put(f"/api/lake?key={key}", raw=b"time,user,value\n").status == 200
    b = browsers("eddy")
    b.get(f"/p/{slug}/editor")
    select_node(b, "source:0")
    browse = [x for x in b.all("#panel .picker button") if x.text.startswith("Browse")][0]
    browse.click()
    b.wait(lambda: "archive" in b.text("#panel .picker-list"), what="the sibling folders")
    assert browse.get_attribute("aria-expanded") == "true"
    options = [x.text for x in b.all("#panel .picker-list button")]
    assert f"pipelines/{slug}/archive/" in options and f"pipelines/{slug}/events/" in options, options
    [x for x in b.all("#panel .picker-list button") if x.text == f"pipelines/{slug}/archive/"][0].click()
    b.wait(lambda: any(x.text.startswith("✓ use") for x in b.all("#panel .picker-list button")), what="inside")
    [x for x in b.all("#panel .picker-list button") if x.text.startswith("✓ use")][0].click()
    prefix = b.css("#panel .field[data-path='/source_containers/0/path_prefix'] input")
    assert prefix.get_attribute("value") == f"pipelines/{slug}/archive/"
    assert f"pipelines/{slug}/archive/" in b.css('[data-node="source:0"]').text
    b.check_page("editor-folder-picked")
    # A new table and a mapping into it, from the buttons; saved, they are in the config.
    b.css('#add-bar [data-add="table"]').click()
    b.wait(lambda: b.all('[data-node="table:1"]'), what="the new table")
    b.css('#panel .field[data-path="/analytic_tables/1/id"] input').send_keys("x")
    assert b.css('#panel .field[data-path="/analytic_tables/1/id"] input').get_attribute("value") == "table_2x"
    b.css("#panel fieldset button").click()  # + Column
    b.d.switch_to.active_element.send_keys("user")
    b.css('#add-bar [data-add="mapping"]').click()
    b.wait(lambda: b.all('[data-node="mapping:1"]'), what="the new mapping")
    from selenium.webdriver.support.ui import Select

    Select(b.css('#panel .field[data-path="/mappings/1/analytic_table_id"] select')).select_by_value("table_2x")
    [x for x in b.all("#panel button") if x.text == "Add the table's missing columns"][0].click()
    b.wait(lambda: expr_input(b, "user").get_attribute("value") == "user", what="the column filled in")
    b.css("#save").click()
    b.wait(lambda: b.text("#save-state") == "Saved · v2", what="the save")
    cfg = api.get(f"/api/p/{slug}/config").json()
    assert cfg["analytic_tables"][1]["id"] == "table_2x" and cfg["mappings"][1]["analytic_table_id"] == "table_2x"
    assert cfg["mappings"][1]["columns"] == [{"name": "user", "expr": {"kind": "col", "name": "user"}}]
    assert len(b.all("#graph path.edge")) == 4
    b.check_page("editor-new-nodes")


def test_editor_for_a_viewer_reads_only(server, browsers):
    api = server.worker()
    slug = create_pipeline(api, "Bank", "bank_statements")
    b = browsers("vera")
    b.get(f"/p/{slug}/editor")
    assert not b.all("#save") and not b.all("#add-bar"), "a viewer sees no Save and no Add"
    select_node(b, "mapping:0")
    assert all(i.get_attribute("readonly") is not None for i in b.all("#panel input:not([type=checkbox])"))
    assert not b.all("#panel button.danger")
    select_node(b, "dimension:0")
    b.check_page("editor-viewer-dimension")
    b.css("#validate").click()  # reading: allowed
    b.wait(lambda: "valid" in b.text("#toasts"), what="the verdict")
    b.expected_network.append(f"/api/p/{slug}/config")
    status = b.d.execute_async_script("""const done = arguments[arguments.length - 1];
        fetch('/api/p/' + arguments[0] + '/config', {method: 'PUT', headers: {'Content-Type': 'application/json'},
              body: '{"version": 1}'}).then(r => done(r.status));""", slug)
    assert status == 403


# ---- settings ----


def test_settings_users_roles_and_own_password(server, browsers):
    admin = browsers("ada")
    admin.get("/settings")
    assert [r.get_attribute("data-user") for r in admin.all("#users tbody tr")] == ["ada", "admin", "eddy", "vera"]
    admin.check_page("settings-admin")
    admin.type("#new-username", "zoe")
    admin.type("#new-user-password", "password-zoe")
    pick(admin, "#new-role", "editor")
    admin.css("#new-user button[type=submit]").click()
    admin.wait(lambda: admin.all('#users tr[data-user="zoe"]'), what="zoe listed")
    users = {u["username"]: u["role"] for u in server.worker().get("/api/users").json()["users"]}
    assert users["zoe"] == "editor"
    zoe = browsers()
    zoe.sign_in("zoe", "password-zoe")
    pick(admin, 'select[data-role-of="zoe"]', "viewer")
    admin.wait(lambda: "zoe is now viewer" in admin.text("#toasts"), what="the role change")
    assert {u["username"]: u["role"] for u in server.worker().get("/api/users").json()["users"]}["zoe"] == "viewer"
    zoe.get("/pipelines")
    assert zoe.path().startswith("/sign-in"), "a change of role ends the sessions"
    admin.css('button[data-delete-user="zoe"]').click()
    admin.css("dialog[open] button.danger").click()
    admin.wait(lambda: not admin.all('#users tr[data-user="zoe"]'), what="zoe gone")
    assert not admin.all('#users tr[data-user="ada"] button[data-delete-user]'), "no deleting oneself"
    assert admin.css('select[data-role-of="ada"]').get_attribute("disabled") is not None
    # One's own password: a wrong current one is said in place.
    eddy, elsewhere = browsers("eddy"), browsers("eddy")
    eddy.get("/settings")
    assert not eddy.all("#users"), "an editor sees no users"
    eddy.type("#current-password", "wrong-password")
    eddy.type("#new-password", "new-secret-1")
    eddy.type("#repeat-password", "new-secret-1")
    eddy.expected_network.append("/api/account")
    eddy.css("#password-form button[type=submit]").click()
    eddy.wait(lambda: eddy.css("#password-error").is_displayed(), what="the error")
    assert "not right" in eddy.text("#password-error")
    eddy.type("#current-password", USERS["eddy"][1])
    eddy.css("#password-form button[type=submit]").click()
    eddy.wait(lambda: "Password changed" in eddy.text("#toasts"), what="the change")
    eddy.get("/pipelines")
    assert eddy.path() == "/pipelines", "the changer stays signed in"
    elsewhere.get("/pipelines")
    assert elsewhere.path().startswith("/sign-in"), "other sessions end"
    elsewhere.sign_in("eddy", "new-secret-1")
    eddy.get("/settings")
    eddy.check_page("settings-editor")


def test_settings_for_a_viewer(server, browsers):
    b = browsers("vera")
    b.get("/settings")
    assert not b.all("#users") and not b.all("#new-user")
    b.expected_network.append("/api/users")
    status = b.d.execute_async_script("""const done = arguments[arguments.length - 1];
        fetch('/api/users', {method: 'POST', headers: {'Content-Type': 'application/json'},
              body: JSON.stringify({username: 'mallory', password: 'password-m', role: 'admin'})}).then(r => done(r.status));""")
    assert status == 403
    assert "mallory" not in [u["username"] for u in server.worker().get("/api/users").json()["users"]]
    b.check_page("settings-viewer")


# ---- the Data page ----


def query_endpoint(api, slug):
    r = api.post(f"/api/p/{slug}/query", {"sql": "SELECT 1 AS x"})
    assert r.status == 200, f"POST /api/p/{slug}/query answered {r.status}"


def test_data_page_query_chart_errors_saved(server, browsers):
    api = server.worker()
    slug = create_pipeline(api, "Bank", "bank_statements")
    b = browsers("eddy")
    b.get(f"/p/{slug}/data")
    item = b.css("#table-list li")
    assert item.get_attribute("data-table") == "transactions"
    assert item.find_element("css selector", ".rows").get_attribute("data-rows") == "0"
    query_endpoint(api, slug)
    # A line chart: a date column and numbers.
    sql = ("SELECT * FROM (VALUES (DATE '2026-11-01', 3, 1.5), (DATE '2026-11-02', 7, 2.5), "
           "(DATE '2026-11-03', 4, 4.25)) t(day, hits, kb)")
    box = b.css("#sql")
    box.clear()
    box.send_keys(sql)
    from selenium.webdriver.common.keys import Keys

    box.send_keys(Keys.CONTROL, Keys.ENTER)
    b.wait(lambda: b.all("#results table"), what="the result")
    assert b.css("#row-count").get_attribute("data-total") == "3"
    cells = [td.text for td in b.all("#results tbody tr:first-child td")]
    assert cells == ["2026-11-01", "3", "1.50"], cells  # a DECIMAL(3,2), exactly
    svg = b.css("#chart svg")
    assert svg.get_attribute("aria-label") == "Line chart of hits, kb by day"
    assert len(b.all("#chart polyline")) == 2
    assert "sql=" in b.d.current_url, "the query is in the address"
    b.check_page("data-line-chart")
    # A bar chart: text and a number; text from the data is shown as text.
    box.clear()
    box.send_keys("SELECT * FROM (VALUES ('Rent', 1200.0), ('<b>Food</b>', 80.0)) t(category, total)")
    b.css("#run-sql").click()
    b.wait(lambda: b.all("#chart rect.bar"), what="the bar chart")
    assert len(b.all("#chart rect.bar")) == 2 and "<b>Food</b>" in b.text("#results tbody")
    assert not b.all("#results b"), "values are never HTML"
    b.check_page("data-bar-chart")
    # Errors in place.
    box.clear()
    box.send_keys("SELECT nope FROM")
    b.expected_network.append(f"/api/p/{slug}/query")
    b.css("#run-sql").click()
    err = b.wait(lambda: b.all("#results .notice.error"), what="the error")[0]
    assert "syntax" in err.text.lower() or "error" in err.text.lower()
    b.check_page("data-query-error")
    # First 200 rows of more, and the total.
    box.clear()
    box.send_keys("WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < 999) SELECT i FROM r")
    b.css("#run-sql").click()
    b.wait(lambda: "the first 200 shown" in b.text("#results"), what="the big result")
    assert len(b.all("#results tbody tr")) == 200
    # Saved queries: save, load, delete.
    box.clear()
    box.send_keys("SELECT 42 AS answer")
    b.css("#save-query").click()
    b.type("#query-name", "The answer")
    b.css("dialog[open] button[type=submit]").click()
    b.wait(lambda: "The answer" in b.text("#saved"), what="the saved query")
    box.clear()
    b.css("#saved button.load").click()
    b.wait(lambda: b.css("#sql").get_attribute("value") == "SELECT 42 AS answer", what="it to load")
    b.wait(lambda: "42" in b.text("#results"), what="it to run")
    b.css("#saved button[data-delete-query]").click()
    b.css("dialog[open] button.danger").click()
    b.wait(lambda: not b.all("#saved li"), what="it to go")
    assert api.get(f"/api/p/{slug}/queries").json()["queries"] == []


FLOATS = [("0.1", "0.1"), ("0.3", "0.3"), ("0.1::DOUBLE + 0.2", "0.30000000000000004"), ("1.1", "1.1"),
          ("1e-7", "1e-07"), ("1e21", "1e+21"), ("123456.789", "123456.789"), ("'-0.0'", "-0.0"),
          ("5e-324", "5e-324"), ("1.7976931348623157e308", "1.7976931348623157e+308"), ("100", "100.0"),
          ("'nan'", "null"), ("'inf'", "null"), ("'-inf'", "null")]


def test_floats_in_the_api_and_on_the_data_page_as_written(server, browsers):
    """Floats come out as the shortest text that reads back (Python's repr),
    in the query API's JSON and in the Data page's cells alike; NaN and the
    infinities, which JSON cannot hold, are null in both."""
    import re
    import urllib.parse

    api = server.worker()
    slug = create_pipeline(api, "Events", "csv_events")
    values = ", ".join(f"({v}::DOUBLE, {i})" for i, (v, _) in enumerate(FLOATS))
    sql = f"SELECT x FROM (VALUES {values}) t(x, i) ORDER BY i"
    r = api.post(f"/api/p/{slug}/query", {"sql": sql})
    assert r.status == 200, r.body
    assert re.findall(rb'"x":([^,}]*)', r.body) == [w.encode() for _, w in FLOATS], r.body
    # A FLOAT (float32) as DuckDB prints it, not as the double it widens to.
    r = api.post(f"/api/p/{slug}/query", {"sql": "SELECT 0.1::FLOAT AS f, 16777217::FLOAT AS g"})
    assert r.json()["types"] == ["f", "f"] and b'"f":0.1,"g":16777216.0' in r.body, r.body
    b = browsers("vera")
    b.get(f"/p/{slug}/data?sql=" + urllib.parse.quote(sql))
    b.wait(lambda: len(b.all("#results tbody tr")) == len(FLOATS), what="the result")
    cells = [td.text for td in b.all("#results tbody td")]
    assert cells == [w for _, w in FLOATS], cells
    b.check_page("data-floats")


# ---- every page at phone width, with the keyboard ----


def test_every_page_at_phone_width(server, browsers):
    api = server.worker()
    slug = create_pipeline(api, "Bank", "bank_statements")
    api.post(f"/api/p/{slug}/jobs")
    b = browsers("ada", width=390, height=844)
    for path in ["/pipelines", f"/p/{slug}/jobs", f"/p/{slug}/data", f"/p/{slug}/editor",
                 f"/lake?prefix=pipelines/{slug}/", "/settings"]:
        b.get(path)
        b.d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
        time.sleep(0.3)
        overflow = b.js("return document.documentElement.scrollWidth")
        assert overflow <= 391, f"{path} is {overflow} px wide at a phone's 390"
        b.check_page("phone" + path.replace("/", "-").split("?")[0], width=390)


# ---- values from users and files are text, never markup ----

HOSTILE = '"><img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'


def test_hostile_values_are_shown_as_text_on_every_page(server, browsers):
    api = server.worker()
    cfg = {"version": 1, "name": HOSTILE,
           "source_containers": [{"id": "s1", "name": HOSTILE, "path_prefix": "in/", "format": "csv",
                                  "schema": [{"name": "a<b>", "type": "string"}]}],
           "dimensions": [],
           "mappings": [{"id": "m1", "name": HOSTILE, "source_container_id": "s1", "analytic_table_id": "t1",
                         "columns": [{"name": "a<b>", "expr": {"kind": "str", "value": HOSTILE}}]}],
           "analytic_tables": [{"id": "t1", "name": HOSTILE, "schema": [{"name": "a<b>", "type": "string"}],
                                "partition_keys": [], "dedup_keys": []}]}
    r = api.post("/api/pipelines", {"name": HOSTILE, "slug": "evil", "config": cfg})
    assert r.status == 200, r.body
    assert api.put("/api/lake?key=" + __import__("urllib.parse").parse.quote("in/" + HOSTILE.replace("/", "") + ".csv"),
                   raw=b"a<b>\nx\n").status == 200
    assert api.post("/api/p/evil/queries", {"name": HOSTILE, "sql": "SELECT '" + HOSTILE.replace("'", "''") + "' AS x"}).status == 201
    api.post("/api/p/evil/jobs")
    b = browsers("ada")
    for path in ["/pipelines", "/p/evil/jobs", "/p/evil/data", "/p/evil/editor", "/lake?prefix=in/", "/settings"]:
        b.get(path)
        time.sleep(0.5)
        for node in ("source:0", "mapping:0") if "editor" in path else ():
            select_node(b, node)
        injected = b.js("return [document.querySelectorAll('img[src=\"x\"], [onerror]').length, "
                        "[...document.scripts].filter(s => s.type !== 'application/json' && s.textContent.includes('__pwned')).length, "
                        "window.__pwned || 0]")
        assert injected == [0, 0, 0], (path, injected)
        assert "<img src=x" in b.js("return document.body.innerText") or path == "/settings", path
    b.get("/p/evil/data")
    b.css("#saved button.load").click()
    b.wait(lambda: b.all("#results tbody td"), what="the result")
    assert b.text("#results tbody td") == HOSTILE
    assert b.js("return document.querySelectorAll('img[src=\"x\"]').length") == 0
    b.check_page("hostile-data")
