#include "formats/ndjson/ndjson_reader.h"

#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/nested.h"
#include "arrow/parse.h"
#include "formats/input/line_scan.h"
#include "formats/input/reader_stream.h"
#include "formats/input/text_batch.h"
#include "formats/input/text_schema.h"
#include "formats/ndjson/json_line.h"
#include "formats/ndjson/json_nested.h"

#define ND_MAX_BATCH_BYTES ((size_t)64 << 20)
#define ND_MAX_COLUMNS 10000

typedef struct ndjson_reader {
    tl_line_scan lines;
    int64_t batch_rows;
    bool discover; /* first batch without a target: unknown keys become columns */
    bool has_target;
    int ncols;
    char **names;
    size_t *name_lens;
    tl_arrow_type *types;
    bool *required;             /* per column, from the target's nullability */
    bool *json;                 /* per column: a nested one, read from JSON objects and arrays */
    struct ArrowSchema *nested; /* per column: the target's field of a nested one */
    int64_t *seen;              /* per column: the row (+1) it last got a value in */
    int hint; /* the column after the last one matched: keys usually repeat in order */
    tl_text_batch batch;
    tl_buf scratch[2];
    tl_text_source src;
    struct ArrowArray first;
    tl_input_progress_fn progress;
    void *progress_ctx;
} ndjson_reader;

static void nd_free(void *ctx)
{
    ndjson_reader *r = ctx;
    if (r == NULL) return;
    tl_line_scan_free(&r->lines);
    for (int i = 0; i < r->ncols; i++) free(r->names[i]);
    free(r->names);
    free(r->name_lens);
    free(r->types);
    free(r->required);
    for (int i = 0; r->nested && i < r->ncols; i++) tl_schema_release(&r->nested[i]);
    free(r->nested);
    free(r->json);
    free(r->seen);
    tl_text_batch_free(&r->batch);
    tl_buf_free(&r->scratch[0]);
    tl_buf_free(&r->scratch[1]);
    tl_array_release(&r->first);
    free(r);
}

/* Adds a column named key (first batch without a target). */
static tl_status add_column(ndjson_reader *r, const char *key, size_t key_len, tl_error *err)
{
    if (r->ncols >= ND_MAX_COLUMNS)
        return tl_error_set(err, TL_ERR_INVALID, "more than %d distinct keys", ND_MAX_COLUMNS);
    size_t n = (size_t)r->ncols + 1;
    char **names = realloc(r->names, n * sizeof *names);
    if (names) r->names = names;
    size_t *lens = realloc(r->name_lens, n * sizeof *lens);
    if (lens) r->name_lens = lens;
    int64_t *seen = realloc(r->seen, n * sizeof *seen);
    if (seen) r->seen = seen;
    if (!names || !lens || !seen) return tl_error_nomem(err);
    if ((names[r->ncols] = malloc(key_len + 1)) == NULL) return tl_error_nomem(err);
    memcpy(names[r->ncols], key, key_len);
    names[r->ncols][key_len] = 0;
    lens[r->ncols] = key_len;
    seen[r->ncols] = 0;
    int idx;
    TL_TRY(tl_text_batch_add_column(&r->batch, &idx, err));
    r->ncols++;
    return TL_OK;
}

static int find_column(ndjson_reader *r, const char *key, size_t key_len)
{
    for (int k = 0; k < r->ncols; k++) {
        int i = (r->hint + k) % r->ncols;
        if (r->name_lens[i] == key_len && memcmp(r->names[i], key, key_len) == 0) return i;
    }
    return -1;
}

