/* tl_reader: chosen columns of a CSV, TSV or NDJSON file, typed leniently
 * (value_coerce.h) or strictly, parsed record by record straight into Arrow
 * builders. CSV records come from the shared scanner (csv_scan.h), NDJSON
 * lines from the line scanner with the values at the columns' paths picked
 * in one pass (json_pick.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/builder.h"
#include "formats/csv/csv_scan.h"
#include "formats/input/column_reader.h"
#include "formats/input/input_open.h"
#include "formats/input/line_scan.h"
#include "formats/input/reader_stream.h"
#include "formats/input/text_batch.h"
#include "formats/input/value_coerce.h"
#include "formats/ndjson/json_pick.h"

#define BATCH_MAX_BYTES ((size_t)64 << 20) /* keeps utf8 offsets far from 2 GiB */

typedef struct column {
    char *name, *path, *type_name;
    tl_arrow_type type;
    int field;          /* CSV: index in the header */
    int64_t last_bytes; /* var-width bytes of the last batch */
} column;

struct tl_reader {
    char *name;
    tl_input_format format;
    bool lenient, streamed;
    int64_t batch_rows, last_rows;
    int ncols;
    column *cols;
    tl_builder *builders;
    /* CSV */
    tl_csv_scan csv;
    int header_fields;
    /* NDJSON */
    tl_line_scan lines;
    tl_json_paths *paths;
    tl_json_value *values;
    tl_buf scratch;
    bool seen_line; /* a non-blank line was read */
    /* the report */
    int64_t rows, skipped, nulled;
    tl_read_problem *problems;
    size_t n_problems;
};

static const struct {
    const char *name;
    const char *format;
} types[] = {{"string", "u"}, {"int64", "l"}, {"float64", "g"},
             {"number", "g"}, {"bool", "b"},  {"date", "tdD"}};

void tl_reader_close(tl_reader *r)
{
    if (r == NULL) return;
    if (r->format == TL_INPUT_NDJSON)
        tl_line_scan_free(&r->lines);
    else
        tl_csv_scan_free(&r->csv);
    for (int i = 0; i < r->ncols; i++) {
        free(r->cols[i].name);
        free(r->cols[i].path);
        free(r->cols[i].type_name);
        if (r->builders) tl_builder_free(&r->builders[i]);
    }
    free(r->cols);
    free(r->builders);
    tl_json_paths_free(r->paths);
    free(r->values);
    tl_buf_free(&r->scratch);
    for (size_t i = 0; i < r->n_problems; i++) free((char *)r->problems[i].message);
    free(r->problems);
    free(r->name);
    free(r);
}

/* Records a problem (the first TL_READ_PROBLEMS_KEPT of them). */
static tl_status note(tl_reader *r, int64_t line, const char *column, const char *fmt, ...)
    TL_PRINTF(4, 5);
