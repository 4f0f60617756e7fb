#include "formats/csv/csv_reader.h"

#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "arrow/array.h"
#include "arrow/nested.h"
#include "arrow/parse.h"
#include "formats/csv/csv_scan.h"
#include "formats/input/reader_stream.h"
#include "formats/input/text_batch.h"
#include "formats/input/text_schema.h"

#define CSV_MAX_BATCH_BYTES ((size_t)64 << 20)

typedef struct csv_reader {
    tl_csv_scan scan;
    int64_t batch_rows;
    int ncols;
    char **names;
    tl_arrow_type *types;
    bool *required;      /* per column, from the target's nullability */
    tl_date_memo *memos; /* per column, for timestamps typed as they are read */
    size_t typed_text;   /* bytes of the batch's values typed as read (their text is not kept) */
    tl_text_batch batch;
    bool sized; /* the batch's buffers were sized for the input (once: they are kept) */
    tl_text_source src;
    struct ArrowArray first; /* the batch read at open, handed out first */
    tl_input_progress_fn progress;
    void *progress_ctx;
} csv_reader;

static void csv_free(void *ctx)
{
    csv_reader *c = ctx;
    if (c == NULL) return;
    tl_csv_scan_free(&c->scan);
    for (int i = 0; i < c->ncols; i++) free(c->names[i]);
    free(c->names);
    free(c->types);
    free(c->required);
    free(c->memos);
    tl_text_batch_free(&c->batch);
    tl_array_release(&c->first);
    free(c);
}

/* A field of a column typed as it is read (tl_text_column), parsed as the
 * conversion's plain loop would parse its text (text_convert.c,
 * convert_plain); false for what that loop leaves to the general one (empty
 * text, a null spelling, text that does not parse), which then goes in as
 * text, for the conversion to read as before. */
static bool parse_typed(csv_reader *c, int i, const uint8_t *f, size_t len, void *out)
{
    const char *s = (const char *)f;
    if (len == 0 || (c->src.csv_nulls && len <= 8 && tl_text_is_csv_null(s, len))) return false;
    switch (c->batch.cols[i].direct_id) {
    case TL_ATYPE_FLOAT64:
        return tl_parse_double(s, len, out, NULL) == TL_OK;
    case TL_ATYPE_INT64:
        return tl_parse_int64(s, len, out, NULL) == TL_OK;
    default:
        return tl_parse_timestamp_memo(s, len, c->types[i].unit, &c->memos[i], out, NULL) == TL_OK;
    }
}

/* Reads the next row into the batch; *eof at the end of the input. Adds
 * what the row grew the batch by (tl_text_batch_bytes) to *bytes. */
static tl_status next_row(csv_reader *c, bool *eof, size_t *bytes, tl_error *err)
{
    tl_csv_scan *s = &c->scan;
    TL_TRY(tl_csv_scan_next(s, eof, err));
    if (*eof) return TL_OK;
    if (s->nfields > c->ncols)
        return tl_error_set(err, TL_ERR_INVALID, "%s: line %lld: more than %d fields", c->src.name,
                            (long long)s->rec_line, c->ncols);
    if (s->nfields < c->ncols)
        return tl_error_set(err, TL_ERR_INVALID, "%s: line %lld: %d fields, expected %d",
                            c->src.name, (long long)s->rec_line, s->nfields, c->ncols);
    for (int i = 0; i < s->nfields; i++) {
        size_t len;
        const uint8_t *f = tl_csv_scan_field(s, i, &len);
        *bytes += len + sizeof(int64_t); /* the value and its offset */
        tl_text_column *col = &c->batch.cols[i];
        int64_t v;
        if (tl_text_column_is_text(col) || !parse_typed(c, i, f, len, &v)) {
            TL_TRY(tl_text_batch_put(&c->batch, i, f, len, TL_TEXT_STRING, err));
            continue;
        }
        if (tl_buf_append(&col->values, &v, sizeof v) != 0) return tl_error_nomem(err);
        col->direct++;
        c->typed_text += len;
    }
    return tl_text_batch_end_row(&c->batch, s->rec_line, err);
}

