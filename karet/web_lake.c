/* The lake browser: one folder of the lake at a time (folders, then files
 * with size and date), which pipelines read it, and, for editors, upload by
 * picking or dropping files, and delete. The listing is also served alone
 * (?fragment=1) so the page script can show it again after a change. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "json_text.h"
#include "serve_lake.h"
#include "web.h"

#define MAX_ROWS 2000

/* The last segment of a key or folder ("a/b/c.csv" -> "c.csv", "a/b/" -> "b/"). */
static const char *base_name(const char *key)
{
    size_t n = strlen(key);
    const char *end = n && key[n - 1] == '/' ? key + n - 1 : key + n;
    const char *s = end;
    while (s > key && s[-1] != '/') s--;
    return s;
}

/* lake / pipelines / web / events /, each a link but the folder shown. */
static void crumbs(kbuf *b, const char *prefix)
{
    kbuf_puts(b, "<nav class=\"crumbs\" aria-label=\"Folder\">");
    if (*prefix)
        kbuf_puts(b, "<a href=\"/lake\">lake</a>");
    else
        kbuf_puts(b, "<strong aria-current=\"page\">lake</strong>");
    kbuf_puts(b, "<span aria-hidden=\"true\">/</span>");
    for (const char *s = prefix; *s;) {
        const char *slash = strchr(s, '/');
        if (slash == NULL) break;
        char part[1100], name[1100];
        snprintf(part, sizeof part, "%.*s", (int)(slash - prefix + 1), prefix);
        snprintf(name, sizeof name, "%.*s", (int)(slash - s), s);
        if (slash[1] == 0)
            html_printf(b, "<strong aria-current=\"page\">%s</strong>", name);
        else
            html_printf(b, "<a href=\"/lake?prefix=%U\">%s</a>", part, name);
        kbuf_puts(b, "<span aria-hidden=\"true\">/</span>");
        s = slash + 1;
    }
    kbuf_puts(b, "</nav>");
}

/* The pipelines whose sources read this folder, or lie under it. */
static void feeds(kbuf *b, service *svc, const char *prefix)
{
    json_t *rows = db_query(svc->db,
                            "SELECT p.slug, p.name, v.config FROM pipelines p JOIN "
                            "config_versions v ON v.pipeline = p.slug AND v.version = "
                            "p.live_version ORDER BY p.name",
                            "");
    size_t n = 0, i, j;
    json_t *row, *s;
    json_array_foreach(rows, i, row)
    {
        json_t *config = kjson_loads(json_string_value(json_object_get(row, "config")), 0, NULL);
        json_array_foreach(json_object_get(config, "source_containers"), j, s)
        {
            const char *sp = json_string_value(json_object_get(s, "path_prefix"));
            if (sp == NULL || !*sp) continue;
            int reads = strncmp(prefix, sp, strlen(sp)) == 0; /* this folder is inside it */
            int below = !reads && strncmp(sp, prefix, strlen(prefix)) == 0;
            if (!reads && !below) continue;
            if (n++ == 0) kbuf_puts(b, "<ul class=\"notice feeds\">");
            const char *slug = json_string_value(json_object_get(row, "slug"));
            if (reads)
                html_printf(b,
                            "<li>Files uploaded here feed <a href=\"/p/%U/jobs\">%s</a> (source "
                            "<code>%s</code>): a run starts 5 seconds after the last upload.</li>",
                            slug, json_string_value(json_object_get(row, "name")),
                            json_string_value(json_object_get(s, "id")));
            else
                html_printf(b,
                            "<li><a href=\"/lake?prefix=%U\"><code>%s</code></a> feeds <a "
                            "href=\"/p/%U/jobs\">%s</a>.</li>",
                            sp, sp, slug, json_string_value(json_object_get(row, "name")));
        }
        json_decref(config);
    }
    if (n) kbuf_puts(b, "</ul>");
    json_decref(rows);
}

