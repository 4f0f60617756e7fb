/* karet explain: the SQL each table's mappings compile to. */
#include <stdlib.h>

#include "cli.h"
#include "cmd_util.h"
#include "compile.h"
#include "run.h"

static void print_problems(json_t *problems)
{
    for (size_t i = 0; i < json_array_size(problems); i++) {
        json_t *p = json_array_get(problems, i);
        fprintf(stderr, "%s: %s: %s\n", json_string_value(json_object_get(p, "path")),
                json_string_value(json_object_get(p, "kind")),
                json_string_value(json_object_get(p, "message")));
    }
}

/* The table's queries, one per source that feeds it, as {source, sql}. */
static json_t *table_queries(const kconfig *c, const ktable *t, const kdim_rows *rows)
{
    json_t *list = json_array();
    for (size_t s = 0; list && s < c->nsources; s++) {
        kbuf sql = {0};
        if (kcompile_table(c, t, &c->sources[s], rows, true, &sql))
            json_array_append_new(
                list, json_pack("{s:s, s:s}", "source", c->sources[s].id, "sql", kbuf_cstr(&sql)));
        kbuf_free(&sql);
    }
    return list;
}

static json_t *explain(const kconfig *c, const kdim_rows *rows)
{
    json_t *tables = json_object();
    for (size_t i = 0; tables && i < c->ntables; i++) {
        const ktable *t = &c->tables[i];
        json_t *parts = json_array(), *dedup = json_array();
        for (size_t p = 0; p < t->npartitions; p++)
            json_array_append_new(parts, json_string(t->partitions[p].spec));
        for (size_t d = 0; d < t->ndedup; d++)
            json_array_append_new(dedup, json_string(t->columns[t->dedup[d]].name));
        json_object_set_new(tables, t->id,
                            json_pack("{s:o, s:o, s:o}", "partition_keys", parts, "dedup_keys",
                                      dedup, "queries", table_queries(c, t, rows)));
    }
    json_t *csv = json_object();
    for (size_t i = 0; csv && i < c->ndims; i++)
        if (c->dims[i].path_prefix)
            json_object_set_new(csv, c->dims[i].id, json_string(c->dims[i].path_prefix));
    return json_pack("{s:o, s:o}", "tables", tables, "dimension_files", csv);
}

static void print_text(json_t *e)
{
    const char *id;
    json_t *t;
    json_object_foreach(json_object_get(e, "tables"), id, t)
    {
        printf("table %s\n", id);
        json_t *parts = json_object_get(t, "partition_keys"),
               *dedup = json_object_get(t, "dedup_keys");
        printf("  partition keys:");
        for (size_t i = 0; i < json_array_size(parts); i++)
            printf(" %s", json_string_value(json_array_get(parts, i)));
        printf("%s\n  dedup keys:", json_array_size(parts) ? "" : " (none)");
        for (size_t i = 0; i < json_array_size(dedup); i++)
            printf(" %s", json_string_value(json_array_get(dedup, i)));
        printf("%s\n", json_array_size(dedup) ? "" : " (none)");
        json_t *queries = json_object_get(t, "queries");
        for (size_t i = 0; i < json_array_size(queries); i++) {
            json_t *q = json_array_get(queries, i);
            printf("  each file of source %s:\n    %s;\n",
                   json_string_value(json_object_get(q, "source")),
                   json_string_value(json_object_get(q, "sql")));
        }
    }
    json_t *path;
    json_object_foreach(json_object_get(e, "dimension_files"), id, path)
        printf("dimension %s: rows read from %s at run time\n", id, json_string_value(path));
}

int karet_cmd_explain(karet_args *a)
{
    const char *file = NULL;
    json_t *config = NULL;
    int rc = karet_read_pipeline(a, &file, &config);
    if (rc != KARET_EXIT_OK) return rc;
    json_t *problems = karet_validate(config);
    if (problems == NULL || json_array_size(problems)) {
        print_problems(problems);
        json_decref(problems);
        json_decref(config);
        return karet_fail(a, KARET_EXIT_INPUT, "%s has problems (see karet validate)", file);
    }
    json_decref(problems);
    kconfig c;
    kproblems ps = {0};
    kdim_rows *rows = NULL;
    json_t *e = NULL;
    if (kconfig_parse(config, &c, &ps) && (rows = calloc(c.ndims + 1, sizeof *rows)) != NULL) {
        bool ok = true;
        for (size_t i = 0; i < c.ndims; i++)
            if (c.dims[i].rows) ok &= kdim_rows_inline(&c.dims[i], &rows[i]);
        if (ok) e = explain(&c, rows);
        for (size_t i = 0; i < c.ndims; i++) kdim_rows_free(&rows[i]);
    }
    free(rows);
    kconfig_free(&c);
    json_decref(ps.list);
    json_decref(config);
    if (e == NULL) return karet_fail(a, KARET_EXIT_STORAGE, "out of memory");
    if (karet_flag(a, "json")) {
        karet_print_json(e);
    } else {
        print_text(e);
        json_decref(e);
    }
    return KARET_EXIT_OK;
}
