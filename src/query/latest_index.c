/* latest() from the last-value index with our Parquet reader (see
 * latest_index.h): a cold latest() then never starts DuckDB. The output
 * types are those DuckDB gives for the same read_parquet, so both paths
 * return identical streams (tests/py/test_latest_index.py checks both). */
#include "query/latest_index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/arrow_type.h"
#include "arrow/cast.h"
#include "arrow/nested.h"
#include "arrow/stream.h"
#include "formats/parquet/parquet_reader.h"
#include "query/projection.h"
#include "table/live_files.h"

/* The format DuckDB exports a Parquet column of this Arrow type as, or false
 * for a type we do not map (time, nanosecond and millisecond timestamps,
 * fixed-size binary, UUID ...). */
static bool engine_format(const char *file_format, char *buf, size_t size)
{
    static const char *same[] = {"b", "i", "l", "f", "g", "tdD", "tsu:"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        if (strcmp(file_format, same[i]) == 0) return snprintf(buf, size, "%s", same[i]) > 0;
    if (strcmp(file_format, "u") == 0 || strcmp(file_format, "U") == 0)
        return snprintf(buf, size, "u") > 0;
    if (strcmp(file_format, "z") == 0 || strcmp(file_format, "Z") == 0)
        return snprintf(buf, size, "z") > 0;
    if (strncmp(file_format, "tsu:", 4) == 0) /* any zone: an instant, shown in UTC */
        return snprintf(buf, size, "tsu:UTC") > 0;
    int p, s, n = 0;
    if (sscanf(file_format, "d:%d,%d%n", &p, &s, &n) == 2 && file_format[n] == '\0' && p >= 1 &&
        p <= 38 && s >= 0 && s <= p)
        return snprintf(buf, size, "%s", file_format) > 0;
    return false;
}

/* The engine's form of a nested field: lists with child "l", maps with
 * a non-nullable "entries" struct of a non-nullable "key" and a "value",
 * struct fields by their names; every other field nullable. */
static tl_status engine_field(const struct ArrowSchema *f, const char *name, int64_t flags,
                              bool *mapped, struct ArrowSchema *out, tl_error *err);

static tl_status engine_nested(const struct ArrowSchema *f, const char *name, int64_t flags,
                               bool *mapped, struct ArrowSchema *out, tl_error *err)
{
    const char *fmt = f->format;
    bool list = strcmp(fmt, "+l") == 0 || strcmp(fmt, "+L") == 0;
    bool map = strcmp(fmt, "+m") == 0, strct = strcmp(fmt, "+s") == 0;
    *mapped = (list || map || strct) && (!list || f->n_children == 1) &&
              (!map || (f->n_children == 1 && f->children[0]->n_children == 2));
    if (!*mapped) return TL_OK;
    TL_TRY(tl_schema_init(out, list ? "+l" : fmt, name, flags, f->n_children, err));
    tl_status st = TL_OK;
    for (int64_t i = 0; st == TL_OK && *mapped && i < f->n_children; i++) {
        const struct ArrowSchema *c = f->children[i];
        if (list)
            st = engine_field(c, "l", ARROW_FLAG_NULLABLE, mapped, out->children[i], err);
        else if (strct)
            st = engine_field(c, c->name, ARROW_FLAG_NULLABLE, mapped, out->children[i], err);
        else if ((st = tl_schema_init(out->children[i], "+s", "entries", 0, 2, err)) == TL_OK &&
                 (st = engine_field(c->children[0], "key", 0, mapped, out->children[i]->children[0],
                                    err)) == TL_OK &&
                 *mapped)
            st = engine_field(c->children[1], "value", ARROW_FLAG_NULLABLE, mapped,
                              out->children[i]->children[1], err);
    }
    if (st != TL_OK || !*mapped) tl_schema_release(out);
    return st;
}

static tl_status engine_field(const struct ArrowSchema *f, const char *name, int64_t flags,
                              bool *mapped, struct ArrowSchema *out, tl_error *err)
{
    if (tl_arrow_is_nested(f)) return engine_nested(f, name, flags, mapped, out, err);
    char format[64];
    *mapped = engine_format(f->format, format, sizeof format);
    return *mapped ? tl_schema_init(out, format, name, flags, 0, err) : TL_OK;
}

/* The output schema: the file's column names with the engine's types. */
static tl_status output_schema(const struct ArrowSchema *fs, bool *mapped, struct ArrowSchema *out,
                               tl_error *err)
{
    *mapped = true;
    TL_TRY(tl_schema_init(out, "+s", "", 0, fs->n_children, err));
    for (int64_t i = 0; i < fs->n_children; i++) {
        tl_status st = engine_field(fs->children[i], fs->children[i]->name, ARROW_FLAG_NULLABLE,
                                    mapped, out->children[i], err);
        if (st != TL_OK || !*mapped) {
            tl_schema_release(out);
            return st;
        }
    }
    return TL_OK;
}

/* One row group as a struct batch of the output types. */
static tl_status convert_group(const struct ArrowSchema *fs, const struct ArrowArray *group,
                               const struct ArrowSchema *schema, struct ArrowArray *out,
                               tl_error *err)
{
    TL_TRY(tl_array_init(out, 1, schema->n_children, err));
    out->length = group->length;
    tl_status st = TL_OK;
    for (int64_t c = 0; st == TL_OK && c < schema->n_children; c++) {
        const struct ArrowSchema *to = schema->children[c];
        if (tl_arrow_is_nested(to)) {
            st = tl_arrow_cast_nested(fs->children[c], group->children[c], to, to->name,
                                      out->children[c], err);
            continue;
        }
        tl_arrow_type target;
        tl_array_view v;
        st = tl_arrow_type_parse(schema->children[c]->format, &target, err);
        if (st == TL_OK) st = tl_array_view_init(&v, fs->children[c], group->children[c], err);
        if (st != TL_OK) break;
        st = tl_arrow_cast(&v, &target, schema->children[c]->name, out->children[c], err);
        tl_array_view_free(&v);
    }
    if (st != TL_OK) tl_array_release(out);
    return st;
}

static tl_status read_file(const tl_table *t, tl_parquet_reader *r, bool *done,
                           struct ArrowArrayStream *out, tl_error *err)
{
    struct ArrowSchema fs = {0}, schema = {0};
    TL_TRY(tl_parquet_reader_schema(r, &fs, err));
    /* An index of an older schema (a rollback past a schema change) is read
     * by the engine, which projects it onto the current one. */
    *done = tl_projection_fits(t, &fs);
    tl_status st = *done ? output_schema(&fs, done, &schema, err) : TL_OK;
    int n = tl_parquet_reader_num_row_groups(r), made = 0;
    struct ArrowArray *batches = NULL;
    if (st == TL_OK && *done) {
        batches = calloc((size_t)n + 1, sizeof *batches);
        if (batches == NULL) st = tl_error_nomem(err);
        for (; st == TL_OK && made < n; made++) {
            struct ArrowArray group = {0};
            st = tl_parquet_reader_read_row_group(r, made, NULL, 0, &group, err);
            if (st == TL_OK) st = convert_group(&fs, &group, &schema, &batches[made], err);
            tl_array_release(&group);
            if (st != TL_OK) break;
        }
        if (st == TL_OK) st = tl_stream_from_batches(&schema, batches, (size_t)n, out, err);
    }
    for (int i = 0; batches && i < made; i++) tl_array_release(&batches[i]);
    free(batches);
    tl_schema_release(&schema);
    tl_schema_release(&fs);
    return st;
}

tl_status tl_latest_from_index(const tl_table *t, const char *url, bool *done,
                               struct ArrowArrayStream *out, tl_error *err)
{
    *done = false;
    tl_buf file = {0};
    /* Missing is TL_ERR_NOT_FOUND (not a damaged table): latest then computes. */
    tl_status st = tl_table_read_url_or_none(t, url, &file, err);
    tl_parquet_reader *r = NULL;
    if (st == TL_OK) {
        tl_parquet_source src;
        tl_parquet_source_from_memory(&src, file.data, file.len);
        st = tl_parquet_reader_open(&src, &r, err);
    }
    if (st == TL_OK) st = read_file(t, r, done, out, err);
    if (st != TL_OK) tl_error_prefix(err, "reading the last-value index %s", url);
    tl_parquet_reader_free(r);
    tl_buf_free(&file);
    return st;
}