static tl_status on_member(void *ctx, const char *key, size_t key_len, const char *value,
                           size_t value_len, int kind, tl_error *err)
{
    ndjson_reader *r = ctx;
    int col = find_column(r, key, key_len);
    if (col < 0 && r->discover) {
        TL_TRY(add_column(r, key, key_len, err));
        col = r->ncols - 1;
    }
    char quoted[64];
    if (col < 0) {
        tl_text_quote((const uint8_t *)key, (int64_t)key_len, quoted, sizeof quoted);
        if (r->has_target)
            return tl_error_set(err, TL_ERR_INVALID, "key %s is not a column of the table", quoted);
        return tl_error_set(err, TL_ERR_INVALID,
                            "key %s first appears after the rows the columns were inferred from",
                            quoted);
    }
    if (r->seen[col] == r->batch.rows + 1) {
        tl_text_quote((const uint8_t *)key, (int64_t)key_len, quoted, sizeof quoted);
        return tl_error_set(err, TL_ERR_INVALID, "key %s appears twice", quoted);
    }
    r->seen[col] = r->batch.rows + 1;
    r->hint = col + 1;
    return tl_text_batch_put(&r->batch, col, value, value_len, kind, err);
}

/* Takes back the values of a line that failed half way. */
static void drop_partial_row(ndjson_reader *r)
{
    for (int i = 0; i < r->ncols; i++) {
        tl_text_column *c = &r->batch.cols[i];
        if (c->kinds.len == (size_t)r->batch.rows) continue;
        c->offsets.len -= sizeof(int64_t);
        c->kinds.len--;
        c->bytes.len = (size_t)((const int64_t *)c->offsets.data)[c->kinds.len];
    }
}

static tl_status parse_line(ndjson_reader *r, const char *s, size_t len, tl_error *err)
{
    int blank;
    r->hint = 0;
    tl_status st = tl_json_line_parse(s, len, r->scratch, on_member, r, &blank, err);
    for (int i = 0; st == TL_OK && !blank && i < r->ncols; i++)
        if (r->seen[i] != r->batch.rows + 1)
            st = tl_text_batch_put(&r->batch, i, NULL, 0, TL_TEXT_NULL, err);
    if (st == TL_OK && !blank) st = tl_text_batch_end_row(&r->batch, r->lines.line, err);
    if (st != TL_OK) {
        drop_partial_row(r);
        if (st != TL_ERR_NOMEM)
            tl_error_prefix(err, "%s: line %lld", r->src.name, (long long)r->lines.line);
    }
    return st;
}

/* Parses the next line; *eof at the end of the input. */
static tl_status next_line(ndjson_reader *r, bool *eof, tl_error *err)
{
    const char *line;
    size_t len;
    TL_TRY(tl_line_scan_next(&r->lines, &line, &len, eof, err));
    return *eof ? TL_OK : parse_line(r, line, len, err);
}

static tl_status read_batch(ndjson_reader *r, tl_error *err)
{
    tl_text_batch_reset(&r->batch);
    for (int i = 0; i < r->ncols; i++) r->seen[i] = 0;
    while (r->batch.rows < r->batch_rows && tl_text_batch_bytes(&r->batch) < ND_MAX_BATCH_BYTES) {
        bool eof;
        TL_TRY(next_line(r, &eof, err));
        if (eof) break;
    }
    return TL_OK;
}

/* The batch typed: flat columns from text, nested ones from their JSON. */
static tl_status convert(ndjson_reader *r, struct ArrowArray *out, tl_error *err)
{
    TL_TRY(tl_text_batch_convert(&r->batch, &r->src, r->types, (const char *const *)r->names, out,
                                 err));
    tl_status st = TL_OK;
    for (int i = 0; st == TL_OK && r->json && i < r->ncols; i++) {
        if (!r->json[i]) continue;
        struct ArrowArray nested;
        int64_t row = -1;
        st =
            tl_json_nested_column(&r->nested[i], out->children[i], r->names[i], &nested, &row, err);
        if (st == TL_OK) {
            tl_array_release(out->children[i]);
            tl_array_move(&nested, out->children[i]);
        } else if (st != TL_ERR_NOMEM && row >= 0) {
            tl_error_prefix(err, "%s: line %lld", r->src.name,
                            (long long)((const int64_t *)r->batch.lines.data)[row]);
        }
    }
    if (st != TL_OK) tl_array_release(out);
    return st;
}

