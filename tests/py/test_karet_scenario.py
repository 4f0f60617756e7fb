"""Issue 17's scenario end to end in a real browser, on a local lake and on
moto's S3: sign in, create a pipeline from a template, upload a file through
the lake browser, watch the run appear, run and finish on the Jobs page
without a reload, open it (Files processed 1), see the table's row count on
the Data page grow by the file's rows less duplicates, run a query and see
its chart, edit a mapping, validate, save, meet a second session's save,
revert from history; a viewer sees no Run button and a forged request is
refused. The expected row counts come from this file's own reading of the
rows (the template's rules written out in Python), not from our code."""

import time
import uuid

import pytest

from karet_browser import Browser, shots_dir
from karet_service import Server
from store_servers import server_fixture

USERS = {"ada": ("admin", "password-ada"), "vera": ("viewer", "password-vera"), "eddy": ("editor", "password-eddy")}

s3 = pytest.fixture(scope="module")(server_fixture("s3"))

DESCRIPTIONS = ["STARBUCKS #12", "Uber trip", "RENT NOV", "amazon mktplace", "Payroll ACME", "transfer to savings",
                "Chipotle 44", "NETFLIX.COM", "Shell 0091", "Corner shop"]


def statement(days, account="CHK-1"):
    """Rows (date, description, amount, account) of a bank export, one per day and description."""
    rows = []
    for d in days:
        for k, desc in enumerate(DESCRIPTIONS):
            amount = f"{-(k + 1) * 3.25:.2f}" if "Payroll" not in desc else "2500.00"
            rows.append((f"{d:02d}/11/2026", desc, amount, account))
    return rows


def csv_text(rows):
    return "Date,Description,Amount,Account\n" + "".join(f"{a},{b},{c},{d}\n" for a, b, c, d in rows)


def expected_rows(rows):
    """The template's rules: description upper(trim()), rows whose category is
    TRANSFER (a keyword match, ignoring case) left out, dedup on date,
    description, amount, account."""
    keys = set()
    for date, desc, amount, account in rows:
        d = desc.strip().upper()
        if "TRANSFER" in d:
            continue
        keys.add((date, d, float(amount), account))
    return keys


@pytest.fixture(params=["local", "s3"])
def lake(request, tmp_path):
    if request.param == "local":
        return str(tmp_path / "lake"), {}
    backend = request.getfixturevalue("s3")
    return backend.url(f"karet-{uuid.uuid4().hex[:8]}"), backend.option_list()


def rows_shown(b, table):
    return int(b.attr(f'#table-list li[data-table="{table}"] .rows', "data-rows"))


