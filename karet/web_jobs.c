/* The Jobs page: a pipeline's runs, newest first (keyset pages, so the
 * 10,000th job costs what the first does), the batch of uploads waiting to
 * start one, and a run's details. The live region is also served alone
 * (?fragment=1): the page script fetches it again whenever the event
 * stream (or, without one, a timer) says something changed, so one piece
 * of code renders a row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "jobs.h"
#include "web.h"

#define PAGE_DEFAULT 25
#define PAGE_MAX 100
#define PROBLEMS_SHOWN 50

static const char *const JOB_SELECT =
    "SELECT id, pipeline, status, trigger, full, attempts, config_version, enqueued_at, "
    "started_at, completed_at, summary, progress, error FROM jobs ";

static int64_t num(json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static void status_badge(kbuf *b, const char *status)
{
    html_printf(b,
                "<span class=\"status %s\"><span class=\"dot status-%s\" aria-hidden=\"true\">"
                "</span>%s</span>",
                status, status, status);
}

/* "reading · 3/7 files", "1 file · 1 234 rows written", or the error. */
static void progress_text(kbuf *b, json_t *rec)
{
    const char *status = str(rec, "status");
    json_t *p = json_object_get(rec, "progress");
    if (strcmp(status, "running") == 0) {
        const char *stage = str(p, "stage");
        html_printf(b, "%s", stage && *stage ? stage : "starting");
        if (num(p, "files_total") > 0)
            html_printf(b, " · %L/%L files", (long long)num(p, "files_done"),
                        (long long)num(p, "files_total"));
        else if (num(p, "mappings_total") > 0)
            html_printf(b, " · %L/%L mappings", (long long)num(p, "mappings_done"),
                        (long long)num(p, "mappings_total"));
    } else if (strcmp(status, "queued") == 0) {
        const char *err = str(rec, "error");
        html_printf(b, "%s", err ? err : "waiting to start");
    } else if (strcmp(status, "completed") == 0) {
        json_t *files = json_object_get(rec, "files_processed");
        if (!json_is_integer(files)) {
            kbuf_puts(b, "done");
            return;
        }
        long long n = json_integer_value(files);
        html_printf(b, "%L file%R · ", n, n == 1 ? "" : "s");
        html_count(b, num(rec, "rows_written"));
        kbuf_puts(b, num(rec, "rows_written") == 1 ? " row written" : " rows written");
        const char *kind = str(rec, "run_kind");
        if (kind && strcmp(kind, "full") == 0) kbuf_puts(b, " · full run");
        /* A run that completed with files it could not read or a mapping
         * that failed says so in the list, not only once opened. */
        long long errors = (long long)json_array_size(json_object_get(rec, "errors"));
        if (errors > 0)
            html_printf(b, " · <span class=\"error\">%L error%R</span>", errors,
                        errors == 1 ? "" : "s");
    } else {
        const char *err = str(rec, "error");
        char cut[124];
        snprintf(cut, sizeof cut, "%s", err ? err : status);
        if (err && strlen(err) >= sizeof cut - 1) strcpy(cut + sizeof cut - 4, "...");
        html_printf(b, "<span class=\"error\" title=\"%s\">%s</span>", err ? err : "", cut);
    }
}

static void fact(kbuf *b, const char *name, json_t *v)
{
    html_printf(b, "<dt>%s</dt><dd>", name);
    if (json_is_integer(v))
        html_count(b, json_integer_value(v));
    else if (json_is_string(v))
        html_printf(b, "%s", json_string_value(v));
    else
        kbuf_puts(b, "—");
    kbuf_puts(b, "</dd>");
}

static void time_fact(kbuf *b, const char *name, int64_t ms)
{
    html_printf(b, "<dt>%s</dt><dd>", name);
    if (ms > 0)
        html_time(b, ms);
    else
        kbuf_puts(b, "—");
    kbuf_puts(b, "</dd>");
}

/* The errors ({file, line, message}) or skipped lines ({file, line, reason}). */
static void problems(kbuf *b, json_t *list, const char *title, const char *text_key,
                     const char *cls)
{
    size_t n = json_array_size(list);
    if (n == 0) return;
    html_printf(b, "<h3>%s (%L)</h3><ul class=\"problems\">", title, (long long)n);
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        if (i == PROBLEMS_SHOWN) break;
        const char *text = str(e, text_key);
        if (text == NULL) text = str(e, "message");
        html_printf(b, "<li class=\"%s\">", cls);
        const char *file = str(e, "file");
        size_t n_file = file ? strlen(file) : 0;
        if (file && text && strncmp(text, file, n_file) == 0 && text[n_file] == ':')
            file = NULL; /* the message starts with the file's name already */
        if (file) html_printf(b, "%s", file);
        if (file && json_is_integer(json_object_get(e, "line")))
            html_printf(b, ":%L", (long long)num(e, "line"));
        html_printf(b, "%R%s</li>", file ? " — " : "", text ? text : "");
    }
    if (n > PROBLEMS_SHOWN)
        html_printf(b, "<li class=\"%s\">… and %L more</li>", cls, (long long)(n - PROBLEMS_SHOWN));
    kbuf_puts(b, "</ul>");
}

