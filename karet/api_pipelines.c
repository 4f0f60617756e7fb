/* Pipelines and their configs. A config is saved as a new version (the
 * versions are append-only; the newest 100 are kept, and any a queued or
 * running job is pinned to), and the pipeline's live version moves to it in
 * the same transaction. A save names the version it was made from
 * (X-Karet-Config-Version); a save from an older one is 412 stale_config.
 * A save (or revert) of what is live already makes no version: it answers
 * as a save, with the live version and "unchanged": true. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "auth.h"
#include "jobs.h"
#include "json_text.h"
#include "run.h"
#include "serve_lake.h"
#include "serve_templates.h"

#define KEEP_VERSIONS 100
#define VERSION_HEADER "X-Karet-Config-Version"

int api_slug_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 63 || !isalnum((unsigned char)s[0])) return 0;
    for (size_t i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-' ||
              s[i] == '_'))
            return 0;
    return 1;
}

json_t *api_pipeline(service *svc, const char *slug, http_resp *out)
{
    json_t *row = db_query_one(svc->db,
                               "SELECT slug, name, created_at, live_version FROM pipelines "
                               "WHERE slug = ?",
                               "s", slug);
    if (row == NULL) reply_error(out, 404, "pipeline_not_found", "no pipeline \"%s\"", slug);
    return row;
}

json_t *api_live_config(service *svc, const char *slug, int64_t *version)
{
    json_t *row = db_query_one(svc->db,
                               "SELECT v.version, v.config FROM pipelines p JOIN config_versions "
                               "v ON v.pipeline = p.slug AND v.version = p.live_version "
                               "WHERE p.slug = ?",
                               "s", slug);
    if (row == NULL) return NULL;
    if (version) *version = json_integer_value(json_object_get(row, "version"));
    json_t *config = kjson_loads(json_string_value(json_object_get(row, "config")), 0, NULL);
    json_decref(row);
    return config;
}

static json_t *pipeline_json(json_t *row)
{
    char buf[40];
    return json_pack("{s:O,s:O,s:O,s:s,s:O}", "id", json_object_get(row, "slug"), "slug",
                     json_object_get(row, "slug"), "name", json_object_get(row, "name"),
                     "createdAt",
                     iso_time(json_integer_value(json_object_get(row, "created_at")), buf, 40),
                     "configVersion", json_object_get(row, "live_version"));
}

/* The problems of a config (caller owns; empty when it is valid). */
static json_t *config_problems(json_t *config)
{
    json_t *problems = karet_validate(config);
    if (problems == NULL) problems = json_array();
    json_t *sources = json_object_get(config, "source_containers");
    size_t i;
    json_t *s;
    json_array_foreach(sources, i, s)
    {
        const char *prefix = json_string_value(json_object_get(s, "path_prefix"));
        if (prefix && strncmp(prefix, WAREHOUSE_DIR "/", strlen(WAREHOUSE_DIR) + 1) == 0) {
            char path[64];
            snprintf(path, sizeof path, "/source_containers/%zu/path_prefix", i);
            json_array_append_new(
                problems, json_pack("{s:s,s:s,s:s}", "path", path, "kind", "schema", "message",
                                    "a source may not read the warehouse/ folder, "
                                    "where the output tables live"));
        }
    }
    return problems;
}

/* 1 when the config is valid; otherwise replies 422 invalid_config. */
static int config_ok(json_t *config, http_resp *out)
{
    json_t *problems = config_problems(config);
    if (json_array_size(problems) == 0) {
        json_decref(problems);
        return 1;
    }
    json_t *first = json_array_get(problems, 0);
    char msg[600];
    snprintf(msg, sizeof msg, "%s: %s", json_string_value(json_object_get(first, "path")),
             json_string_value(json_object_get(first, "message")));
    reply_json(out, 422,
               json_pack("{s:s,s:s,s:o}", "error", "invalid_config", "message", msg, "problems",
                         problems));
    return 0;
}

