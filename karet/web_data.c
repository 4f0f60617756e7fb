/* The Data page: the pipeline's tables with their row counts, files, size
 * and last update, and each one's columns (from the very JSON the tables API
 * serves), saved queries, and the SQL editor whose results and chart the
 * page script (data.js) draws. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "web.h"

static int64_t num(json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* An ISO time of the API ("2026-11-12T03:10:00.000Z") as a <time>. */
static void iso(kbuf *b, const char *iso)
{
    html_printf(b, "<time datetime=\"%s\">%s</time>", iso, iso);
}

static void table_item(kbuf *b, json_t *t, json_t *last_run)
{
    const char *id = str(t, "id");
    size_t at = b->len;
    html_printf(b,
                "<li data-table=\"%s\"><div class=\"tname\">%s <button type=\"button\" "
                "class=\"quiet small\" data-query=\"%s\" aria-label=\"Query %s\">Query</button>"
                "</div><div class=\"stats\"><span class=\"rows\" data-rows=\"%L\">",
                id, str(t, "name") ? str(t, "name") : id, id, id, (long long)num(t, "rowCount"));
    html_count(b, num(t, "rowCount"));
    html_printf(b, " row%R</span><span>%L file%R</span><span>", num(t, "rowCount") == 1 ? "" : "s",
                (long long)num(t, "fileCount"), num(t, "fileCount") == 1 ? "" : "s");
    html_bytes(b, num(t, "bytes"));
    kbuf_puts(b, "</span>");
    const char *commit = str(t, "lastCommitAt");
    if (commit && *commit) {
        kbuf_puts(b, "<span>updated ");
        iso(b, commit);
        kbuf_puts(b, "</span>");
    } else if (!json_is_true(json_object_get(t, "exists"))) {
        kbuf_puts(b, "<span>not written yet</span>");
    } else if (last_run) {
        kbuf_puts(b, "<span>last run ");
        html_time(b, num(last_run, "completed_at"));
        kbuf_puts(b, "</span>");
    }
    html_printf(
        b, "</div><details><summary>Columns of <code>%s</code></summary><ul class=\"cols\">", id);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(t, "schema"), i, c)
        html_printf(b, "<li><span>%s</span><span class=\"type\">%s</span></li>", str(c, "name"),
                    str(c, "type"));
    kbuf_puts(b, "</ul>");
    json_t *keys[] = {json_object_get(t, "partitionKeys"), json_object_get(t, "dedupKeys")};
    const char *labels[] = {"Partitioned by", "Deduplicated on"};
    for (int k = 0; k < 2; k++) {
        if (json_array_size(keys[k]) == 0) continue;
        html_printf(b, "<p class=\"hint\">%s ", labels[k]);
        json_array_foreach(keys[k], i, c)
            html_printf(b, "%R<code>%s</code>", i ? ", " : "", json_string_value(c));
        kbuf_puts(b, "</p>");
    }
    kbuf_puts(b, "</details></li>");
    html_sign(b, at);
}

static void tables_section(kbuf *b, service *svc, http_req *rq, json_t **first_id)
{
    http_resp tmp = {0};
    api_tables_list(svc, rq, &tmp); /* the same JSON GET /api/p/<slug>/tables serves */
    json_t *tables = json_object_get(tmp.json, "tables");
    json_t *last_run = db_query_one(svc->db,
                                    "SELECT completed_at FROM jobs WHERE pipeline = ? AND status = "
                                    "'completed' ORDER BY completed_at DESC LIMIT 1",
                                    "s", rq->params[0]);
    html_printf(b,
                "<section class=\"card\" id=\"tables\" aria-labelledby=\"tables-title\" "
                "data-fragment=\"/p/%U/data?fragment=1\"><h2 id=\"tables-title\">Tables</h2>",
                rq->params[0]);
    if (tmp.status != 200) {
        html_printf(b, "<p class=\"notice error\">The tables cannot be read: %s</p>",
                    str(tmp.json, "message"));
    } else if (json_array_size(tables) == 0) {
        html_printf(b,
                    "<p class=\"hint\">This pipeline has no table yet: add one in the <a "
                    "href=\"/p/%U/editor\">editor</a>.</p>",
                    rq->params[0]);
    } else {
        kbuf_puts(b, "<ul class=\"table-list\" id=\"table-list\">");
        size_t i;
        json_t *t;
        json_array_foreach(tables, i, t) table_item(b, t, last_run);
        kbuf_puts(b, "</ul>");
        *first_id = json_incref(json_object_get(json_array_get(tables, 0), "id"));
    }
    kbuf_puts(b, "</section>");
    json_decref(last_run);
    json_decref(tmp.json);
    for (int i = 0; i < tmp.n_headers; i++) free(tmp.headers[i][0]), free(tmp.headers[i][1]);
}