/* Everything known about a run: counts, kind, times, errors. */
static void job_details(kbuf *b, json_t *row, json_t *rec, const char *slug)
{
    const char *error = str(rec, "error");
    const char *status = str(rec, "status");
    if (error && strcmp(status, "completed") != 0)
        html_printf(b, "<p class=\"notice %R\">%s</p>",
                    strcmp(status, "queued") == 0 ? "warn" : "error", error);
    kbuf_puts(b, "<div class=\"facts-grid\"><dl class=\"facts\">");
    fact(b, "Files processed", json_object_get(rec, "files_processed"));
    fact(b, "Rows read", json_object_get(rec, "rows_read"));
    fact(b, "Rows written", json_object_get(rec, "rows_written"));
    fact(b, "Rows deduplicated", json_object_get(rec, "rows_deduped"));
    fact(b, "Partitions written", json_object_get(rec, "partitions_written"));
    fact(b, "Run kind", json_object_get(rec, "run_kind"));
    if (json_is_string(json_object_get(rec, "full_reason")))
        fact(b, "Full run because", json_object_get(rec, "full_reason"));
    kbuf_puts(b, "</dl><dl class=\"facts\">");
    fact(b, "Trigger", json_object_get(rec, "trigger"));
    html_printf(b, "<dt>Asked for</dt><dd>%R</dd>",
                json_is_true(json_object_get(rec, "clean")) ? "a full run" : "an incremental run");
    fact(b, "Attempts", json_object_get(rec, "attempts"));
    if (json_is_integer(json_object_get(rec, "configVersion")))
        html_printf(b, "<dt>Config version</dt><dd><a href=\"/p/%U/editor#history\">v%L</a></dd>",
                    slug, (long long)num(rec, "configVersion"));
    time_fact(b, "Queued", num(row, "enqueued_at"));
    time_fact(b, "Started", num(row, "started_at"));
    time_fact(b, "Finished", num(row, "completed_at"));
    kbuf_puts(b, "</dl></div>");
    problems(b, json_object_get(rec, "errors"), "Errors", "message", "");
    /* Not "skip": that is the skip link's class, 9,999 px to the left. */
    problems(b, json_object_get(rec, "skipped"), "Lines skipped and values read as null", "reason",
             "skipped");
}

static void duration_cell(kbuf *b, json_t *row)
{
    int64_t started = num(row, "started_at"), done = num(row, "completed_at");
    const char *status = str(row, "status");
    if (started && done) {
        int64_t ms = done - started;
        if (ms < 1000)
            html_printf(b, "<td class=\"num nowrap\">%L ms</td>", (long long)ms);
        else if (ms < 60000)
            html_printf(b, "<td class=\"num nowrap\">%L.%d s</td>", (long long)(ms / 1000),
                        (int)(ms % 1000 / 100));
        else
            html_printf(b, "<td class=\"num nowrap\">%L min %L s</td>", (long long)(ms / 60000),
                        (long long)(ms / 1000 % 60));
    } else if (started && strcmp(status, "running") == 0) {
        html_printf(b, "<td class=\"num nowrap\" data-since=\"%L\">…</td>", (long long)started);
    } else {
        kbuf_puts(b, "<td class=\"num nowrap\">—</td>");
    }
}

/* A run's row, and the row of its details, open or closed. */
static void summary_row(kbuf *b, json_t *row, json_t *rec, int expanded)
{
    const char *id = str(rec, "id");
    html_printf(b,
                "<tr id=\"job-%s\" data-status=\"%s\"><td><button type=\"button\" "
                "class=\"toggle\" aria-expanded=\"%R\" aria-controls=\"d-%s\">%s</button></td><td>",
                id, str(rec, "status"), expanded ? "true" : "false", id, id);
    status_badge(b, str(rec, "status"));
    html_printf(b, "</td><td>%s</td><td class=\"progress-text\">", str(rec, "trigger"));
    progress_text(b, rec);
    kbuf_puts(b, "</td><td class=\"nowrap\">");
    html_time(b, num(row, "started_at"));
    if (!num(row, "started_at")) kbuf_puts(b, "—");
    kbuf_puts(b, "</td>");
    duration_cell(b, row);
    kbuf_puts(b, "</tr>");
}

