/* count(*) from the manifests (see sql_count.h). */
#include "query/sql_count.h"

#include <string.h>

#include "arrow/array.h"
#include "arrow/stream.h"
#include "query/query_cache.h"
#include "query/sql_plan_json.h"
#include "query/sql_shape.h"

static bool empty_array(const json_t *o, const char *key)
{
    return json_array_size(json_object_get(o, key)) == 0;
}

/* count(*) or count(): DuckDB parses both into count_star with no argument. */
static bool is_count_star(const json_t *e)
{
    return tl_js_is_class(e, "FUNCTION") &&
           strcmp(tl_js_str(e, "function_name"), "count_star") == 0 &&
           *tl_js_str(e, "schema") == 0 && *tl_js_str(e, "catalog") == 0 &&
           empty_array(e, "arguments") && tl_shape_absent(e, "filter") &&
           !json_is_true(json_object_get(e, "distinct")) &&
           empty_array(json_object_get(e, "order_bys"), "orders") &&
           !json_is_true(json_object_get(e, "export_state"));
}

bool tl_sql_count_select_shape(const tl_sql_plan *plan, bool where, const char **name)
{
    const json_t *select = json_object_get(plan->stmt, "node");
    const json_t *from = json_object_get(select, "from_table");
    if (plan->n_refs != 1 || !tl_js_is_type(select, "SELECT_NODE") ||
        !empty_array(select, "modifiers") ||
        !empty_array(json_object_get(select, "cte_map"), "map") ||
        !tl_js_is_type(from, "BASE_TABLE") || !tl_shape_absent(from, "sample") ||
        !tl_shape_absent(from, "at_clause") || !empty_array(from, "column_name_alias") ||
        *tl_js_str(from, "catalog_name") ||
        strcmp(tl_js_str(from, "schema_name"), plan->refs[0].schema) != 0 ||
        strcmp(tl_js_str(from, "table_name"), plan->refs[0].table) != 0 ||
        (!where && !tl_shape_absent(select, "where_clause")) ||
        !empty_array(select, "group_expressions") || !empty_array(select, "group_sets") ||
        !tl_shape_absent(select, "having") || !tl_shape_absent(select, "sample") ||
        !tl_shape_absent(select, "qualify") ||
        strcmp(tl_js_str(select, "aggregate_handling"), "STANDARD_HANDLING") != 0)
        return false;
    const json_t *list = json_object_get(select, "select_list");
    if (json_array_size(list) != 1 || !is_count_star(json_array_get(list, 0))) return false;
    const char *alias = tl_js_str(json_array_get(list, 0), "alias");
    *name = *alias ? alias : "count_star()";
    return true;
}

bool tl_sql_count_shape(const tl_sql_plan *plan, const char **name)
{
    return tl_sql_count_select_shape(plan, false, name);
}

tl_status tl_count_result(const char *name, int64_t rows, struct ArrowArrayStream *out,
                          tl_error *err)
{
    struct ArrowSchema schema;
    struct ArrowArray batch;
    TL_TRY(tl_schema_init(&schema, "+s", NULL, 0, 1, err));
    tl_status st = tl_schema_init(schema.children[0], "l", name, ARROW_FLAG_NULLABLE, 0, err);
    if (st == TL_OK) st = tl_array_init(&batch, 1, 1, err);
    if (st == TL_OK) {
        batch.length = 1;
        st = tl_array_init(batch.children[0], 2, 0, err);
        int64_t *value =
            st == TL_OK ? tl_array_alloc_buffer(batch.children[0], 1, sizeof *value) : NULL;
        if (st == TL_OK && value == NULL) st = tl_error_nomem(err);
        if (st == TL_OK) {
            *value = rows;
            batch.children[0]->length = 1;
            st = tl_stream_from_batches(&schema, &batch, 1, out, err);
        }
        tl_array_release(&batch);
    }
    tl_schema_release(&schema);
    return st;
}

tl_status tl_query_count(tl_query_engine *e, const tl_sql_plan *plan, const char *name,
                         struct ArrowArrayStream *out, tl_scan_stats *stats, bool *answered,
                         tl_error *err)
{
    const tl_table *t = plan->refs[0].t;
    const tl_live_files *lf = NULL;
    bool known = false;
    int64_t rows = 0;
    *answered = false;
    TL_TRY(tl_query_live_files(e, t, &lf, err));
    TL_TRY(tl_scan_count(e, t, lf, &known, &rows, err));
    if (!known) return TL_OK;
    TL_TRY(tl_count_result(name, rows, out, err));
    stats->files_total += (int64_t)lf->n;
    *answered = true;
    return TL_OK;
}