/* The text configs are compared by: keys sorted, no spaces, reals in their
 * shortest form. A save of what is live, whatever its key order or spacing,
 * has the live config's text; a change of a value, of a type (2 or 2.0) or
 * of order within a list does not. NULL when memory runs out. */
static char *canonical_text(const json_t *config)
{
    return kjson_dumps(config, JSON_COMPACT | JSON_SORT_KEYS);
}

/* Whether version `live` of the pipeline holds exactly `config`. */
static bool is_live_config(service *svc, const char *slug, int64_t live, const json_t *config)
{
    json_t *row = db_query_one(svc->db,
                               "SELECT config FROM config_versions WHERE pipeline = ? AND "
                               "version = ?",
                               "si", slug, live);
    json_t *saved = kjson_loads(json_string_value(json_object_get(row, "config")), 0, NULL);
    json_decref(row);
    char *a = saved ? canonical_text(saved) : NULL, *b = a ? canonical_text(config) : NULL;
    bool same = a && b && strcmp(a, b) == 0;
    free(a);
    free(b);
    json_decref(saved);
    return same;
}

/* Saves config as the pipeline's next version and makes it live. expect > 0:
 * only if the live version is still expect (else *live_out tells it and the
 * result is 1). The precondition comes first: a save made from an older
 * version is stale even when it holds what is live now. A config that is
 * the live one makes no version (result 2, *version_out the live one).
 * Returns 0 saved (*version_out), 1 stale, 2 unchanged, -1 error. */