static void listing(kbuf *b, service *svc, const char *prefix, int can_write)
{
    char err[1024];
    tl_lake *lake = lake_open_objects(svc, err, sizeof err);
    tl_object *objs = NULL;
    size_t len = 0;
    tl_error e = {0};
    if (lake == NULL || tl_lake_list_objects(lake, prefix, 0, &objs, &len, &e) != TL_OK) {
        html_printf(b, "<p class=\"notice error\">The lake cannot be listed: %s</p>",
                    lake ? e.message : err);
        tl_lake_close(lake);
        return;
    }
    tl_lake_close(lake);
    if (len == 0) {
        html_printf(b,
                    "<section class=\"empty\"><p><strong>This folder is empty.</strong></p>"
                    "<p>%s</p></section>",
                    can_write ? "Upload files into it by picking them or dropping them above."
                              : "Files appear here once an editor uploads them.");
        return;
    }
    int warehouse = strncmp(prefix, WAREHOUSE_DIR "/", strlen(WAREHOUSE_DIR) + 1) == 0;
    kbuf_puts(b, "<div class=\"table-wrap\"><table class=\"grid files\"><caption "
                 "class=\"visually-hidden\">Folders and files</caption><thead><tr>"
                 "<th scope=\"col\">Name</th><th scope=\"col\" class=\"num\">Size</th>"
                 "<th scope=\"col\">Modified</th><th scope=\"col\"><span "
                 "class=\"visually-hidden\">Actions</span></th></tr></thead><tbody>");
    size_t files = 0, folders = 0;
    int64_t bytes = 0;
    for (size_t i = 0; i < len; i++) {
        const char *key = objs[i].key;
        size_t kl = strlen(key);
        if (i >= MAX_ROWS) continue;
        if (kl && key[kl - 1] == '/') {
            folders++;
            html_printf(b,
                        "<tr><td><a class=\"folder-link\" href=\"/lake?prefix=%U\">%s</a></td>"
                        "<td class=\"num\">—</td><td>—</td><td></td></tr>",
                        key, base_name(key));
            continue;
        }
        files++;
        bytes += (int64_t)objs[i].size;
        html_printf(b, "<tr><td class=\"mono\">%s</td><td class=\"num nowrap\" title=\"%L bytes\">",
                    base_name(key), (long long)objs[i].size);
        html_bytes(b, (int64_t)objs[i].size);
        kbuf_puts(b, "</td><td class=\"nowrap\">");
        html_time(b, objs[i].modified_ms);
        html_printf(b,
                    "</td><td class=\"nowrap actions\"><a class=\"button small\" "
                    "href=\"/api/lake/object?key=%U\" download=\"%s\" aria-label=\"Download %s\">"
                    "Download</a>",
                    key, base_name(key), base_name(key));
        if (can_write && !warehouse)
            html_printf(b,
                        " <button type=\"button\" class=\"danger small\" data-delete=\"%s\" "
                        "aria-label=\"Delete %s\">Delete</button>",
                        key, base_name(key));
        kbuf_puts(b, "</td></tr>");
    }
    kbuf_puts(b, "</tbody></table></div><p class=\"hint\">");
    html_printf(b, "%L folder%R, %L file%R, ", (long long)folders, folders == 1 ? "" : "s",
                (long long)files, files == 1 ? "" : "s");
    html_bytes(b, bytes);
    if (len > MAX_ROWS)
        html_printf(b, ". Only the first %d of %L entries are shown.", MAX_ROWS, (long long)len);
    kbuf_puts(b, "</p>");
    tl_objects_free(objs, len);
}

static void upload_form(kbuf *b, const char *prefix)
{
    html_printf(b,
                "<section class=\"dropzone\" id=\"dropzone\" aria-labelledby=\"upload-title\">"
                "<h2 id=\"upload-title\" class=\"visually-hidden\">Upload</h2>"
                "<div class=\"row-form\"><div class=\"field\"><label for=\"upload-folder\">Upload "
                "into folder</label><input id=\"upload-folder\" value=\"%s\" spellcheck=\"false\" "
                "class=\"mono\" placeholder=\"(the lake root)\"></div>"
                "<div class=\"field\"><label for=\"upload-files\">Files</label><input "
                "type=\"file\" id=\"upload-files\" multiple></div></div>"
                "<p class=\"hint\">…or drop files anywhere on this box. A file with the name of "
                "one already there replaces it (a pipeline that read it then reads every file "
                "again).</p><ul class=\"uploads\" id=\"uploads\" aria-live=\"polite\"></ul>"
                "</section>",
                prefix);
}

static int prefix_ok(const char *prefix)
{
    size_t n = strlen(prefix);
    if (n == 0) return 1;
    if (n > 1000 || prefix[n - 1] != '/') return 0;
    char trimmed[1100];
    snprintf(trimmed, sizeof trimmed, "%.*s", (int)n - 1, prefix);
    return api_key_ok(trimmed);
}

void web_lake(service *svc, http_req *rq, http_resp *out)
{
    const char *prefix = req_query(rq, "prefix");
    if (prefix == NULL) prefix = "";
    if (!prefix_ok(prefix)) {
        page_error(svc, rq, out, 404, "No such folder",
                   "A folder is a relative path ending in '/', without '.' or '..' segments.");
        return;
    }
    int can_write = rq->who.role >= ROLE_EDITOR;
    if (req_query(rq, "fragment")) {
        kbuf b = {0};
        listing(&b, svc, prefix, can_write);
        reply_html(out, &b);
        return;
    }
    page p = {.svc = svc, .rq = rq, .title = "Lake", .tab = "lake", .script = "lake.js"};
    page_begin(&p);
    kbuf_puts(&p.b, "<div class=\"page-head\"><h1>Lake</h1><p class=\"lede\">The files of the "
                    "lake: pipelines read their sources' folders; <code>warehouse/</code> holds "
                    "the tables they write.</p></div>");
    crumbs(&p.b, prefix);
    feeds(&p.b, svc, prefix);
    if (can_write) upload_form(&p.b, prefix);
    html_printf(&p.b, "<div id=\"lake-live\" data-fragment=\"/lake?fragment=1&amp;prefix=%U\">",
                prefix);
    listing(&p.b, svc, prefix, can_write);
    kbuf_puts(&p.b, "</div>");
    page_end(&p, out);
}
