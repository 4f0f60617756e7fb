#include "table/rollup_def.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/clock.h"
#include "iceberg/metadata.h"
#include "core/json_text.h"

static const char *const fn_names[] = {
    [TL_ROLLUP_COUNT] = "count",
    [TL_ROLLUP_SUM] = "sum",
    [TL_ROLLUP_MIN] = "min",
    [TL_ROLLUP_MAX] = "max",
    [TL_ROLLUP_AVG] = "avg",
    [TL_ROLLUP_FIRST] = "first_value",
    [TL_ROLLUP_LAST] = "last_value",
    [TL_ROLLUP_M4] = "m4",
    [TL_ROLLUP_TWM] = "time_weighted_mean",
    [TL_ROLLUP_TWM_LINEAR] = "time_weighted_mean:linear",
};

const char *tl_rollup_fn_name(tl_rollup_fn fn)
{
    return fn_names[fn];
}

bool tl_rollup_fn_parse(const char *name, tl_rollup_fn *out)
{
    for (size_t i = 0; i < sizeof fn_names / sizeof fn_names[0]; i++)
        if (strcmp(name, fn_names[i]) == 0) {
            *out = (tl_rollup_fn)i;
            return true;
        }
    return false;
}

/* Appends the comma-separated names of `text` to *out. */
static tl_status split_names(const char *text, tl_strlist *out, tl_error *err)
{
    while (text && *text) {
        size_t n = strcspn(text, ",");
        size_t a = 0, b = n;
        while (a < b && text[a] == ' ') a++;
        while (b > a && text[b - 1] == ' ') b--;
        if (b > a) {
            char *name = strndup(text + a, b - a);
            if (name == NULL || tl_strlist_push_owned(out, name) != 0) {
                free(name);
                return tl_error_nomem(err);
            }
        }
        text += n + (text[n] == ',');
    }
    return TL_OK;
}

tl_status tl_rollup_list(const tl_ice_metadata *raw, tl_strlist *out, tl_error *err)
{
    return split_names(tl_ice_metadata_property(raw, TL_ROLLUPS_KEY), out, err);
}

char *tl_rollup_list_join(const tl_strlist *names)
{
    tl_buf b = {0};
    int rc = tl_buf_append_str(&b, "");
    for (size_t i = 0; rc == 0 && i < names->len; i++)
        rc = tl_buf_printf(&b, "%s%s", i ? "," : "", names->items[i]);
    if (rc != 0) {
        tl_buf_free(&b);
        return NULL;
    }
    return (char *)tl_buf_detach(&b, NULL);
}

static tl_status bad(tl_error *err, const char *name, const char *key, const char *what)
{
    return tl_error_set(err, TL_ERR_INVALID, "rollup %s: %s %s", name, key, what);
}

static tl_status parse_aggs(const char *text, const char *name, tl_rollup_def *d, tl_error *err)
{
    json_error_t je;
    bool nomem = false;
    json_t *doc = text ? tl_json_loadb(text, strlen(text), 0, &je, &nomem) : NULL;
    if (nomem) return tl_error_nomem(err);
    if (!json_is_array(doc)) {
        json_decref(doc);
        return bad(err, name, TL_ROLLUP_AGGREGATES_KEY, "is not a JSON array of aggregates");
    }
    size_t n = json_array_size(doc);
    tl_status st = TL_OK;
    d->aggs = calloc(n ? n : 1, sizeof *d->aggs);
    if (d->aggs == NULL) st = tl_error_nomem(err);
    for (size_t i = 0; st == TL_OK && i < n; i++) {
        json_t *a = json_array_get(doc, i);
        const char *nm = json_string_value(json_object_get(a, "name"));
        const char *fn = json_string_value(json_object_get(a, "function"));
        json_t *col = json_object_get(a, "column");
        tl_rollup_agg *g = &d->aggs[i];
        if (nm == NULL || fn == NULL || !tl_rollup_fn_parse(fn, &g->fn) ||
            (col && !json_is_string(col)) || (col == NULL && g->fn != TL_ROLLUP_COUNT)) {
            st = tl_error_set(err, TL_ERR_INVALID,
                              "rollup %s: %s entry %zu needs a name, a known function and a "
                              "column (count alone may have none)",
                              name, TL_ROLLUP_AGGREGATES_KEY, i + 1);
            break;
        }
        d->n_aggs = i + 1;
        g->name = strdup(nm);
        g->column = col ? strdup(json_string_value(col)) : NULL;
        if (g->name == NULL || (col && g->column == NULL)) st = tl_error_nomem(err);
    }
    json_decref(doc);
    return st;
}