static tl_status note(tl_reader *r, int64_t line, const char *column, const char *fmt, ...)
{
    if (r->n_problems >= TL_READ_PROBLEMS_KEPT) return TL_OK;
    if (r->problems == NULL &&
        (r->problems = calloc(TL_READ_PROBLEMS_KEPT, sizeof *r->problems)) == NULL)
        return TL_ERR_NOMEM;
    char msg[TL_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char *m = strdup(msg);
    if (m == NULL) return TL_ERR_NOMEM;
    r->problems[r->n_problems++] = (tl_read_problem){line, column, m};
    return TL_OK;
}

/* A line (CSV: a record) that cannot be read: skipped when lenient. */
static tl_status skip_line(tl_reader *r, int64_t line, const char *why, tl_error *err)
{
    if (!r->lenient)
        return tl_error_set(err, TL_ERR_INVALID, "%s: line %lld: %s", r->name, (long long)line,
                            why);
    r->skipped++;
    return note(r, line, NULL, "%s", why) == TL_OK ? TL_OK : tl_error_nomem(err);
}

/* The value for a message: quoted, or described when it is not text (a
 * report may be stored as JSON, which holds only UTF-8). */
static void quote_value(const char *s, size_t len, char *buf, size_t size)
{
    if (tl_utf8_valid((const uint8_t *)s, len))
        tl_text_quote((const uint8_t *)s, (int64_t)len, buf, size);
    else
        snprintf(buf, size, "text that is not valid UTF-8");
}

/* One value into column i: null, or typed (nulled when it does not fit and lenient). */
static tl_status put(tl_reader *r, int i, tl_value_kind kind, const char *s, size_t len,
                     int64_t line, tl_error *err)
{
    tl_builder *b = &r->builders[i];
    bool fits;
    TL_TRY(tl_value_coerce(b, kind, s, len, &fits, err));
    if (fits) return TL_OK;
    char quoted[64];
    quote_value(s, len, quoted, sizeof quoted);
    const column *c = &r->cols[i];
    if (!r->lenient)
        return tl_error_set(err, TL_ERR_INVALID,
                            "%s: line %lld, column \"%s\": %s is not a valid %s", r->name,
                            (long long)line, c->name, quoted, c->type_name);
    r->nulled++;
    if (note(r, line, c->name, "%s is not a valid %s", quoted, c->type_name) != TL_OK)
        return tl_error_nomem(err);
    return tl_builder_append_null(b, err);
}

/* ---- CSV ---- */

static tl_status csv_row(tl_reader *r, tl_error *err)
{
    tl_csv_scan *s = &r->csv;
    if (s->nfields != r->header_fields) {
        char why[96];
        snprintf(why, sizeof why, "%d fields, expected %d", s->nfields, r->header_fields);
        return skip_line(r, s->rec_line, why, err);
    }
    for (int i = 0; i < r->ncols; i++) {
        size_t len;
        const char *f = (const char *)tl_csv_scan_field(s, r->cols[i].field, &len);
        if (len == 0)
            TL_TRY(tl_builder_append_null(&r->builders[i], err));
        else
            TL_TRY(put(r, i, TL_VALUE_TEXT, f, len, s->rec_line, err));
    }
    r->rows++;
    return TL_OK;
}

static tl_status csv_next(tl_reader *r, bool *eof, tl_error *err)
{
    TL_TRY(tl_csv_scan_next(&r->csv, eof, err));
    return *eof ? TL_OK : csv_row(r, err);
}

/* Matches the columns to the header: every one must be there, once. */
static tl_status csv_header(tl_reader *r, tl_error *err)
{
    tl_csv_scan *s = &r->csv;
    bool eof;
    TL_TRY(tl_csv_scan_next(s, &eof, err));
    if (eof) return tl_error_set(err, TL_ERR_INVALID, "%s: empty file: no header row", r->name);
    r->header_fields = s->nfields;
    tl_buf missing = {0};
    for (int i = 0; i < r->ncols; i++) {
        column *c = &r->cols[i];
        c->field = -1;
        for (int f = 0; f < s->nfields; f++) {
            size_t len;
            const uint8_t *h = tl_csv_scan_field(s, f, &len);
            if (len != strlen(c->path) || memcmp(h, c->path, len) != 0) continue;
            if (c->field >= 0) {
                tl_buf_free(&missing);
                return tl_error_set(err, TL_ERR_INVALID,
                                    "%s: column \"%s\" appears twice in the header", r->name,
                                    c->path);
            }
            c->field = f;
        }
        if (c->field < 0 && tl_buf_printf(&missing, "%s\"%s\"", missing.len ? ", " : "", c->path))
            return tl_error_nomem(err);
    }
    tl_status st = TL_OK;
    if (missing.len)
        st = tl_error_set(err, TL_ERR_INVALID, "%s: the header has no column %s", r->name,
                          (const char *)missing.data);
    tl_buf_free(&missing);
    return st;
}

/* ---- NDJSON ---- */

static tl_value_kind json_kind(tl_json_kind k)
{
    return k == TL_JSON_NUMBER   ? TL_VALUE_NUMBER
           : k == TL_JSON_BOOL   ? TL_VALUE_BOOL
           : k == TL_JSON_STRING ? TL_VALUE_TEXT
                                 : TL_VALUE_JSON;
}

static tl_status json_line(tl_reader *r, const char *s, size_t len, tl_error *err)
{
    int64_t line = r->lines.line;
    int blank;
    tl_error why;
    tl_status st = tl_json_pick(r->paths, s, len, &r->scratch, r->values, &blank, &why);
    if (st == TL_ERR_NOMEM) return tl_error_nomem(err);
    if (st == TL_OK && blank) return TL_OK;
    if (!r->seen_line) {
        r->seen_line = true;
        size_t i = 0;
        while (i < len && (s[i] == ' ' || s[i] == '\t')) i++;
        if (i < len && s[i] == '[')
            return tl_error_set(err, TL_ERR_INVALID,
                                "%s: the file starts with '[' (one JSON array?); it must hold "
                                "one JSON object per line (NDJSON)",
                                r->name);
    }
    if (st != TL_OK) return skip_line(r, line, why.message, err);
    for (int i = 0; i < r->ncols; i++) {
        const tl_json_value *v = &r->values[i];
        if (v->kind == TL_JSON_MISSING || v->kind == TL_JSON_NULL)
            TL_TRY(tl_builder_append_null(&r->builders[i], err));
        else
            TL_TRY(put(r, i, json_kind(v->kind), v->text, v->len, line, err));
    }
    r->rows++;
    return TL_OK;
}

static tl_status json_next(tl_reader *r, bool *eof, tl_error *err)
{
    const char *s;
    size_t len;
    TL_TRY(tl_line_scan_next(&r->lines, &s, &len, eof, err));
    return *eof ? TL_OK : json_line(r, s, len, err);
}

static tl_status json_start(tl_reader *r, tl_error *err)
{
    const char **paths = malloc((size_t)r->ncols * sizeof *paths);
    r->values = calloc((size_t)r->ncols, sizeof *r->values);
    if (paths == NULL || r->values == NULL) {
        free(paths);
        return tl_error_nomem(err);
    }
    for (int i = 0; i < r->ncols; i++) paths[i] = r->cols[i].path;
    tl_status st = tl_json_paths_compile(paths, (size_t)r->ncols, &r->paths, err);
    free(paths);
    if (st != TL_OK) return tl_error_prefix(err, "%s", r->name);
    return TL_OK;
}

/* ---- Batches ---- */

static size_t batch_bytes(const tl_reader *r)
{
    size_t n = 0;
    for (int i = 0; i < r->ncols; i++) n += r->builders[i].values.len + r->builders[i].data.len;
    return n;
}

static tl_status next_batch(void *ctx, struct ArrowArray *out, bool *done, tl_error *err)
{
    tl_reader *r = ctx;
    int64_t start = r->rows;
    bool eof = false;
    /* Room for a batch like the last one: no regrowing on the way. */
    for (int i = 0; i < r->ncols && r->last_rows; i++)
        TL_TRY(tl_builder_reserve(&r->builders[i], r->last_rows, r->cols[i].last_bytes, err));
    while (!eof && r->rows - start < r->batch_rows && batch_bytes(r) < BATCH_MAX_BYTES)
        TL_TRY(r->format == TL_INPUT_NDJSON ? json_next(r, &eof, err) : csv_next(r, &eof, err));
    if (r->rows == start) return *done = true, TL_OK;
    TL_TRY(tl_array_init(out, 1, r->ncols, err));
    out->length = r->last_rows = r->rows - start;
    for (int i = 0; i < r->ncols; i++) {
        r->cols[i].last_bytes = (int64_t)r->builders[i].data.len;
        tl_status st = tl_builder_finish(&r->builders[i], out->children[i], err);
        if (st != TL_OK) {
            tl_array_release(out);
            return st;
        }
    }
    return TL_OK;
}

static void no_free(void *ctx)
{
    (void)ctx; /* the stream borrows the reader */
}

tl_status tl_reader_stream(tl_reader *r, struct ArrowArrayStream *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (r->streamed) return tl_error_set(err, TL_ERR_INVALID, "%s: already streamed", r->name);
    struct ArrowSchema schema;
    TL_TRY(tl_schema_init(&schema, "+s", "", 0, r->ncols, err));
    for (int i = 0; i < r->ncols; i++) {
        char format[128];
        tl_arrow_type_format(&r->cols[i].type, format, sizeof format);
        tl_status st = tl_schema_init(schema.children[i], format, r->cols[i].name,
                                      ARROW_FLAG_NULLABLE, 0, err);
        if (st != TL_OK) {
            tl_schema_release(&schema);
            return st;
        }
    }
    r->streamed = true;
    tl_batch_reader reader = {.ctx = r, .next = next_batch, .free = no_free};
    return tl_reader_stream_make(&schema, reader, out, err);
}

void tl_reader_report(const tl_reader *r, tl_read_report *out)
{
    int64_t lines = r->format == TL_INPUT_NDJSON ? r->lines.line : tl_csv_scan_lines(&r->csv);
    *out = (tl_read_report){lines, r->rows, r->skipped, r->nulled, r->problems, r->n_problems};
}

/* ---- Opening ---- */

static tl_status set_column(tl_reader *r, int i, const tl_read_column *c, tl_error *err)
{
    column *col = &r->cols[i];
    if (c->name == NULL || c->type == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "column %d needs a name and a type", i + 1);
    for (int j = 0; j < i; j++)
        if (strcmp(r->cols[j].name, c->name) == 0)
            return tl_error_set(err, TL_ERR_INVALID, "column \"%s\" is given twice", c->name);
    const char *format = NULL;
    for (size_t t = 0; t < sizeof types / sizeof *types; t++)
        if (strcmp(c->type, types[t].name) == 0) format = types[t].format;
    if (format == NULL)
        return tl_error_set(err, TL_ERR_INVALID,
                            "column \"%s\": unknown type \"%s\" (string, int64, float64, number, "
                            "bool or date)",
                            c->name, c->type);
    col->name = strdup(c->name);
    col->path = strdup(c->path ? c->path : c->name);
    col->type_name = strdup(strcmp(c->type, "number") == 0 ? "float64" : c->type);
    if (!col->name || !col->path || !col->type_name) return tl_error_nomem(err);
    TL_TRY(tl_arrow_type_parse(format, &col->type, err));
    return tl_builder_init(&r->builders[i], &col->type, err);
}

static tl_status reader_start(tl_reader *r, tl_text_input *in, const tl_read_options *o,
                              tl_error *err)
{
    bool ndjson = r->format == TL_INPUT_NDJSON;
    if (ndjson)
        tl_line_scan_init(&r->lines, in);
    else
        tl_csv_scan_init(&r->csv, in, r->format == TL_INPUT_TSV ? '\t' : ',');
    if (o->columns == NULL || o->columns_len == 0 || o->columns_len > 10000)
        return tl_error_set(err, TL_ERR_INVALID, "%s: give between 1 and 10000 columns to read",
                            r->name);
    r->ncols = (int)o->columns_len;
    r->cols = calloc(o->columns_len, sizeof *r->cols);
    r->builders = calloc(o->columns_len, sizeof *r->builders);
    if (r->cols == NULL || r->builders == NULL) return tl_error_nomem(err);
    for (int i = 0; i < r->ncols; i++)
        if (set_column(r, i, &o->columns[i], err) != TL_OK)
            return tl_error_prefix(err, "%s", r->name);
    return ndjson ? json_start(r, err) : csv_header(r, err);
}

static tl_status input_format(const tl_read_options *o, tl_input_format *out, tl_error *err)
{
    if (o->format)
        TL_TRY(tl_input_format_parse(o->format, out, err));
    else if (o->name)
        TL_TRY(tl_input_format_of_path(o->name, out, err));
    else
        return tl_error_set(err, TL_ERR_INVALID, "reading needs a format or a file name");
    if (*out == TL_INPUT_PARQUET)
        return tl_error_set(err, TL_ERR_INVALID, "%s: Parquet is not read by tl_reader",
                            o->name ? o->name : "input");
    return TL_OK;
}

tl_status tl_reader_open_input(tl_text_input *in, const tl_read_options *o, tl_reader **out,
                               tl_error *err)
{
    *out = NULL;
    tl_input_format format = TL_INPUT_CSV;
    tl_status st = input_format(o, &format, err);
    tl_reader *r = st == TL_OK ? calloc(1, sizeof *r) : NULL;
    if (r == NULL) {
        tl_text_input_close(in);
        return st != TL_OK ? st : tl_error_nomem(err);
    }
    r->format = format;
    r->lenient = o->lenient != 0;
    r->batch_rows = o->batch_rows > 0 ? o->batch_rows : 65536;
    r->name = strdup(tl_text_input_name(in));
    st = r->name ? reader_start(r, in, o, err) : tl_error_nomem(err);
    if (st != TL_OK) {
        if (r->name == NULL) tl_text_input_close(in);
        tl_reader_close(r);
        return st;
    }
    *out = r;
    return TL_OK;
}

tl_status tl_reader_open(const void *data, size_t len, const tl_read_options *options,
                         tl_reader **out, tl_error *err)
{
    *out = NULL;
    if (options == NULL) return tl_error_set(err, TL_ERR_INVALID, "reading needs options");
    if (data == NULL && len > 0) return tl_error_set(err, TL_ERR_INVALID, "no data to read");
    tl_text_input *in;
    TL_TRY(tl_text_input_open_memory(data, len, options->name, &in, err));
    return tl_reader_open_input(in, options, out, err);
}