static int save_config(service *svc, const char *slug, const json_t *config, const char *author,
                       const char *note, int64_t expect, int64_t *version_out, int64_t *live_out)
{
    char *text = kjson_dumps(config, JSON_COMPACT);
    if (text == NULL) return -1;
    db_begin(svc->db);
    json_t *row = db_query_one(svc->db,
                               "SELECT p.live_version AS live, (SELECT coalesce(max(version), 0) "
                               "FROM config_versions WHERE pipeline = p.slug) AS top "
                               "FROM pipelines p WHERE p.slug = ?",
                               "s", slug);
    int rc = row ? 0 : -1;
    int64_t live = json_integer_value(json_object_get(row, "live"));
    int64_t next = json_integer_value(json_object_get(row, "top")) + 1;
    json_decref(row);
    *live_out = live;
    if (rc == 0 && expect > 0 && expect != live) rc = 1;
    if (rc == 0 && live > 0 && is_live_config(svc, slug, live, config)) {
        *version_out = live;
        rc = 2;
    }
    if (rc != 0) {
        db_rollback(svc->db);
        free(text);
        return rc;
    }
    int st = db_exec(svc->db, NULL,
                     "INSERT INTO config_versions (pipeline, version, config, author, note, "
                     "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                     "sisssi", slug, next, text, author, note, now_ms());
    free(text);
    st |= db_exec(svc->db, NULL, "UPDATE pipelines SET live_version = ? WHERE slug = ?", "is", next,
                  slug);
    st |= db_exec(svc->db, NULL,
                  "DELETE FROM config_versions WHERE pipeline = ? AND version <= ? AND "
                  "version NOT IN (SELECT config_version FROM jobs WHERE pipeline = ? AND "
                  "status IN ('queued', 'running') AND config_version IS NOT NULL)",
                  "sis", slug, next - KEEP_VERSIONS, slug);
    if (st != DB_OK) return db_rollback(svc->db), -1;
    *version_out = next;
    return db_commit(svc->db) == DB_OK ? 0 : -1;
}

/* ---- templates ---- */

/* A template of karet/templates/ with "{slug}" replaced (slugs need no
 * escaping in JSON: [a-z0-9_-]). */
static json_t *file_template(const char *name, const char *slug)
{
    for (const karet_template *t = KARET_TEMPLATES; t->name; t++) {
        if (strcmp(t->name, name) != 0) continue;
        size_t n = strlen(t->json), sl = strlen(slug), j = 0;
        char *text = malloc(n * (sl + 1) / 6 + n + 1);
        if (text == NULL) return NULL;
        for (size_t i = 0; i < n; i++) {
            if (strncmp(t->json + i, "{slug}", 6) == 0) {
                memcpy(text + j, slug, sl);
                j += sl;
                i += 5;
            } else {
                text[j++] = t->json[i];
            }
        }
        text[j] = 0;
        json_t *config = kjson_loads(text, 0, NULL);
        free(text);
        return config;
    }
    return NULL;
}

json_t *api_template(const char *name, const char *slug)
{
    if (strcmp(name, "blank") == 0)
        return json_pack("{s:i,s:[],s:[],s:[],s:[]}", "version", 1, "source_containers",
                         "dimensions", "mappings", "analytic_tables");
    if (strcmp(name, "csv_events") != 0) return file_template(name, slug);
    char prefix[160];
    snprintf(prefix, sizeof prefix, "pipelines/%s/events/", slug);
    return json_pack(
        "{s:i,s:[{s:s,s:s,s:s,s:s,s:[{s:s,s:s},{s:s,s:s},{s:s,s:s}]}],s:[],"
        "s:[{s:s,s:s,s:s,s:s,s:[{s:s,s:{s:s,s:s}},{s:s,s:{s:s,s:s}},{s:s,s:{s:s,s:s}}]}],"
        "s:[{s:s,s:s,s:[{s:s,s:s},{s:s,s:s},{s:s,s:s}],s:[],s:[s,s]}]}",
        "version", 1, "source_containers", "id", "events_src", "name", "Events", "path_prefix",
        prefix, "format", "csv", "schema", "name", "time", "type", "string", "name", "user", "type",
        "string", "name", "value", "type", "float64", "dimensions", "mappings", "id", "events_map",
        "name", "Events", "source_container_id", "events_src", "analytic_table_id", "events",
        "columns", "name", "time", "expr", "kind", "col", "name", "time", "name", "user", "expr",
        "kind", "col", "name", "user", "name", "value", "expr", "kind", "col", "name", "value",
        "analytic_tables", "id", "events", "name", "Events", "schema", "name", "time", "type",
        "string", "name", "user", "type", "string", "name", "value", "type", "float64",
        "partition_keys", "dedup_keys", "time", "user");
}

/* "blank, csv_events, ..." for messages (static). */
static const char *template_names(void)
{
    static char names[512];
    size_t n = (size_t)snprintf(names, sizeof names, "blank, csv_events");
    for (const karet_template *t = KARET_TEMPLATES; t->name && n < sizeof names; t++)
        n += (size_t)snprintf(names + n, sizeof names - n, ", %s", t->name);
    return names;
}

/* ---- pipelines ---- */

int api_create_pipeline(service *svc, const char *slug, const char *name, json_t *config,
                        const char *author, int64_t *version)
{
    int64_t live = 0;
    int st =
        db_exec(svc->db, NULL, "INSERT INTO pipelines (slug, name, created_at) VALUES (?, ?, ?)",
                "ssi", slug, name, now_ms());
    int rc = st == DB_CONSTRAINT ? 1 : st != DB_OK ? -1 : 0;
    if (rc == 0 && save_config(svc, slug, config, author, "created", 0, version, &live) != 0) {
        db_exec(svc->db, NULL, "DELETE FROM pipelines WHERE slug = ?", "s", slug);
        rc = -1;
    }
    return rc;
}

void api_pipelines_list(service *svc, http_req *rq, http_resp *out)
{
    (void)rq;
    json_t *rows = db_query(svc->db,
                            "SELECT slug, name, created_at, live_version FROM pipelines "
                            "ORDER BY name, slug",
                            "");
    json_t *list = json_array();
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) json_array_append_new(list, pipeline_json(row));
    json_decref(rows);
    reply_json(out, 200, json_pack("{s:o}", "pipelines", list));
}

/* A slug from a display name: lowercase letters and digits, '-' between. */
static void slugify(const char *name, char *out, size_t len)
{
    size_t j = 0;
    for (size_t i = 0; name[i] && j + 1 < len && j < 40; i++) {
        unsigned char c = (unsigned char)name[i];
        if (isalnum(c))
            out[j++] = (char)tolower(c);
        else if (j > 0 && out[j - 1] != '-')
            out[j++] = '-';
    }
    while (j > 0 && out[j - 1] == '-') j--;
    out[j] = 0;
}