def test_scenario(lake, tmp_path, request):
    url, options = lake
    # Uploads start a run after a 1 s quiet window, not the default 5 s
    # (test_karet_serve checks the defaults and the debounce itself).
    srv = Server(tmp_path / "data", url, options=options, env={"KARET_DEBOUNCE_QUIET_MS": "1000"}).start()
    browsers = []
    try:
        api = srv.worker()
        for name, (role, pw) in USERS.items():
            assert api.post("/api/users", {"username": name, "password": pw, "role": role}).status == 201
        shots = shots_dir(request.node.name)

        def browser(user):
            b = Browser(srv.base, shots)
            browsers.append(b)
            b.sign_in(user, USERS[user][1])
            return b

        b = browser("ada")
        # Create the pipeline from a template.
        from selenium.webdriver.support.ui import Select

        b.type("#new-name", "Household bank")
        Select(b.css("#new-template")).select_by_value("bank_statements")
        b.css("#new-pipeline button[type=submit]").click()
        b.wait(lambda: b.path() == "/p/household-bank/editor", what="the new pipeline")
        slug = "household-bank"
        cfg = api.get(f"/api/p/{slug}/config").json()
        folder = cfg["source_containers"][0]["path_prefix"]
        # Keep the Jobs page open in a second window: it must see the run without a reload.
        b.get(f"/p/{slug}/jobs")
        b.wait(lambda: "Live" in b.text("#live"), what="the event stream")
        b.js("window.__kept = 1")
        jobs_tab = b.d.current_window_handle
        b.d.switch_to.new_window("tab")
        # Upload through the lake browser.
        first = statement(range(1, 4))
        f = tmp_path / "2026-11-03.csv"
        f.write_text(csv_text(first))
        b.get(f"/lake?prefix={folder}")
        b.css("#upload-files").send_keys(str(f))
        b.wait(lambda: "done" in b.text("#uploads"), what="the upload")
        b.check_page("scenario-lake-uploaded")
        # The run appears, runs and finishes on the Jobs page.
        b.d.switch_to.window(jobs_tab)
        b.wait(lambda: b.all("#scheduled") or b.all("#jobs-live tbody tr[data-status]"), what="the batch or its run")
        b.wait(lambda: b.all("#jobs-live tbody tr[data-status]"), timeout=40, what="the run")
        b.wait(lambda: b.all("#jobs-live tbody tr[data-status]")[0].get_attribute("data-status")
               in ("completed", "failed"), timeout=120, what="the run to finish")
        assert b.js("return window.__kept") == 1, "the Jobs page was not reloaded"
        job = api.get(f"/api/p/{slug}/jobs").json()["jobs"][0]
        assert job["status"] == "completed", (job["error"], job.get("errors"))
        assert b.text(f"#job-{job['id']} td:nth-child(3)") == "webhook"
        b.click(f"#job-{job['id']} button.toggle")
        facts = b.wait(lambda: b.js("""const d = document.getElementById(arguments[0]);
            if (!d || d.hidden) return null;
            const o = {};
            for (const dt of d.querySelectorAll('dt')) o[dt.textContent] = dt.nextElementSibling.textContent;
            return o;""", f"d-{job['id']}"), what="the run's details")
        assert facts["Files processed"] == "1", facts
        assert facts["Run kind"] == "incremental" and int(facts["Rows written"].replace("\u202f", "")) > 0, facts
        b.check_page("scenario-jobs-run-opened")
        # The Data page's row count: the file's rows less the left-out and duplicate ones.
        want = expected_rows(first)
        b.get(f"/p/{slug}/data")
        assert rows_shown(b, "transactions") == len(want)
        # A second file overlapping the first: on the open Data page, without a
        # reload, the count grows by the new rows only.
        b.js("window.__kept = 2")
        second = statement(range(3, 6))
        from urllib.parse import quote

        assert api.put(f"/api/lake?key={quote(folder)}2026-11-05.csv", raw=csv_text(second).encode()).status == 200
        b.wait(lambda: rows_shown(b, "transactions") == len(want | expected_rows(second)), timeout=120,
               what="the row count to grow")
        assert b.js("return window.__kept") == 2, "the Data page was not reloaded"
        js = api.get(f"/api/p/{slug}/jobs").json()["jobs"]
        assert len(js) == 2 and js[0]["status"] == "completed" and js[0]["files_processed"] == 1, js[0]
        assert len(want | expected_rows(second)) < len(want) + len(expected_rows(second))  # duplicates dropped
        # A query and its chart.
        box = b.css("#sql")
        box.clear()
        box.send_keys("SELECT category, sum(amount) AS total FROM transactions GROUP BY category ORDER BY category")
        b.css("#run-sql").click()
        b.wait(lambda: b.all("#chart rect.bar"), what="the bar chart")
        assert "FOOD" in b.text("#results") and "TRANSFER" not in b.text("#results")
        box.clear()
        box.send_keys("SELECT date, count(*) AS n FROM transactions GROUP BY date ORDER BY date")
        b.css("#run-sql").click()
        b.wait(lambda: b.all("#chart polyline"), what="the line chart")
        b.check_page("scenario-data-chart")
        # Edit the mapping, validate, save; a second session saved first; revert.
        b.get(f"/p/{slug}/editor")
        b.css('[data-node="mapping:0"]').click()
        row = [r for r in b.all("#panel .col-row.expr")
               if r.find_element("css selector", "input").get_attribute("value") == "description"][0]
        e = row.find_elements("css selector", "input")[1]
        assert e.get_attribute("value") == "upper(trim(description))"
        e.clear()
        e.send_keys("lower(trim(description))")
        time.sleep(0.8)
        b.css("#validate").click()
        b.wait(lambda: "valid" in b.text("#toasts"), what="validation")
        other = browser("eddy")
        other.get(f"/p/{slug}/editor")
        other.css('[data-node="table:0"]').click()
        name = other.css("#panel .field[data-path='/analytic_tables/0/name'] input")
        name.send_keys(" (eddy)")
        other.css("#save").click()
        other.wait(lambda: other.text("#save-state") == "Saved · v2", what="eddy's save")
        b.expected_network.append(f"/api/p/{slug}/config")
        b.css("#save").click()
        b.wait(lambda: b.css("#conflict").is_displayed(), what="the conflict")
        [x for x in b.all("#conflict .actions button") if "over theirs" in x.text][0].click()
        b.wait(lambda: b.text("#save-state") == "Saved · v3", what="the save")
        assert api.get(f"/api/p/{slug}/config").json()["mappings"][0]["columns"][1]["expr"]["kind"] == "lower"
        b.wait(lambda: len(b.all("#versions button")) == 3, what="three versions")
        [x for x in b.all("#versions button") if x.get_attribute("data-version") == "1"][0].click()
        b.wait(lambda: b.all("#version-view pre.diff"), what="the diff")
        [x for x in b.all("#version-view button") if "Revert" in x.text][0].click()
        b.wait(lambda: b.text("#save-state") == "Saved · v4", what="the revert")
        assert api.get(f"/api/p/{slug}/config").json() == api.get(f"/api/p/{slug}/config/history/1").json()["config"]
        b.check_page("scenario-editor-reverted")
        # A viewer: no Run button, and a forged request is refused.
        v = browser("vera")
        v.get(f"/p/{slug}/jobs")
        assert not v.all("#run")
        v.expected_network.append(f"/api/p/{slug}/jobs")
        status = v.d.execute_async_script("""const done = arguments[arguments.length - 1];
            fetch('/api/p/' + arguments[0] + '/jobs', {method: 'POST'}).then(r => done(r.status));""", slug)
        assert status == 403
        assert len(api.get(f"/api/p/{slug}/jobs").json()["jobs"]) == 2
        v.check_page("scenario-viewer-jobs")
    finally:
        for b in browsers:
            b.quit()
        srv.stop()