static void saved_section(kbuf *b, service *svc, http_req *rq, int can_edit)
{
    http_resp tmp = {0};
    api_queries_list(svc, rq, &tmp);
    json_t *queries = json_object_get(tmp.json, "queries");
    kbuf_puts(b, "<section class=\"card\" aria-labelledby=\"saved-title\"><h2 "
                 "id=\"saved-title\">Saved queries</h2><ul class=\"saved\" id=\"saved\">");
    size_t i;
    json_t *q;
    json_array_foreach(queries, i, q)
    {
        html_printf(b,
                    "<li><button type=\"button\" class=\"load\" data-sql=\"%s\" title=\"%s\">%s"
                    "</button>",
                    str(q, "sql"), str(q, "sql"), str(q, "name"));
        if (can_edit)
            html_printf(b,
                        "<button type=\"button\" class=\"quiet icon-button\" data-delete-query="
                        "\"%s\" data-name=\"%s\" aria-label=\"Delete saved query %s\">✕</button>",
                        str(q, "id"), str(q, "name"), str(q, "name"));
        kbuf_puts(b, "</li>");
    }
    html_printf(b, "</ul><p class=\"hint\" id=\"saved-empty\"%R>None yet%R</p></section>",
                json_array_size(queries) ? " hidden" : "",
                can_edit ? ": write a query and press Save query." : ".");
    json_decref(tmp.json);
}

void web_data(service *svc, http_req *rq, http_resp *out)
{
    const char *slug = rq->params[0];
    json_t *pipeline = web_pipeline(svc, rq, out, slug);
    if (pipeline == NULL) return;
    int can_edit = rq->who.role >= ROLE_EDITOR;
    if (req_query(rq, "fragment")) { /* the tables alone, when a run changed them */
        kbuf b = {0};
        json_t *first = NULL;
        tables_section(&b, svc, rq, &first);
        json_decref(first);
        reply_html(out, &b);
        json_decref(pipeline);
        return;
    }
    page p = pipeline_page(svc, rq, pipeline, "Data", "data", "data.js");
    kbuf side = {0};
    json_t *first = NULL;
    tables_section(&side, svc, rq, &first);
    saved_section(&side, svc, rq, can_edit);
    const char *sql = req_query(rq, "sql");
    char dflt[200] = "";
    if (json_is_string(first))
        snprintf(dflt, sizeof dflt, "SELECT * FROM %s LIMIT 100", json_string_value(first));
    page_begin(&p);
    html_printf(&p.b,
                "<div class=\"page-head\"><h1>Data</h1><p class=\"lede\">The pipeline's tables, "
                "with DuckDB SQL over them: a table's name is its id.</p></div>"
                "<div class=\"data-layout\"><div class=\"work\"><div class=\"editor-box\">"
                "<label class=\"visually-hidden\" for=\"sql\">SQL query</label>"
                "<textarea id=\"sql\" spellcheck=\"false\" rows=\"6\" placeholder=\"%s\" "
                "data-autorun=\"%R\">%s</textarea><div class=\"editor-bar\"><span><kbd>Ctrl</kbd>+"
                "<kbd>Enter</kbd> runs it</span><span class=\"spacer\"></span>%R"
                "<button type=\"button\" class=\"primary\" id=\"run-sql\">Run</button></div></div>"
                "<section class=\"results\" id=\"results\" aria-live=\"polite\" "
                "aria-label=\"Results\"></section></div><aside>",
                dflt[0] ? dflt : "SELECT 1", sql ? "1" : "", sql ? sql : dflt,
                can_edit ? "<button type=\"button\" id=\"save-query\">Save query</button>" : "");
    kbuf_putn(&p.b, side.data ? side.data : "", side.len);
    kbuf_puts(&p.b, "</aside></div>");
    page_end(&p, out);
    kbuf_free(&side);
    json_decref(first);
    json_decref(pipeline);
}