static void details_row(kbuf *b, json_t *row, json_t *rec, const char *slug, int expanded)
{
    const char *id = str(rec, "id");
    html_printf(b, "<tr class=\"details\" id=\"d-%s\"%R><td colspan=\"6\">", id,
                expanded ? "" : " hidden");
    job_details(b, row, rec, slug);
    html_printf(b, "<p><a href=\"/p/%U/jobs/%U\">This run on its own page</a></p></td></tr>", slug,
                id);
}

typedef void (*row_fn)(kbuf *b, json_t *row, json_t *rec, const char *slug, int expanded);

static void summary_fn(kbuf *b, json_t *row, json_t *rec, const char *slug, int expanded)
{
    (void)slug;
    summary_row(b, row, rec, expanded);
}

/* Writes a row signed with the signature of its closed form: whether the
 * address opens it, or the reader did, never makes it look changed. */
static void signed_row(kbuf *b, row_fn fn, json_t *row, json_t *rec, const char *slug, int expanded)
{
    size_t at = b->len;
    fn(b, row, rec, slug, 0);
    uint64_t sig = html_hash(b, at);
    if (expanded) {
        kbuf_truncate(b, at);
        fn(b, row, rec, slug, 1);
    }
    html_sign_as(b, at, sig);
}

static void job_row(kbuf *b, json_t *row, const char *slug, const char *open)
{
    json_t *rec = job_record(row);
    int expanded = open && strcmp(open, str(rec, "id")) == 0;
    signed_row(b, summary_fn, row, rec, slug, expanded);
    signed_row(b, details_row, row, rec, slug, expanded);
    json_decref(rec);
}

static void scheduled_row(kbuf *b, int events, int64_t at)
{
    size_t start = b->len;
    html_printf(b, "<tr id=\"scheduled\" data-status=\"scheduled\"><td><span class=\"job-id\">next "
                   "run</span></td><td>");
    status_badge(b, "scheduled");
    html_printf(b,
                "</td><td>webhook</td><td><span class=\"countdown\" data-due=\"%L\">runs "
                "soon</span> · %d upload%R in the batch</td><td class=\"nowrap\">—</td>"
                "<td class=\"num\">—</td></tr>",
                (long long)at, events, events == 1 ? "" : "s");
    html_sign(b, start);
}

/* What an empty list tells the user to do: the folders to upload into. */
static void empty_state(kbuf *b, service *svc, const char *slug, int can_run)
{
    json_t *config = api_live_config(svc, slug, NULL);
    json_t *sources = json_object_get(config, "source_containers");
    kbuf_puts(b, "<section class=\"empty\"><p><strong>No runs yet.</strong></p>");
    if (json_array_size(sources) == 0) {
        html_printf(b,
                    "<p>This pipeline has no source yet: add one in the <a "
                    "href=\"/p/%U/editor\">editor</a>, then upload files into its folder.</p>",
                    slug);
    } else {
        kbuf_puts(b, "<p>Upload a file into ");
        size_t i;
        json_t *s;
        json_array_foreach(sources, i, s)
        {
            const char *prefix = str(s, "path_prefix");
            html_printf(b, "%R<a href=\"/lake?prefix=%U\"><code>%s</code></a>",
                        i == 0                              ? ""
                        : i + 1 == json_array_size(sources) ? " or "
                                                            : ", ",
                        prefix, prefix);
        }
        html_printf(b,
                    " on the Lake page: a run starts 5 seconds after the last upload of a "
                    "batch%R</p>",
                    can_run ? ". Or press <strong>Run</strong> to read what is there now." : ".");
    }
    kbuf_puts(b, "</section>");
    json_decref(config);
}

typedef struct list_view {
    const char *before; /* keyset cursor: the last job of the previous page */
    long long size;
    const char *open; /* a job whose details start open */
} list_view;

static void view_query(kbuf *b, const char *before, long long size)
{
    if (before) html_printf(b, "?before=%U", before);
    if (size != PAGE_DEFAULT) html_printf(b, "%RpageSize=%L", before ? "&amp;" : "?", size);
}