/* ---- Plain rows, straight into the batch ---- */

/* Most rows are plain: whole in the window before their '\n', each field
 * either bare or wholly quoted (a quote at its start, the closing one right
 * before its delimiter or the line end, none escaped), no carriage return
 * but a CRLF's, and the header's number of fields. Those are split in one
 * pass, sixteen bytes at a time, and their fields copied into the batch's
 * columns at once, instead of the scanner's per-field spans and puts (about
 * 180 instructions a field). Anything else (an escaped quote, a field over
 * lines, a wrong number of fields) goes to the scanner, which also writes
 * every message. */
#define PLAIN_MAX_FIELDS 256

typedef struct plain_split {
    size_t start[PLAIN_MAX_FIELDS], end[PLAIN_MAX_FIELDS]; /* each field's text, quotes off */
    size_t next;                                           /* just past the row's '\n' */
} plain_split;

/* A quote at `at`: opens a field's quoting (at its start only) or closes it
 * (then the field must end at the next byte); false when the row is not plain. */
static bool plain_quote(const tl_csv_scan *s, size_t at, size_t field, bool *in_quote, bool *quoted,
                        size_t *quote_end)
{
    if (!*in_quote) {
        if (at != field || *quoted) return false; /* a quote inside a bare field */
        return *in_quote = *quoted = true;
    }
    uint8_t next = at + 1 < s->w.len ? s->w.buf[at + 1] : 0;
    if (next != s->delim && next != '\n' && next != '\r') return false; /* "" or text after */
    *in_quote = false;
    *quote_end = at;
    return true;
}

/* Splits the row at w->pos into sp; false when it is not plain. Loads are
 * sixteen bytes at a time inside the window only: a row that ends in the
 * window's last sixteen bytes goes to the scanner. */
static bool split_plain(const tl_csv_scan *s, int ncols, plain_split *sp)
{
#ifdef __SSE2__
    const uint8_t *buf = s->w.buf;
    size_t i = s->w.pos, n = s->w.len, field = i, quote_end = 0;
    const __m128i nl = _mm_set1_epi8('\n'), q = _mm_set1_epi8('"'), cr = _mm_set1_epi8('\r'),
                  d = _mm_set1_epi8((char)s->delim);
    int nf = 0;
    bool in_quote = false, quoted = false;
    for (; n - i >= 16; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(buf + i));
        unsigned lf = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl));
        unsigned quote = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, q));
        unsigned ret = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, cr));
        unsigned delim = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, d));
        unsigned first = lf & -lf;                     /* the '\n', if any */
        unsigned before = first ? first - 1 : 0xFFFFu; /* the bytes before it */
        unsigned crlf = first >> 1; /* a CR right before it (one ending the block before fails) */
        if (ret & before & ~crlf) return false;
        for (unsigned m = (delim | quote) & before; m; m &= m - 1) {
            size_t at = i + (size_t)__builtin_ctz(m);
            if (quote & m & -m) {
                if (!plain_quote(s, at, field, &in_quote, &quoted, &quote_end)) return false;
                continue;
            }
            if (in_quote) continue;            /* a delimiter inside quotes is text */
            if (nf == ncols - 1) return false; /* too many fields */
            sp->start[nf] = quoted ? field + 1 : field;
            sp->end[nf++] = quoted ? quote_end : at;
            field = at + 1;
            quoted = false;
        }
        if (lf == 0) continue;
        if (in_quote || nf != ncols - 1) return false; /* a field over lines; too few fields */
        size_t at = i + (size_t)__builtin_ctz(lf), end = (ret & crlf) ? at - 1 : at;
        if (end == s->w.pos) return false; /* a blank line: the scanner skips it */
        sp->start[nf] = quoted ? field + 1 : field;
        sp->end[nf] = quoted ? quote_end : end;
        sp->next = at + 1;
        return true;
    }
