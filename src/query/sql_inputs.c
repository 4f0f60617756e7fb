#include "query/sql_inputs.h"

#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/cast.h"
#include "arrow/stream.h"
#include "core/strlist.h"

/* The type a column is handed to DuckDB as: its own when the rows function
 * takes it, else one it casts to without loss; false when there is none. */
static bool scan_type(const tl_arrow_type *t, tl_arrow_type *out)
{
    *out = *t;
    switch (t->id) {
    case TL_ATYPE_LARGE_STRING:
    case TL_ATYPE_STRING_VIEW:
        *out = (tl_arrow_type){.id = TL_ATYPE_STRING};
        return true;
    case TL_ATYPE_LARGE_BINARY:
    case TL_ATYPE_BINARY_VIEW:
        *out = (tl_arrow_type){.id = TL_ATYPE_BINARY};
        return true;
    case TL_ATYPE_INT8:
    case TL_ATYPE_INT16:
    case TL_ATYPE_UINT8:
    case TL_ATYPE_UINT16:
    case TL_ATYPE_UINT32:
    case TL_ATYPE_UINT64: /* range-checked: a value beyond int64 fails */
        *out = (tl_arrow_type){.id = TL_ATYPE_INT64};
        return true;
    case TL_ATYPE_FLOAT16:
        *out = (tl_arrow_type){.id = TL_ATYPE_FLOAT32};
        return true;
    case TL_ATYPE_TIMESTAMP:
        if (t->unit == TL_UNIT_NANO) return false; /* to us would drop digits */
        out->unit = TL_UNIT_MICRO;
        return true;
    default: {
        char format[128];
        tl_arrow_type_format(t, format, sizeof format);
        return tl_rows_type_mapped(format);
    }
    }
}

/* Column c of every batch into the rowset: moved out as it is, or cast. */
static tl_status take_column(tl_rowset *rs, size_t c, const struct ArrowSchema *field,
                             struct ArrowArray *batches, tl_error *err)
{
    tl_arrow_type type, target;
    TL_TRY(tl_arrow_type_parse(field->dictionary ? field->dictionary->format : field->format, &type,
                               err));
    if (!scan_type(&type, &target)) {
        char name[96];
        tl_arrow_type_describe(&type, name, sizeof name);
        return tl_error_set(err, TL_ERR_INVALID,
                            "column \"%s\" is of type %s, which SQL inputs do not take (strings, "
                            "integers, floats, bools, dates, timestamps in s, ms or us, binary)",
                            field->name, name);
    }
    char format[128];
    tl_arrow_type_format(&target, format, sizeof format);
    if ((rs->formats[c] = strdup(format)) == NULL || (rs->names[c] = strdup(field->name)) == NULL)
        return tl_error_nomem(err);
    bool cast = field->dictionary != NULL || strcmp(format, field->format) != 0;
    for (size_t s = 0; s < rs->n_segs; s++) {
        struct ArrowArray *col = &rs->segs[s].cols[c];
        tl_array_move(batches[s].children[c], col);
        col->offset += batches[s].offset; /* the struct's offset applies to its children */
        if (!cast) continue;
        tl_array_view v;
        struct ArrowArray done;
        tl_status st = tl_array_view_init(&v, field, col, err);
        if (st == TL_OK) st = tl_arrow_cast(&v, &target, field->name, &done, err);
        if (st == TL_OK) tl_array_view_free(&v);
        tl_array_release(col);
        TL_TRY(st);
        tl_array_move(&done, col);
    }
    return TL_OK;
}

static tl_status make_rowset(const struct ArrowSchema *schema, struct ArrowArray *batches, size_t n,
                             tl_rowset **out, tl_error *err)
{
    if (strcmp(schema->format, "+s") != 0 || schema->n_children < 1)
        return tl_error_set(err, TL_ERR_INVALID, "the rows must be a struct of columns");
    tl_rowset *rs = calloc(1, sizeof *rs);
    if (rs == NULL) return tl_error_nomem(err);
    rs->n_cols = (size_t)schema->n_children;
    rs->names = calloc(rs->n_cols, sizeof *rs->names);
    rs->formats = calloc(rs->n_cols, sizeof *rs->formats);
    rs->segs = calloc(n + 1, sizeof *rs->segs);
    tl_status st = rs->names && rs->formats && rs->segs ? TL_OK : tl_error_nomem(err);
    for (size_t i = 0; st == TL_OK && i < n; i++) {
        rs->segs[i].rows = batches[i].length;
        rs->rows += batches[i].length;
        if ((rs->segs[i].cols = calloc(rs->n_cols, sizeof *rs->segs[i].cols)) == NULL)
            st = tl_error_nomem(err);
    }
    rs->n_segs = n;
    for (size_t c = 0; st == TL_OK && c < rs->n_cols; c++) {
        for (size_t d = 0; d < c; d++)
            if (strcmp(schema->children[c]->name, schema->children[d]->name) == 0)
                st = tl_error_set(err, TL_ERR_INVALID, "column \"%s\" appears twice",
                                  schema->children[c]->name);
        if (st == TL_OK) st = take_column(rs, c, schema->children[c], batches, err);
    }
    if (st != TL_OK) {
        tl_rowset_free(rs);
        return st;
    }
    *out = rs;
    return TL_OK;
}

tl_status tl_sql_input_read(const char *name, struct ArrowArrayStream *stream, tl_rowset **out,
                            tl_error *err)
{
    *out = NULL;
    struct ArrowSchema schema;
    struct ArrowArray *batches = NULL;
    size_t n = 0;
    tl_status st = tl_stream_collect(stream, &schema, &batches, &n, err);
    if (stream && stream->release) stream->release(stream);
    if (st == TL_OK) {
        st = make_rowset(&schema, batches, n, out, err);
        tl_schema_release(&schema);
    }
    for (size_t i = 0; i < n; i++) tl_array_release(&batches[i]);
    free(batches);
    if (st == TL_ERR_NOMEM) return st;
    return st == TL_OK ? TL_OK : tl_error_prefix(err, "input \"%s\"", name);
}

tl_status tl_sql_input_show(tl_query_engine *e, const char *name, tl_rowset *rs, tl_error *err)
{
    int64_t id;
    TL_TRY(tl_rowsets_add_input(e, rs, &id, err));
    char *view = tl_sql_ident(name);
    char *ddl =
        view ? tl_strdup_printf("CREATE OR REPLACE TEMP VIEW %s AS SELECT * FROM " TL_ROWS_FUNCTION
                                "(%lld)",
                                view, (long long)id)
             : NULL;
    tl_status st = ddl ? tl_query_exec(e, ddl, err) : tl_error_nomem(err);
    free(view);
    free(ddl);
    return st == TL_OK ? TL_OK : tl_error_prefix(err, "input \"%s\"", name);
}

void tl_sql_input_hide(tl_query_engine *e, const char *name)
{
    char *view = tl_sql_ident(name);
    char *ddl = view ? tl_strdup_printf("DROP VIEW IF EXISTS temp.main.%s", view) : NULL;
    if (ddl) (void)tl_query_exec(e, ddl, NULL);
    free(view);
    free(ddl);
}
