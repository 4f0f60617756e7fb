#include "formats/csv/csv_reader.h"

#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "formats/input/reader_stream.h"
#include "formats/input/text_batch.h"
#include "formats/input/text_schema.h"

#define CSV_CHUNK (1u << 20)
#define CSV_MAX_RECORD ((size_t)64 << 20) /* a longer record is an error, not unbounded memory */
#define CSV_MAX_BATCH_BYTES ((size_t)64 << 20)
#define CSV_MAX_COLUMNS 10000

enum { REC_OK, REC_MORE, REC_SKIP, REC_EOF };

typedef struct csv_reader {
    tl_text_input *in;
    uint8_t delim;
    bool stop[256]; /* bytes that end an unquoted field */
    int64_t batch_rows;
    uint8_t *buf;
    size_t len, cap, pos;
    bool eof, started;
    int64_t line;     /* physical line (1-based) at pos */
    int64_t rec_line; /* line where the record being parsed starts */
    bool header;      /* parsing the header row */
    int ncols;
    char **names;
    tl_arrow_type *types;
    tl_text_batch batch;
    tl_buf field; /* a quoted field, unescaped */
    tl_text_source src;
    struct ArrowArray first; /* the batch read at open, handed out first */
    tl_input_progress_fn progress;
    void *progress_ctx;
} csv_reader;

static void csv_free(void *ctx)
{
    csv_reader *c = ctx;
    if (c == NULL) return;
    tl_text_input_close(c->in);
    free(c->buf);
    for (int i = 0; i < c->ncols; i++) free(c->names[i]);
    free(c->names);
    free(c->types);
    tl_text_batch_free(&c->batch);
    tl_buf_free(&c->field);
    tl_array_release(&c->first);
    free(c);
}

/* Moves the unparsed tail to the front and reads another chunk after it. */
static tl_status fill(csv_reader *c, tl_error *err)
{
    if (c->pos > 0) {
        memmove(c->buf, c->buf + c->pos, c->len - c->pos);
        c->len -= c->pos;
        c->pos = 0;
    }
    if (c->len > CSV_MAX_RECORD)
        return tl_error_set(err, TL_ERR_INVALID,
                            "%s: line %lld: a record longer than 64 MiB (an unclosed quote?)",
                            c->src.name, (long long)c->line);
    if (c->cap - c->len < CSV_CHUNK) {
        size_t cap = c->cap ? c->cap * 2 : 2 * CSV_CHUNK;
        uint8_t *nb = realloc(c->buf, cap);
        if (nb == NULL) return tl_error_nomem(err);
        c->buf = nb;
        c->cap = cap;
    }
    do { /* the first time, read at least 3 bytes to see a byte order mark */
        size_t n;
        TL_TRY(tl_text_input_read(c->in, c->buf + c->len, c->cap - c->len, &n, err));
        c->len += n;
        if (n == 0) c->eof = true;
    } while (!c->started && c->len < 3 && !c->eof);
    if (!c->started && c->len >= 3 && memcmp(c->buf, "\xEF\xBB\xBF", 3) == 0) c->pos = 3;
    c->started = true;
    return TL_OK;
}

static tl_status emit(csv_reader *c, int idx, const uint8_t *s, size_t len, tl_error *err)
{
    if (c->header) {
        if (idx >= CSV_MAX_COLUMNS)
            return tl_error_set(err, TL_ERR_INVALID, "%s: more than %d columns", c->src.name,
                                CSV_MAX_COLUMNS);
        char **names = realloc(c->names, (size_t)(idx + 1) * sizeof *names);
        if (names == NULL) return tl_error_nomem(err);
        c->names = names;
        if ((names[idx] = strndup((const char *)s, len)) == NULL) return tl_error_nomem(err);
        c->ncols = idx + 1;
        return TL_OK;
    }
    if (idx >= c->ncols)
        return tl_error_set(err, TL_ERR_INVALID, "%s: line %lld: more than %d fields", c->src.name,
                            (long long)c->rec_line, c->ncols);
    return tl_text_batch_put(&c->batch, idx, s, len, TL_TEXT_STRING, err);
}

/* Takes back the fields of a record that turned out to be incomplete. */
static void unput(csv_reader *c, int nf)
{
    if (c->header) {
        for (int i = 0; i < nf; i++) free(c->names[i]);
        c->ncols = 0;
        return;
    }
    for (int i = 0; i < nf; i++) {
        tl_text_column *col = &c->batch.cols[i];
        col->offsets.len -= sizeof(int64_t);
        col->kinds.len--;
        col->bytes.len = (size_t)((const int64_t *)col->offsets.data)[col->kinds.len];
    }
}

