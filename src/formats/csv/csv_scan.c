#include "formats/csv/csv_scan.h"

#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define CSV_MAX_RECORD ((size_t)64 << 20) /* a longer record is an error, not unbounded memory */
#define CSV_MAX_FIELDS 10000

enum { REC_OK, REC_MORE, REC_SKIP, REC_EOF };

void tl_csv_scan_init(tl_csv_scan *s, tl_text_input *in, uint8_t delim)
{
    memset(s, 0, sizeof *s);
    s->w.in = in;
    s->name = tl_text_input_name(in);
    s->delim = delim;
    s->stop[delim] = s->stop['\n'] = s->stop['\r'] = true;
    s->line = 1;
}

void tl_csv_scan_free(tl_csv_scan *s)
{
    tl_text_window_free(&s->w);
    tl_buf_free(&s->spans);
    tl_buf_free(&s->quoted);
    memset(s, 0, sizeof *s);
}

int64_t tl_csv_scan_lines(const tl_csv_scan *s)
{
    return s->line - 1;
}

static tl_status fill(tl_csv_scan *s, tl_error *err)
{
    bool too_long;
    TL_TRY(tl_text_window_fill(&s->w, CSV_MAX_RECORD, &too_long, err));
    if (too_long)
        return tl_error_set(err, TL_ERR_INVALID,
                            "%s: line %lld: a record longer than 64 MiB (an unclosed quote?)",
                            s->name, (long long)s->line);
    return TL_OK;
}

static tl_status too_many_fields(tl_csv_scan *s, tl_error *err)
{
    return tl_error_set(err, TL_ERR_INVALID, "%s: line %lld: more than %d fields", s->name,
                        (long long)s->rec_line, CSV_MAX_FIELDS);
}

/* Per field of every record: inline, a store when the spans have room. */
static inline tl_status add_field(tl_csv_scan *s, size_t off, size_t len, bool quoted,
                                  tl_error *err)
{
    if (s->nfields >= CSV_MAX_FIELDS) return too_many_fields(s, err);
    if (tl_buf_reserve(&s->spans, sizeof(tl_csv_span)) != 0) return tl_error_nomem(err);
    ((tl_csv_span *)s->spans.data)[s->nfields++] = (tl_csv_span){off, len, quoted};
    s->spans.len += sizeof(tl_csv_span);
    return TL_OK;
}

/* Where the unquoted field at j ends: the first delimiter, '\n' or '\r'
 * from j on, or n. Sixteen bytes at a time where SSE2 is (every x86-64),
 * then byte by byte through the stop table. */
static inline size_t field_end(const tl_csv_scan *s, const uint8_t *p, size_t j, size_t n)
{
#ifdef __SSE2__
    const __m128i d = _mm_set1_epi8((char)s->delim), lf = _mm_set1_epi8('\n'),
                  cr = _mm_set1_epi8('\r');
    for (; n - j >= 16; j += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + j));
        __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, d),
                                   _mm_or_si128(_mm_cmpeq_epi8(v, lf), _mm_cmpeq_epi8(v, cr)));
        unsigned m = (unsigned)_mm_movemask_epi8(hit);
        if (m) return j + (size_t)__builtin_ctz(m);
    }
#endif
    while (j < n && !s->stop[p[j]]) j++;
    return j;
}

static size_t count_newlines(const uint8_t *p, size_t n)
{
    size_t k = 0;
    for (const uint8_t *e = p + n; (p = memchr(p, '\n', (size_t)(e - p))) != NULL; p++) k++;
    return k;
}

/* A quoted field starting at *i (on the quote), unescaped onto s->quoted.
 * Sets *more when input ran out. */
static tl_status quoted_field(tl_csv_scan *s, size_t *i, int64_t *lines, bool *more, tl_error *err)
{
    const uint8_t *p = s->w.buf;
    size_t n = s->w.len, j = *i + 1, start = s->quoted.len;
    for (;;) {
        const uint8_t *q = memchr(p + j, '"', n - j);
        if (q == NULL && !s->w.eof) return *more = true, TL_OK;
        if (q == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "%s: line %lld: unterminated quoted field",
                                s->name, (long long)s->rec_line);
        size_t k = (size_t)(q - p);
        if (tl_buf_append(&s->quoted, p + j, k - j) != 0) return tl_error_nomem(err);
        *lines += (int64_t)count_newlines(p + j, k - j);
        if (k + 1 == n && !s->w.eof) return *more = true, TL_OK;
        if (k + 1 < n && p[k + 1] == '"') {
            if (tl_buf_append_byte(&s->quoted, '"') != 0) return tl_error_nomem(err);
            j = k + 2;
            continue;
        }
        *i = k + 1;
        if (*i < n && !s->stop[p[*i]])
            return tl_error_set(err, TL_ERR_INVALID,
                                "%s: line %lld: unexpected text after a closing quote", s->name,
                                (long long)(s->rec_line + *lines));
        return add_field(s, start, s->quoted.len - start, true, err);
    }
}

/* Skips an empty line at pos. Returns true when there was one. */
static bool skip_blank(tl_csv_scan *s, int *result)
{
    const uint8_t *p = s->w.buf;
    size_t i = s->w.pos, n = s->w.len;
    if (p[i] == '\n') {
        s->w.pos = i + 1;
    } else if (p[i] == '\r') {
        if (i + 1 == n && !s->w.eof) return *result = REC_MORE, true;
        s->w.pos = i + 1 + (i + 1 < n && p[i + 1] == '\n');
    } else {
        return false;
    }
    s->line++;
    *result = REC_SKIP;
    return true;
}

static tl_status parse_record(tl_csv_scan *s, int *result, tl_error *err)
{
    const uint8_t *p = s->w.buf;
    size_t n = s->w.len, i = s->w.pos;
    if (i == n) return *result = s->w.eof ? REC_EOF : REC_MORE, TL_OK;
    if (skip_blank(s, result)) return TL_OK;
    s->rec_line = s->line;
    s->nfields = 0;
    s->spans.len = s->quoted.len = 0;
    int64_t lines = 0;
    *result = REC_MORE;
    for (;;) {
        bool more = false;
        if (i < n && p[i] == '"') {
            TL_TRY(quoted_field(s, &i, &lines, &more, err));
            if (more) return TL_OK;
        } else {
            size_t j = field_end(s, p, i, n);
            if (j == n && !s->w.eof) return TL_OK;
            TL_TRY(add_field(s, i, j - i, false, err));
            i = j;
        }
        if (i < n && p[i] == s->delim) {
            i++;
            continue;
        }
        if (i < n && p[i] == '\r') {
            if (i + 1 == n && !s->w.eof) return TL_OK;
            i += 1 + (i + 1 < n && p[i + 1] == '\n');
        } else if (i < n) {
            i++; /* the '\n' */
        }
        break;
    }
    s->w.pos = i;
    s->line += lines + 1;
    *result = REC_OK;
    return TL_OK;
}

tl_status tl_csv_scan_next(tl_csv_scan *s, bool *eof, tl_error *err)
{
    for (;;) {
        int r = REC_MORE;
        if (s->w.buf != NULL) TL_TRY(parse_record(s, &r, err));
        if (r == REC_MORE)
            TL_TRY(fill(s, err));
        else if (r != REC_SKIP)
            return *eof = r == REC_EOF, TL_OK;
    }
}