static void pager(kbuf *b, const char *slug, const list_view *v, long long shown, long long offset,
                  long long total, const char *next)
{
    kbuf_puts(b, "<nav class=\"pager\" aria-label=\"Pages of runs\"><span>");
    if (total > 0) {
        kbuf_puts(b, "Runs ");
        html_count(b, offset + 1);
        kbuf_puts(b, "–");
        html_count(b, offset + shown);
        kbuf_puts(b, " of ");
        html_count(b, total);
    }
    kbuf_puts(b, " · per page:");
    static const long long sizes[] = {25, 50, 100};
    for (int i = 0; i < 3; i++) {
        if (sizes[i] == v->size) {
            html_printf(b, " <strong aria-current=\"true\">%L</strong>", sizes[i]);
            continue;
        }
        html_printf(b, " <a href=\"/p/%U/jobs", slug);
        view_query(b, NULL, sizes[i]);
        html_printf(b, "\">%L</a>", sizes[i]);
    }
    kbuf_puts(b, "</span><span class=\"links\">");
    if (v->before) {
        html_printf(b, "<a class=\"button small\" href=\"/p/%U/jobs", slug);
        view_query(b, NULL, v->size);
        kbuf_puts(b, "\">← Newest</a>");
    }
    if (next) {
        html_printf(b, "<a class=\"button small\" href=\"/p/%U/jobs", slug);
        view_query(b, next, v->size);
        kbuf_puts(b, "\" rel=\"next\">Older →</a>");
    }
    kbuf_puts(b, "</span></nav>");
}

/* The live region: the table of runs (with the waiting batch on the first
 * page), the pager, or the empty state. Returns -1 when the cursor is not a
 * job of this pipeline. */
static int live_region(kbuf *b, service *svc, const char *slug, const list_view *v, int can_run)
{
    json_t *rows, *cursor = NULL;
    kbuf sql = {0};
    kbuf_puts(&sql, JOB_SELECT);
    if (v->before) {
        cursor = db_query_one(svc->db, "SELECT enqueued_at FROM jobs WHERE id = ? AND pipeline = ?",
                              "ss", v->before, slug);
        if (cursor == NULL) return kbuf_free(&sql), -1;
        kbuf_puts(&sql, "WHERE pipeline = ? AND (enqueued_at, id) < (?, ?) "
                        "ORDER BY enqueued_at DESC, id DESC LIMIT ?");
        rows = db_query(svc->db, kbuf_cstr(&sql), "sisi", slug, num(cursor, "enqueued_at"),
                        v->before, (int64_t)v->size);
    } else {
        kbuf_puts(&sql, "WHERE pipeline = ? ORDER BY enqueued_at DESC, id DESC LIMIT ?");
        rows = db_query(svc->db, kbuf_cstr(&sql), "si", slug, (int64_t)v->size);
    }
    kbuf_free(&sql);
    json_t *total =
        db_query_one(svc->db, "SELECT count(*) AS n FROM jobs WHERE pipeline = ?", "s", slug);
    json_t *newer = cursor ? db_query_one(svc->db,
                                          "SELECT count(*) AS n FROM jobs WHERE pipeline = ? "
                                          "AND (enqueued_at, id) >= (?, ?)",
                                          "sis", slug, num(cursor, "enqueued_at"), v->before)
                           : NULL;
    int64_t at = 0;
    int events = v->before ? 0 : debouncer_pending(svc->debounce, slug, &at);
    size_t n = json_array_size(rows);
    if (n == 0 && events == 0 && !v->before) {
        empty_state(b, svc, slug, can_run);
    } else {
        kbuf_puts(b, "<div class=\"table-wrap\"><table class=\"grid jobs\"><caption "
                     "class=\"visually-hidden\">Runs of this pipeline, newest first</caption>"
                     "<thead><tr><th scope=\"col\">Job</th><th scope=\"col\">Status</th>"
                     "<th scope=\"col\">Trigger</th><th scope=\"col\">Progress</th>"
                     "<th scope=\"col\">Started</th><th scope=\"col\" class=\"num\">Duration</th>"
                     "</tr></thead><tbody>");
        if (events) scheduled_row(b, events, at);
        size_t i;
        json_t *row;
        json_array_foreach(rows, i, row) job_row(b, row, slug, v->open);
        kbuf_puts(b, "</tbody></table></div>");
        const char *next = n == (size_t)v->size ? str(json_array_get(rows, n - 1), "id") : NULL;
        pager(b, slug, v, (long long)n, newer ? num(newer, "n") : 0, num(total, "n"), next);
    }
    json_decref(rows);
    json_decref(cursor);
    json_decref(total);
    json_decref(newer);
    return 0;
}