static tl_status parse_duration(const char *text, const char *name, const char *key, int64_t *out,
                                tl_error *err)
{
    *out = 0;
    if (text == NULL) return TL_OK;
    tl_error ignored = {0};
    if (tl_duration_parse(text, out, &ignored) != TL_OK || *out <= 0)
        return bad(err, name, key, "is not a positive duration");
    return TL_OK;
}

static int64_t summary_i64(const tl_ice_snapshot *s, const char *key)
{
    const char *v = s ? tl_ice_snapshot_summary(s, key) : NULL;
    return v ? strtoll(v, NULL, 10) : 0;
}

int64_t tl_rollup_source_snapshot(const tl_ice_metadata *md, int64_t *sequence)
{
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(md);
    while (s && tl_ice_snapshot_summary(s, TL_ROLLUP_SOURCE_SNAPSHOT_KEY) == NULL)
        s = tl_ice_metadata_parent(md, s);
    if (sequence) *sequence = summary_i64(s, TL_ROLLUP_SOURCE_SEQUENCE_KEY);
    return summary_i64(s, TL_ROLLUP_SOURCE_SNAPSHOT_KEY);
}

tl_status tl_rollup_def_parse(const tl_ice_metadata *md, const char *name, tl_rollup_def *out,
                              tl_error *err)
{
    memset(out, 0, sizeof *out);
    const char *source = tl_ice_metadata_property(md, TL_ROLLUP_SOURCE_KEY);
    if (source == NULL) return tl_error_set(err, TL_ERR_INVALID, "%s is not a rollup", name);
    const char *time_col = tl_ice_metadata_property(md, "timelake.time-column");
    const char *routing = tl_ice_metadata_property(md, TL_ROLLUP_ROUTING_KEY);
    out->routing = routing == NULL || strcasecmp(routing, "false") != 0;
    out->source = strdup(source);
    out->bucket_column = time_col ? strdup(time_col) : NULL;
    tl_status st = out->source && out->bucket_column
                       ? TL_OK
                       : (time_col ? tl_error_nomem(err)
                                   : bad(err, name, "timelake.time-column", "is missing"));
    if (st == TL_OK)
        st = split_names(tl_ice_metadata_property(md, "timelake.series-key"), &out->keys, err);
    if (st == TL_OK)
        st = parse_duration(tl_ice_metadata_property(md, TL_ROLLUP_BUCKET_KEY), name,
                            TL_ROLLUP_BUCKET_KEY, &out->bucket_us, err);
    if (st == TL_OK && out->bucket_us == 0) st = bad(err, name, TL_ROLLUP_BUCKET_KEY, "is missing");
    if (st == TL_OK)
        st = parse_duration(tl_ice_metadata_property(md, TL_ROLLUP_REFRESH_KEY), name,
                            TL_ROLLUP_REFRESH_KEY, &out->refresh_interval_us, err);
    if (st == TL_OK)
        st = parse_aggs(tl_ice_metadata_property(md, TL_ROLLUP_AGGREGATES_KEY), name, out, err);
    out->source_snapshot = tl_rollup_source_snapshot(md, &out->source_sequence);
    if (st != TL_OK) tl_rollup_def_free(out);
    return st;
}

void tl_rollup_def_free(tl_rollup_def *d)
{
    for (size_t i = 0; i < d->n_aggs; i++) {
        free(d->aggs[i].name);
        free(d->aggs[i].column);
    }
    free(d->aggs);
    free(d->source);
    free(d->bucket_column);
    tl_strlist_free(&d->keys);
    memset(d, 0, sizeof *d);
}

char *tl_rollup_aggregates_json(const tl_rollup_agg *aggs, size_t n)
{
    json_t *doc = json_array();
    bool failed = doc == NULL;
    for (size_t i = 0; !failed && i < n; i++) {
        json_t *a = json_object(); /* the array takes it, even when appending fails */
        failed =
            json_array_append_new(doc, a) != 0 ||
            json_object_set_new(a, "name", json_string(aggs[i].name)) != 0 ||
            json_object_set_new(a, "function", json_string(tl_rollup_fn_name(aggs[i].fn))) != 0 ||
            (aggs[i].column && json_object_set_new(a, "column", json_string(aggs[i].column)) != 0);
    }
    char *out = failed ? NULL : tl_json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(doc);
    return out;
}