void api_pipelines_create(service *svc, http_req *rq, http_resp *out)
{
    json_t *body = req_json_object(rq, out), *config = NULL;
    if (body == NULL) return;
    const char *name = json_string_value(json_object_get(body, "name"));
    const char *tpl = json_string_value(json_object_get(body, "template"));
    json_t *given = json_object_get(body, "config");
    json_t *slug_v = json_object_get(body, "slug");
    char slug[64] = "";
    if (name == NULL || !*name || strlen(name) > 200) {
        reply_error(out, 422, "invalid_name", "give the pipeline a name (1 to 200 characters)");
        goto done;
    }
    if (slug_v) {
        if (!api_slug_ok(json_string_value(slug_v))) {
            reply_error(out, 422, "invalid_slug",
                        "a slug is 1 to 63 lowercase letters, digits, '-' or '_', starting "
                        "with a letter or digit");
            goto done;
        }
        snprintf(slug, sizeof slug, "%s", json_string_value(slug_v));
    } else {
        slugify(name, slug, sizeof slug);
        if (!api_slug_ok(slug)) {
            char rnd[8];
            random_alnum(rnd, 6);
            snprintf(slug, sizeof slug, "p-%s", rnd);
        }
    }
    if (given && !json_is_object(given)) {
        reply_error(out, 422, "invalid_config", "config must be a JSON object");
        goto done;
    }
    config = given ? json_incref(given) : api_template(tpl ? tpl : "blank", slug);
    if (config == NULL) {
        reply_error(out, 422, "invalid_template", "no template \"%s\" (%s)", tpl ? tpl : "",
                    template_names());
        goto done;
    }
    if (json_is_string(json_object_get(config, "name")))
        json_object_set_new(config, "name", json_string(name));
    if (!config_ok(config, out)) goto done;
    int64_t version = 0;
    int st = api_create_pipeline(svc, slug, name, config, rq->who.username, &version);
    if (st == 1)
        reply_error(out, 409, "already_exists", "a pipeline \"%s\" exists", slug);
    else if (st != 0)
        reply_error(out, 500, "internal", "%s", db_error());
    else
        reply_json(out, 200,
                   json_pack("{s:b,s:s,s:s,s:I}", "ok", 1, "pipeline", slug, "name", name,
                             "configVersion", (json_int_t)version));
done:
    json_decref(config);
    json_decref(body);
}

void api_pipeline_get(service *svc, http_req *rq, http_resp *out)
{
    json_t *row = api_pipeline(svc, rq->params[0], out);
    if (row == NULL) return;
    reply_json(out, 200, pipeline_json(row));
    json_decref(row);
}

void api_pipeline_patch(service *svc, http_req *rq, http_resp *out)
{
    json_t *row = api_pipeline(svc, rq->params[0], out);
    json_t *body = row ? req_json_object(rq, out) : NULL;
    if (body == NULL) goto done;
    const char *name = json_string_value(json_object_get(body, "name"));
    if (json_object_get(body, "newSlug")) {
        reply_error(out, 422, "slug_immutable",
                    "a pipeline's slug names its tables and source folders and cannot change; "
                    "rename it with {\"name\": ...}");
    } else if (name == NULL || !*name || strlen(name) > 200) {
        reply_error(out, 422, "invalid_name", "give the new name as {\"name\": ...}");
    } else {
        db_exec(svc->db, NULL, "UPDATE pipelines SET name = ? WHERE slug = ?", "ss", name,
                rq->params[0]);
        reply_json(out, 200,
                   json_pack("{s:b,s:s,s:s}", "ok", 1, "pipeline", rq->params[0], "name", name));
    }
done:
    json_decref(body);
    json_decref(row);
}

