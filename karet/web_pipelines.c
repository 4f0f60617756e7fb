/* The pipelines page: a card per pipeline with the state of its last run
 * and the shape of its config, and (editors) a form to create one, blank
 * or from a template. */
#include <stdlib.h>
#include <string.h>

#include "json_text.h"
#include "serve_templates.h"
#include "web.h"

static void last_run(kbuf *b, json_t *row)
{
    const char *status = json_string_value(json_object_get(row, "status"));
    if (status == NULL) {
        kbuf_puts(b, "<p class=\"state\"><span class=\"dot\" aria-hidden=\"true\"></span>"
                     "No runs yet</p>");
        return;
    }
    int64_t done = json_integer_value(json_object_get(row, "completed_at"));
    int64_t started = json_integer_value(json_object_get(row, "started_at"));
    int64_t queued = json_integer_value(json_object_get(row, "enqueued_at"));
    html_printf(b,
                "<p class=\"state\"><span class=\"dot status-%s\" aria-hidden=\"true\"></span>"
                "Last run <a href=\"/p/%U/jobs/%U\">%s</a> ",
                status, json_string_value(json_object_get(row, "slug")),
                json_string_value(json_object_get(row, "job_id")), status);
    html_time_ago(b, done ? done : started ? started : queued);
    json_t *summary = kjson_loads(json_string_value(json_object_get(row, "summary")), 0, NULL);
    json_t *files = json_object_get(summary, "files_processed");
    if (json_is_integer(files))
        html_printf(b, " · %L file%R", (long long)json_integer_value(files),
                    json_integer_value(files) == 1 ? "" : "s");
    json_decref(summary);
    kbuf_puts(b, "</p>");
}

static void shape(kbuf *b, json_t *row)
{
    json_t *config = kjson_loads(json_string_value(json_object_get(row, "config")), 0, NULL);
    static const char *const parts[][2] = {{"source_containers", "source"},
                                           {"mappings", "mapping"},
                                           {"analytic_tables", "table"},
                                           {"dimensions", "dimension"}};
    kbuf_puts(b, "<p class=\"meta\">");
    int shown = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        size_t n = json_array_size(json_object_get(config, parts[i][0]));
        if (n == 0 && i == 3) continue;
        html_printf(b, "%R%L %R%R", shown++ ? " · " : "", (long long)n, parts[i][1],
                    n == 1 ? "" : "s");
    }
    kbuf_puts(b, "</p>");
    json_decref(config);
}

static void card(kbuf *b, json_t *row)
{
    const char *slug = json_string_value(json_object_get(row, "slug"));
    html_printf(b,
                "<li class=\"card pipeline\"><h2><a href=\"/p/%U/jobs\">%s</a></h2>"
                "<p class=\"slug\"><code>%s</code></p>",
                slug, json_string_value(json_object_get(row, "name")), slug);
    last_run(b, row);
    shape(b, row);
    html_printf(b,
                "<p class=\"links\"><a href=\"/p/%U/jobs\">Jobs</a><a href=\"/p/%U/data\">Data</a>"
                "<a href=\"/p/%U/editor\">Editor</a></p></li>",
                slug, slug, slug);
}

/* A template's title: its config's "name", else its file name. */
static void template_option(kbuf *b, const char *id, const char *json, int selected)
{
    json_t *t = json ? kjson_loads(json, 0, NULL) : NULL;
    const char *title = json_string_value(json_object_get(t, "name"));
    html_printf(b, "<option value=\"%s\"%R>%s</option>", id, selected ? " selected" : "",
                title ? title : id);
    json_decref(t);
}

static void create_form(kbuf *b)
{
    kbuf_puts(b, "<section class=\"card create\" aria-labelledby=\"new-title\">"
                 "<h2 id=\"new-title\">New pipeline</h2>"
                 "<form id=\"new-pipeline\" class=\"row-form\">"
                 "<div class=\"field\"><label for=\"new-name\">Name</label>"
                 "<input id=\"new-name\" name=\"name\" required maxlength=\"200\" "
                 "placeholder=\"Web access logs\"></div>"
                 "<div class=\"field\"><label for=\"new-template\">Start from</label>"
                 "<select id=\"new-template\" name=\"template\">");
    html_printf(b, "<option value=\"blank\" selected>Blank</option>");
    for (const karet_template *t = KARET_TEMPLATES; t->name; t++)
        template_option(b, t->name, t->json, 0);
    html_printf(b, "<option value=\"csv_events\">CSV events (time, user, value)</option>");
    kbuf_puts(b, "</select></div><button type=\"submit\" class=\"primary\">Create</button>"
                 "<p class=\"error\" id=\"new-error\" role=\"alert\" hidden></p></form>"
                 "<p class=\"hint\">A template brings a source folder, a mapping and a table; "
                 "upload files into its folder from the Lake page and the first run starts "
                 "by itself.</p></section>");
}

void web_pipelines(service *svc, http_req *rq, http_resp *out)
{
    json_t *rows = db_query(svc->db,
                            "SELECT p.slug, p.name, v.config, j.id AS job_id, j.status, "
                            "j.enqueued_at, j.started_at, j.completed_at, j.summary "
                            "FROM pipelines p LEFT JOIN config_versions v ON v.pipeline = p.slug "
                            "AND v.version = p.live_version LEFT JOIN jobs j ON j.id = "
                            "(SELECT id FROM jobs WHERE pipeline = p.slug "
                            "ORDER BY enqueued_at DESC, id DESC LIMIT 1) ORDER BY p.name, p.slug",
                            "");
    page p = {
        .svc = svc, .rq = rq, .title = "Pipelines", .tab = "pipelines", .script = "pipelines.js"};
    page_begin(&p);
    kbuf_puts(&p.b, "<div class=\"page-head\"><h1>Pipelines</h1></div>");
    if (json_array_size(rows) == 0) {
        html_printf(&p.b,
                    "<section class=\"empty\"><p><strong>No pipelines yet.</strong></p>"
                    "<p>%s</p></section>",
                    page_can(&p, ROLE_EDITOR)
                        ? "Create one below: a template gives you a working example to adapt."
                        : "Ask an editor or an admin to create one.");
    } else {
        kbuf_puts(&p.b, "<ul class=\"cards\">");
        size_t i;
        json_t *row;
        json_array_foreach(rows, i, row) card(&p.b, row);
        kbuf_puts(&p.b, "</ul>");
    }
    if (page_can(&p, ROLE_EDITOR)) create_form(&p.b);
    json_decref(rows);
    page_end(&p, out);
}