static void run_controls(kbuf *b)
{
    kbuf_puts(b, "<label class=\"check\" for=\"full-run\"><input type=\"checkbox\" id=\"full-run\">"
                 "Full run (re-read every file)</label>"
                 "<button type=\"button\" class=\"primary\" id=\"run\">Run now</button>");
}

void web_jobs(service *svc, http_req *rq, http_resp *out)
{
    const char *slug = rq->params[0];
    json_t *pipeline = web_pipeline(svc, rq, out, slug);
    if (pipeline == NULL) return;
    const char *ps = req_query(rq, "pageSize"), *before = req_query(rq, "before");
    list_view v = {.before = before && *before ? before : NULL,
                   .size = ps ? strtoll(ps, NULL, 10) : PAGE_DEFAULT,
                   .open = req_query(rq, "open")};
    if (v.size < 1 || v.size > PAGE_MAX) v.size = PAGE_DEFAULT;
    int can_run = rq->who.role >= ROLE_EDITOR;
    if (req_query(rq, "fragment")) { /* the live region alone, for the page script */
        kbuf b = {0};
        if (live_region(&b, svc, slug, &v, can_run) != 0)
            kbuf_puts(&b, "<p class=\"notice error\">This page of runs is gone.</p>");
        reply_html(out, &b);
        json_decref(pipeline);
        return;
    }
    page p = pipeline_page(svc, rq, pipeline, "Jobs", "jobs", "jobs.js");
    page_begin(&p);
    kbuf_puts(&p.b, "<div class=\"page-head\"><h1>Jobs</h1><div class=\"actions\">"
                    "<span class=\"live\" id=\"live\" aria-live=\"polite\"></span>");
    if (can_run) run_controls(&p.b);
    kbuf_puts(&p.b, "</div><p class=\"lede\">Each run reads the files that are new in the "
                    "pipeline's source folders, maps them and writes its tables. Open a run to "
                    "see what it did.</p></div>");
    html_printf(&p.b, "<div id=\"jobs-live\" data-fragment=\"/p/%U/jobs?fragment=1", slug);
    if (v.before) html_printf(&p.b, "&amp;before=%U", v.before);
    if (v.size != PAGE_DEFAULT) html_printf(&p.b, "&amp;pageSize=%L", v.size);
    kbuf_puts(&p.b, "\">");
    if (live_region(&p.b, svc, slug, &v, can_run) != 0)
        html_printf(&p.b,
                    "<p class=\"notice error\">There is no run \"%s\" to page from. <a "
                    "href=\"/p/%U/jobs\">Show the newest runs</a>.</p>",
                    v.before, slug);
    kbuf_puts(&p.b, "</div>");
    page_end(&p, out);
    json_decref(pipeline);
}

void web_job(service *svc, http_req *rq, http_resp *out)
{
    const char *slug = rq->params[0], *id = rq->params[1];
    json_t *pipeline = web_pipeline(svc, rq, out, slug);
    if (pipeline == NULL) return;
    kbuf sql = {0};
    kbuf_puts(&sql, JOB_SELECT);
    kbuf_puts(&sql, "WHERE id = ? AND pipeline = ?");
    json_t *row = db_query_one(svc->db, kbuf_cstr(&sql), "ss", id, slug);
    kbuf_free(&sql);
    if (row == NULL) {
        char msg[300];
        snprintf(msg, sizeof msg, "Pipeline %s has no run %s.", slug, id);
        page_error(svc, rq, out, 404, "No such run", msg);
        json_decref(pipeline);
        return;
    }
    json_t *rec = job_record(row);
    page p = pipeline_page(svc, rq, pipeline, id, "jobs", "jobs.js");
    page_begin(&p);
    html_printf(&p.b,
                "<div class=\"page-head\"><h1 class=\"job-id\">%s</h1><div class=\"actions\">", id);
    status_badge(&p.b, str(rec, "status"));
    html_printf(&p.b,
                "</div><p class=\"lede\"><a href=\"/p/%U/jobs\">← All runs</a> · %s</p></div>",
                slug, str(rec, "trigger"));
    size_t at = p.b.len;
    html_printf(&p.b,
                "<section class=\"card\" id=\"job-one\" data-job=\"%s\"><p "
                "class=\"progress-text\">",
                id);
    if (!str(rec, "error") || strcmp(str(rec, "status"), "completed") == 0)
        progress_text(&p.b, rec);
    kbuf_puts(&p.b, "</p>");
    job_details(&p.b, row, rec, slug);
    kbuf_puts(&p.b, "</section>");
    html_sign(&p.b, at);
    page_end(&p, out);
    json_decref(rec);
    json_decref(row);
    json_decref(pipeline);
}