void api_pipeline_delete(service *svc, http_req *rq, http_resp *out)
{
    const char *slug = rq->params[0];
    json_t *row = api_pipeline(svc, slug, out);
    if (row == NULL) return;
    json_decref(row);
    json_t *running = db_query_one(
        svc->db, "SELECT id FROM jobs WHERE pipeline = ? AND status = 'running'", "s", slug);
    if (running) {
        reply_error(out, 409, "job_running", "job %s is running: cancel it or wait, then delete",
                    json_string_value(json_object_get(running, "id")));
        json_decref(running);
        return;
    }
    char err[1024];
    int dropped = lake_drop_namespace(svc, slug, err, sizeof err);
    if (dropped < 0) {
        reply_error(out, 502, "storage_error", "cannot drop the pipeline's tables: %s", err);
        return;
    }
    db_begin(svc->db);
    db_exec(svc->db, NULL, "DELETE FROM jobs WHERE pipeline = ?", "s", slug);
    db_exec(svc->db, NULL, "DELETE FROM pipelines WHERE slug = ?", "s", slug);
    db_commit(svc->db);
    reply_json(out, 200,
               json_pack("{s:b,s:s,s:i}", "ok", 1, "pipeline", slug, "tablesDropped", dropped));
}

/* ---- configs ---- */

static void version_header(http_resp *out, int64_t version)
{
    char v[32], etag[40];
    snprintf(v, sizeof v, "%lld", (long long)version);
    snprintf(etag, sizeof etag, "\"%lld\"", (long long)version);
    reply_header(out, VERSION_HEADER, v);
    reply_header(out, "ETag", etag);
    reply_header(out, "Access-Control-Expose-Headers", VERSION_HEADER);
}

void api_config_get(service *svc, http_req *rq, http_resp *out)
{
    int64_t version = 0;
    json_t *row = api_pipeline(svc, rq->params[0], out);
    if (row == NULL) return;
    json_decref(row);
    json_t *config = api_live_config(svc, rq->params[0], &version);
    if (config == NULL) {
        reply_error(out, 404, "pipeline_config_not_found", "the pipeline has no config");
        return;
    }
    reply_json(out, 200, config);
    version_header(out, version);
}

/* The version the client says its edit started from: X-Karet-Config-Version,
 * or If-Match "N". 0 when it names none; -1 when it is malformed. */
static int64_t expected_version(http_req *rq)
{
    const char *v = req_header(rq, VERSION_HEADER);
    const char *m = req_header(rq, "If-Match");
    char buf[32];
    if (v == NULL && m) {
        size_t n = strlen(m);
        if (n >= 2 && m[0] == '"' && m[n - 1] == '"' && n < sizeof buf) {
            memcpy(buf, m + 1, n - 2);
            buf[n - 2] = 0;
            v = buf;
        } else {
            v = m;
        }
    }
    if (v == NULL) return 0;
    char *end;
    long long n = strtoll(v, &end, 10);
    return *v && *end == 0 && n > 0 ? n : -1;
}

void api_config_put(service *svc, http_req *rq, http_resp *out)
{
    const char *slug = rq->params[0];
    json_t *row = api_pipeline(svc, slug, out);
    if (row == NULL) return;
    json_decref(row);
    int64_t expect = expected_version(rq);
    if (expect < 0) {
        reply_error(out, 400, "invalid_version",
                    VERSION_HEADER " must be the positive version number the edit started from");
        return;
    }
    json_t *config = req_json_object(rq, out);
    if (config == NULL || !config_ok(config, out)) {
        json_decref(config);
        return;
    }
    int64_t version = 0, live = 0;
    int st = save_config(svc, slug, config, rq->who.username, NULL, expect, &version, &live);
    json_decref(config);
    if (st == 1) {
        reply_json(out, 412,
                   json_pack("{s:s,s:s,s:I}", "error", "stale_config", "message",
                             "the config changed since this edit started: reload it, reapply "
                             "the edit and save again",
                             "currentVersion", (json_int_t)live));
        version_header(out, live);
    } else if (st < 0) {
        reply_error(out, 500, "internal", "%s", db_error());
    } else {
        reply_json(out, 200,
                   json_pack("{s:b,s:I,s:b}", "ok", 1, "version", (json_int_t)version, "unchanged",
                             st == 2));
        version_header(out, version);
    }
}