static size_t count_newlines(const uint8_t *s, size_t n)
{
    size_t k = 0;
    for (const uint8_t *e = s + n; (s = memchr(s, '\n', (size_t)(e - s))) != NULL; s++) k++;
    return k;
}

/* A quoted field starting at *i (on the quote). Sets *more when input ran out. */
static tl_status quoted_field(csv_reader *c, size_t *i, int64_t *lines, bool *more, tl_error *err)
{
    const uint8_t *p = c->buf;
    size_t n = c->len, j = *i + 1;
    c->field.len = 0;
    for (;;) {
        const uint8_t *q = memchr(p + j, '"', n - j);
        if (q == NULL && !c->eof) return *more = true, TL_OK;
        if (q == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "%s: line %lld: unterminated quoted field",
                                c->src.name, (long long)c->rec_line);
        size_t k = (size_t)(q - p);
        if (tl_buf_append(&c->field, p + j, k - j) != 0) return tl_error_nomem(err);
        *lines += (int64_t)count_newlines(p + j, k - j);
        if (k + 1 == n && !c->eof) return *more = true, TL_OK;
        if (k + 1 < n && p[k + 1] == '"') {
            if (tl_buf_append_byte(&c->field, '"') != 0) return tl_error_nomem(err);
            j = k + 2;
            continue;
        }
        *i = k + 1;
        if (*i < n && !c->stop[p[*i]])
            return tl_error_set(err, TL_ERR_INVALID,
                                "%s: line %lld: unexpected text after a closing quote", c->src.name,
                                (long long)(c->rec_line + *lines));
        return TL_OK;
    }
}

/* Skips an empty line at pos. Returns true when there was one. */
static bool skip_blank(csv_reader *c, int *result)
{
    const uint8_t *p = c->buf;
    size_t i = c->pos, n = c->len;
    if (p[i] == '\n') {
        c->pos = i + 1;
    } else if (p[i] == '\r') {
        if (i + 1 == n && !c->eof) return *result = REC_MORE, true;
        c->pos = i + 1 + (i + 1 < n && p[i + 1] == '\n');
    } else {
        return false;
    }
    c->line++;
    *result = REC_SKIP;
    return true;
}

static tl_status parse_record(csv_reader *c, int *result, tl_error *err)
{
    const uint8_t *p = c->buf;
    size_t n = c->len, i = c->pos;
    if (i == n) return *result = c->eof ? REC_EOF : REC_MORE, TL_OK;
    if (skip_blank(c, result)) return TL_OK;
    c->rec_line = c->line;
    int64_t lines = 0;
    int nf = 0;
    bool more = false;
    tl_status st = TL_OK;
    for (;;) {
        const uint8_t *fs;
        size_t fl;
        if (i < n && p[i] == '"') {
            st = quoted_field(c, &i, &lines, &more, err);
            if (st != TL_OK || more) break;
            fs = c->field.data;
            fl = c->field.len;
        } else {
            size_t j = i;
            while (j < n && !c->stop[p[j]]) j++;
            if (j == n && !c->eof) {
                more = true;
                break;
            }
            fs = p + i;
            fl = j - i;
            i = j;
        }
        if ((st = emit(c, nf, fs, fl, err)) != TL_OK) break;
        nf++;
        if (i < n && p[i] == c->delim) {
            i++;
            continue;
        }
        if (i < n && p[i] == '\r') {
            if (i + 1 == n && !c->eof) {
                more = true;
                break;
            }
            i += 1 + (i + 1 < n && p[i + 1] == '\n');
        } else if (i < n) {
            i++; /* the '\n' */
        }
        break;
    }
    if (st != TL_OK || more) {
        unput(c, nf);
        *result = REC_MORE;
        return st;
    }
    if (!c->header && nf != c->ncols) {
        unput(c, nf);
        return tl_error_set(err, TL_ERR_INVALID, "%s: line %lld: %d fields, expected %d",
                            c->src.name, (long long)c->rec_line, nf, c->ncols);
    }
    if (!c->header) TL_TRY(tl_text_batch_end_row(&c->batch, c->rec_line, err));
    c->pos = i;
    c->line += lines + 1;
    *result = REC_OK;
    return TL_OK;
}