static tl_status nd_next(void *ctx, struct ArrowArray *out, bool *done, tl_error *err)
{
    ndjson_reader *r = ctx;
    if (r->first.release) {
        tl_array_move(&r->first, out);
        return TL_OK;
    }
    TL_TRY(read_batch(r, err));
    if (r->progress) r->progress(r->progress_ctx, tl_text_input_position(r->lines.w.in));
    if (r->batch.rows == 0) return *done = true, TL_OK;
    return convert(r, out, err);
}

static tl_status target_columns(ndjson_reader *r, const struct ArrowSchema *target, tl_error *err)
{
    for (int64_t i = 0; i < target->n_children; i++)
        TL_TRY(add_column(r, target->children[i]->name, strlen(target->children[i]->name), err));
    r->types = calloc((size_t)r->ncols + 1, sizeof *r->types);
    r->required = calloc((size_t)r->ncols + 1, sizeof *r->required);
    r->json = calloc((size_t)r->ncols + 1, sizeof *r->json);
    r->nested = calloc((size_t)r->ncols + 1, sizeof *r->nested);
    if (!r->types || !r->required || !r->json || !r->nested) return tl_error_nomem(err);
    r->src.required = r->required;
    r->src.json = r->json;
    for (int i = 0; i < r->ncols; i++) {
        const struct ArrowSchema *f = target->children[i];
        r->required[i] = (f->flags & ARROW_FLAG_NULLABLE) == 0;
        if (!tl_arrow_is_nested(f)) {
            TL_TRY(tl_text_target_type(target, i, &r->types[i], err));
            continue;
        }
        r->json[i] = true; /* its JSON text, parsed per batch (convert) */
        TL_TRY(tl_arrow_type_parse("U", &r->types[i], err));
        TL_TRY(tl_schema_copy(f, &r->nested[i], err));
    }
    return TL_OK;
}

static tl_status nd_start(ndjson_reader *r, const struct ArrowSchema *target, tl_error *err)
{
    TL_TRY(tl_text_batch_init(&r->batch, 0, err));
    if (tl_buf_reserve(&r->scratch[0], 64) != 0 || tl_buf_reserve(&r->scratch[1], 64) != 0)
        return tl_error_nomem(err);
    if (target) TL_TRY(target_columns(r, target, err));
    r->discover = target == NULL;
    r->has_target = target != NULL;
    TL_TRY(read_batch(r, err));
    r->discover = false;
    if (!target) {
        r->types = calloc((size_t)r->ncols + 1, sizeof *r->types);
        if (r->types == NULL) return tl_error_nomem(err);
        tl_text_batch_infer(&r->batch, &r->src, r->types);
    }
    if (r->ncols == 0)
        return tl_error_set(err, TL_ERR_INVALID,
                            "%s: no columns: the input has no objects with keys", r->src.name);
    if (r->batch.rows == 0) return TL_OK;
    return convert(r, &r->first, err);
}

tl_status tl_ndjson_stream_open(tl_text_input *in, const tl_ndjson_options *options,
                                const struct ArrowSchema *target, struct ArrowArrayStream *out,
                                tl_error *err)
{
    memset(out, 0, sizeof *out);
    ndjson_reader *r = calloc(1, sizeof *r);
    if (r == NULL) {
        tl_text_input_close(in);
        return tl_error_nomem(err);
    }
    tl_line_scan_init(&r->lines, in);
    r->src.name = r->lines.name;
    r->batch_rows = options && options->batch_rows > 0 ? options->batch_rows : 65536;
    r->progress = options ? options->progress : NULL;
    r->progress_ctx = options ? options->progress_ctx : NULL;
    struct ArrowSchema schema = {0};
    tl_status st = nd_start(r, target, err);
    if (st == TL_OK)
        st = tl_text_schema_make((const char *const *)r->names, r->types, r->ncols, &schema, err);
    for (int i = 0; st == TL_OK && r->json && i < r->ncols; i++) {
        if (!r->json[i]) continue;
        tl_schema_release(schema.children[i]);
        st = tl_schema_copy(&r->nested[i], schema.children[i], err);
    }
    if (st != TL_OK) {
        nd_free(r);
        return st;
    }
    tl_batch_reader reader = {.ctx = r, .next = nd_next, .free = nd_free};
    return tl_reader_stream_make(&schema, reader, out, err);
}
