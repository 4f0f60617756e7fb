"""Karet's web pages in a real browser (headless Chromium) against a real
`karet serve`: sign in and out, pipelines from templates, the Jobs page live
(the event stream and the polling fallback, the countdown of an upload
batch, the Run button against double clicks), roles (what a viewer is not
offered, the server refuses anyway). Every page visited is screenshotted
and checked for unlabeled controls and console errors."""

import json
import time

import pytest

from karet_browser import Browser, shots_dir
from karet_service import SECRET, Client, Server, post_event, s3_event

USERS = {"ada": ("admin", "password-ada"), "eddy": ("editor", "password-eddy"),
         "vera": ("viewer", "password-vera")}


@pytest.fixture
def server(tmp_path):
    srv = Server(tmp_path / "data", tmp_path / "lake").start()
    api = srv.worker()
    for name, (role, pw) in USERS.items():
        assert api.post("/api/users", {"username": name, "password": pw, "role": role}).status == 201
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
    b.css("#new-template").send_keys("Access logs")
    b.css("#new-pipeline button[type=submit]").click()
    b.wait(lambda: b.path() == "/p/web-access-logs/editor", what="the new pipeline's editor")
    cfg = server.worker().get("/api/p/web-access-logs/config").json()
    assert cfg["source_containers"][0]["format"] == "ndjson"
    assert cfg["source_containers"][0]["path_prefix"] == "pipelines/web-access-logs/access/"
    b.get("/pipelines")
    b.type("#new-name", "Bank statements")
    b.css("#new-template").send_keys("Bank statements")
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
    # A double click on Run starts one run, not two.
    run = b.css("#run")
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(b.d).double_click(run).perform()
    b.wait(lambda: len(job_rows(b)) == 1, what="the run to appear")
    time.sleep(1.5)
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
    top = job_rows(b)[0]
    assert top.find_element("css selector", "td:nth-child(3)").text == "webhook"
    # Open a run: its details; a full run asked for from the checkbox.
    b.css("#full-run").click()
    b.css("#run").click()
    b.wait(lambda: len(job_rows(b)) == 4, what="the full run")
    jobs = api.get(f"/api/p/{slug}/jobs").json()["jobs"]
    assert jobs[0]["clean"] is True and all(not j["clean"] for j in jobs[1:])
    b.wait(lambda: job_rows(b)[0].get_attribute("data-status") in ("completed", "failed"), what="it to finish")
    b.css("#jobs-live tbody tr[data-status] button.toggle").click()
    details = b.css(f"#d-{jobs[0]['id']}")
    assert details.is_displayed() and "Files processed" in details.text and "a full run" in details.text
    b.check_page("jobs-opened")
    # The opened run stays open when the list refreshes.
    api.post(f"/api/p/{slug}/jobs")
    b.wait(lambda: len(job_rows(b)) == 5, what="a fifth run")
    assert b.css(f"#d-{jobs[0]['id']}").is_displayed()
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
    b.css(".pager a[rel=next]").click()
    b.wait_ready()
    rows = job_rows(b)
    assert [r.get_attribute("id") for r in rows] == [f"job-{i}" for i in reversed(ids[:5])]
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