#else
    (void)s, (void)ncols, (void)sp;
#endif
    return false;
}

/* Appends one split row's fields to the batch's columns: a typed column's
 * value as parsed, else its text; false when memory runs out (the scanner
 * then fails the same way). */
static bool put_plain(csv_reader *c, const plain_split *sp, size_t *bytes)
{
    tl_text_batch *b = &c->batch;
    const uint8_t *buf = c->scan.w.buf, *win_end = buf + c->scan.w.len;
    int64_t typed[PLAIN_MAX_FIELDS];
    bool is_typed[PLAIN_MAX_FIELDS];
    for (int i = 0; i < c->ncols; i++) {
        tl_text_column *col = &b->cols[i];
        size_t len = sp->end[i] - sp->start[i];
        if (col->offsets.len == 0) return false;
        is_typed[i] =
            !tl_text_column_is_text(col) && parse_typed(c, i, buf + sp->start[i], len, &typed[i]);
        if (is_typed[i] ? tl_buf_reserve(&col->values, sizeof(int64_t)) != 0
                        : (!tl_text_column_is_text(col) && tl_text_column_to_text(col) != 0) ||
                              tl_buf_reserve(&col->bytes, len + 16) != 0 ||
                              tl_buf_reserve(&col->offsets, sizeof(int64_t)) != 0 ||
                              tl_buf_reserve(&col->kinds, 1) != 0)
            return false;
    }
    if (tl_buf_reserve(&b->lines, sizeof(int64_t)) != 0) return false;
    for (int i = 0; i < c->ncols; i++) {
        tl_text_column *col = &b->cols[i];
        const uint8_t *f = buf + sp->start[i];
        size_t len = sp->end[i] - sp->start[i];
        *bytes += len + sizeof(int64_t);
        if (is_typed[i]) {
            memcpy(col->values.data + col->values.len, &typed[i], sizeof typed[i]);
            col->values.len += sizeof typed[i];
            col->direct++;
            c->typed_text += len;
            continue;
        }
        uint8_t *dst = col->bytes.data + col->bytes.len;
        if (len <= 16 && win_end - f >= 16)
            memcpy(dst, f, 16); /* one move; the column has room past its end */
        else
            memcpy(dst, f, len);
        col->bytes.len += len;
        col->bytes.data[col->bytes.len] = '\0';
        int64_t end = (int64_t)col->bytes.len;
        memcpy(col->offsets.data + col->offsets.len, &end, sizeof end);
        col->offsets.len += sizeof end;
        col->kinds.data[col->kinds.len++] = TL_TEXT_STRING;
    }
    int64_t line = c->scan.line;
    memcpy(b->lines.data + b->lines.len, &line, sizeof line);
    b->lines.len += sizeof line;
    b->rows++;
    return true;
}

/* The next row when it is plain, read into the batch; false (nothing read)
 * to leave it to next_row. */
static bool plain_row(csv_reader *c, size_t *bytes)
{
    tl_csv_scan *s = &c->scan;
    plain_split sp;
    if (s->w.buf == NULL || c->ncols < 1 || c->ncols > PLAIN_MAX_FIELDS || s->delim == '"' ||
        s->delim == '\n' || s->delim == '\r' || !split_plain(s, c->ncols, &sp) ||
        !put_plain(c, &sp, bytes))
        return false;
    s->rec_line = s->line++;
    s->nfields = c->ncols;
    s->w.pos = sp.next;
    return true;
}

/* Rows read into the first batch before its buffers are sized for the rest. */
#define SIZE_SAMPLE_ROWS 64

/* Sizes the batch for the rows the input holds in all (estimated from its
 * size and the sampled rows' text, a field separator each), up to a batch. */
static void reserve_rows(csv_reader *c)
{
    uint64_t size = tl_text_input_size(c->scan.w.in);
    const tl_text_batch *b = &c->batch;
    uint64_t text = (uint64_t)b->rows * (uint64_t)c->ncols + c->typed_text;
    for (int i = 0; i < b->ncols; i++) text += b->cols[i].bytes.len;
    if (size == 0 || text == 0) return;
    uint64_t rows = size / (text / (uint64_t)b->rows + 1) + 1;
    tl_text_batch_reserve(&c->batch,
                          rows < (uint64_t)c->batch_rows ? (int64_t)rows : c->batch_rows);
}