static json_t *version_meta(json_t *row, int64_t live)
{
    char buf[40];
    int64_t v = json_integer_value(json_object_get(row, "version"));
    return json_pack("{s:I,s:s,s:O,s:O,s:b}", "version", (json_int_t)v, "savedAt",
                     iso_time(json_integer_value(json_object_get(row, "created_at")), buf, 40),
                     "author", json_object_get(row, "author"), "note", json_object_get(row, "note"),
                     "live", v == live);
}

void api_config_history(service *svc, http_req *rq, http_resp *out)
{
    json_t *p = api_pipeline(svc, rq->params[0], out);
    if (p == NULL) return;
    int64_t live = json_integer_value(json_object_get(p, "live_version"));
    json_decref(p);
    json_t *rows = db_query(svc->db,
                            "SELECT version, author, note, created_at FROM config_versions "
                            "WHERE pipeline = ? ORDER BY version DESC",
                            "s", rq->params[0]);
    json_t *list = json_array();
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) json_array_append_new(list, version_meta(row, live));
    json_decref(rows);
    reply_json(out, 200, json_pack("{s:o,s:I}", "versions", list, "current", (json_int_t)live));
}

/* The version named in the path, or NULL after replying. */
static json_t *path_version(service *svc, http_req *rq, http_resp *out, int64_t *live)
{
    json_t *p = api_pipeline(svc, rq->params[0], out);
    if (p == NULL) return NULL;
    *live = json_integer_value(json_object_get(p, "live_version"));
    json_decref(p);
    char *end;
    long long v = strtoll(rq->params[1], &end, 10);
    if (*end || v < 1) {
        reply_error(out, 400, "invalid_version", "a version is a positive integer");
        return NULL;
    }
    json_t *row = db_query_one(svc->db,
                               "SELECT version, config, author, note, created_at FROM "
                               "config_versions WHERE pipeline = ? AND version = ?",
                               "si", rq->params[0], (int64_t)v);
    if (row == NULL)
        reply_error(out, 404, "version_not_found", "no version %lld (the newest %d are kept)", v,
                    KEEP_VERSIONS);
    return row;
}

void api_config_version(service *svc, http_req *rq, http_resp *out)
{
    int64_t live;
    json_t *row = path_version(svc, rq, out, &live);
    if (row == NULL) return;
    json_t *meta = version_meta(row, live);
    json_object_set_new(meta, "config",
                        kjson_loads(json_string_value(json_object_get(row, "config")), 0, NULL));
    reply_json(out, 200, meta);
    json_decref(row);
}

void api_config_revert(service *svc, http_req *rq, http_resp *out)
{
    int64_t live, version = 0, now_live = 0;
    json_t *row = path_version(svc, rq, out, &live);
    if (row == NULL) return;
    json_t *config = kjson_loads(json_string_value(json_object_get(row, "config")), 0, NULL);
    int64_t from = json_integer_value(json_object_get(row, "version"));
    json_decref(row);
    /* An old version may not pass today's checks: it is saved like any other. */
    if (config == NULL || !config_ok(config, out)) {
        json_decref(config);
        return;
    }
    char note[64];
    snprintf(note, sizeof note, "reverted to v%lld", (long long)from);
    int st =
        save_config(svc, rq->params[0], config, rq->who.username, note, 0, &version, &now_live);
    json_decref(config);
    if (st < 0) {
        reply_error(out, 500, "internal", "%s", db_error());
        return;
    }
    reply_json(out, 200,
               json_pack("{s:b,s:I,s:I,s:b}", "ok", 1, "version", (json_int_t)version,
                         "revertedFrom", (json_int_t)from, "unchanged", st == 2));
    version_header(out, version);
}

void api_validate(service *svc, http_req *rq, http_resp *out)
{
    (void)svc;
    json_t *config = req_json_object(rq, out);
    if (config == NULL) return;
    json_t *problems = config_problems(config);
    reply_json(out, 200,
               json_pack("{s:b,s:o}", "ok", json_array_size(problems) == 0, "problems", problems));
    json_decref(config);
}