/* Parses one complete record (a header or a row); *result is REC_OK or REC_EOF. */
static tl_status next_record(csv_reader *c, int *result, tl_error *err)
{
    for (;;) {
        TL_TRY(parse_record(c, result, err));
        if (*result == REC_MORE)
            TL_TRY(fill(c, err));
        else if (*result != REC_SKIP)
            return TL_OK;
    }
}

static tl_status read_batch(csv_reader *c, tl_error *err)
{
    tl_text_batch_reset(&c->batch);
    while (c->batch.rows < c->batch_rows && tl_text_batch_bytes(&c->batch) < CSV_MAX_BATCH_BYTES) {
        int r;
        TL_TRY(next_record(c, &r, err));
        if (r == REC_EOF) break;
    }
    return TL_OK;
}

static tl_status csv_next(void *ctx, struct ArrowArray *out, bool *done, tl_error *err)
{
    csv_reader *c = ctx;
    if (c->first.release) {
        tl_array_move(&c->first, out);
        return TL_OK;
    }
    TL_TRY(read_batch(c, err));
    if (c->progress) c->progress(c->progress_ctx, tl_text_input_position(c->in));
    if (c->batch.rows == 0) return *done = true, TL_OK;
    return tl_text_batch_convert(&c->batch, &c->src, c->types, (const char *const *)c->names, out,
                                 err);
}

static tl_status read_header(csv_reader *c, tl_error *err)
{
    c->header = true;
    int r;
    TL_TRY(next_record(c, &r, err));
    c->header = false;
    if (r == REC_EOF)
        return tl_error_set(err, TL_ERR_INVALID, "%s: empty file: no header row", c->src.name);
    for (int i = 0; i < c->ncols; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(c->names[i], c->names[j]) == 0)
                return tl_error_set(err, TL_ERR_INVALID, "%s: column \"%s\" appears twice",
                                    c->src.name, c->names[i]);
    c->types = calloc((size_t)c->ncols, sizeof *c->types);
    if (c->types == NULL) return tl_error_nomem(err);
    return tl_text_batch_init(&c->batch, c->ncols, err);
}

static tl_status target_types(csv_reader *c, const struct ArrowSchema *target, tl_error *err)
{
    for (int i = 0; i < c->ncols; i++) {
        int f = tl_text_target_find(target, c->names[i]);
        if (f < 0)
            return tl_error_set(err, TL_ERR_INVALID, "%s: column \"%s\" is not in the table",
                                c->src.name, c->names[i]);
        TL_TRY(tl_text_target_type(target, f, &c->types[i], err));
    }
    return TL_OK;
}

static tl_status csv_start(csv_reader *c, const struct ArrowSchema *target, tl_error *err)
{
    TL_TRY(read_header(c, err));
    if (target) TL_TRY(target_types(c, target, err));
    TL_TRY(read_batch(c, err));
    if (!target) tl_text_batch_infer(&c->batch, &c->src, c->types);
    if (c->batch.rows == 0) return TL_OK;
    return tl_text_batch_convert(&c->batch, &c->src, c->types, (const char *const *)c->names,
                                 &c->first, err);
}

tl_status tl_csv_stream_open(tl_text_input *in, const tl_csv_options *options,
                             const struct ArrowSchema *target, struct ArrowArrayStream *out,
                             tl_error *err)
{
    memset(out, 0, sizeof *out);
    csv_reader *c = calloc(1, sizeof *c);
    if (c == NULL) {
        tl_text_input_close(in);
        return tl_error_nomem(err);
    }
    c->in = in;
    c->src.name = tl_text_input_name(in);
    c->src.csv_nulls = true;
    c->delim = (uint8_t)(options && options->delimiter ? options->delimiter : ',');
    c->batch_rows = options && options->batch_rows > 0 ? options->batch_rows : 65536;
    c->progress = options ? options->progress : NULL;
    c->progress_ctx = options ? options->progress_ctx : NULL;
    c->stop[c->delim] = c->stop['\n'] = c->stop['\r'] = true;
    c->line = 1;
    struct ArrowSchema schema = {0};
    tl_status st = csv_start(c, target, err);
    if (st == TL_OK)
        st = tl_text_schema_make((const char *const *)c->names, c->types, c->ncols, &schema, err);
    if (st != TL_OK) {
        csv_free(c);
        return st;
    }
    tl_batch_reader reader = {.ctx = c, .next = csv_next, .free = csv_free};
    return tl_reader_stream_make(&schema, reader, out, err);
}