static tl_status read_batch(csv_reader *c, tl_error *err)
{
    tl_text_batch_reset(&c->batch);
    c->typed_text = 0;
    size_t bytes = tl_text_batch_bytes(&c->batch); /* then kept up row by row */
    while (c->batch.rows < c->batch_rows && bytes < CSV_MAX_BATCH_BYTES) {
        bool eof = false;
        if (!plain_row(c, &bytes)) TL_TRY(next_row(c, &eof, &bytes, err));
        if (eof) break;
        if (!c->sized && c->batch.rows == SIZE_SAMPLE_ROWS) {
            reserve_rows(c);
            c->sized = true;
        }
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
    if (c->progress) c->progress(c->progress_ctx, tl_text_input_position(c->scan.w.in));
    if (c->batch.rows == 0) return *done = true, TL_OK;
    return tl_text_batch_convert(&c->batch, &c->src, c->types, (const char *const *)c->names, out,
                                 err);
}

static tl_status read_header(csv_reader *c, tl_error *err)
{
    tl_csv_scan *s = &c->scan;
    bool eof;
    TL_TRY(tl_csv_scan_next(s, &eof, err));
    if (eof) return tl_error_set(err, TL_ERR_INVALID, "%s: empty file: no header row", c->src.name);
    if ((c->names = calloc((size_t)s->nfields, sizeof *c->names)) == NULL)
        return tl_error_nomem(err);
    for (int i = 0; i < s->nfields; i++, c->ncols++) {
        size_t len;
        const uint8_t *f = tl_csv_scan_field(s, i, &len);
        if ((c->names[i] = strndup((const char *)f, len)) == NULL) return tl_error_nomem(err);
    }
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
    if ((c->required = calloc((size_t)c->ncols + 1, sizeof *c->required)) == NULL ||
        (c->memos = calloc((size_t)c->ncols + 1, sizeof *c->memos)) == NULL)
        return tl_error_nomem(err);
    c->src.required = c->required;
    for (int i = 0; i < c->ncols; i++) {
        int f = tl_text_target_find(target, c->names[i]);
        if (f < 0)
            return tl_error_set(err, TL_ERR_INVALID, "%s: column \"%s\" is not in the table",
                                c->src.name, c->names[i]);
        if (tl_arrow_is_nested(target->children[f]))
            return tl_error_set(err, TL_ERR_INVALID,
                                "%s: column \"%s\" is a struct, list or map column, which CSV "
                                "text cannot fill: append it as NDJSON (JSON objects and arrays) "
                                "or Parquet, or leave the column out of the CSV",
                                c->src.name, c->names[i]);
        TL_TRY(tl_text_target_type(target, f, &c->types[i], err));
        c->required[i] = (target->children[f]->flags & ARROW_FLAG_NULLABLE) == 0;
        tl_atype id = c->types[i].id;
        /* Numbers and times are typed as they are read: their text would be
         * copied only to be parsed again. */
        if (id == TL_ATYPE_FLOAT64 || id == TL_ATYPE_INT64 || id == TL_ATYPE_TIMESTAMP)
            c->batch.cols[i].direct_id = (int)id;
    }
    return tl_target_required_present(target, (const char *const *)c->names, c->ncols, c->src.name,
                                      err);
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
    tl_csv_scan_init(&c->scan, in,
                     (uint8_t)(options && options->delimiter ? options->delimiter : ','));
    c->src.name = c->scan.name;
    c->src.csv_nulls = true;
    c->batch_rows = options && options->batch_rows > 0 ? options->batch_rows : 65536;
    c->progress = options ? options->progress : NULL;
    c->progress_ctx = options ? options->progress_ctx : NULL;
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
