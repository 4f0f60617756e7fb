/* CSV/TSV records, one at a time: RFC 4180 quoting ("" escapes a quote,
 * quoted fields may span lines), LF or CRLF line ends, blank lines skipped, a
 * UTF-8 BOM ignored. The input is read in chunks, so memory is bounded by the
 * longest record (64 MiB at most), not by the file. What a record's fields
 * mean (header, typed values) is the caller's. */
#ifndef TL_CSV_SCAN_H
#define TL_CSV_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "formats/input/text_window.h"

typedef struct tl_csv_scan {
    tl_text_window w; /* owns the input */
    const char *name; /* the input's name, for messages */
    uint8_t delim;
    bool stop[256];   /* bytes that end an unquoted field */
    int64_t line;     /* physical line (1-based) at w.pos */
    int64_t rec_line; /* line where the last record starts */
    int nfields;      /* fields of the last record */
    tl_buf spans;     /* per field: a tl_csv_span */
    tl_buf quoted;    /* the record's quoted fields, unescaped */
} tl_csv_scan;

/* Starts scanning `in` (taken over: closed by tl_csv_scan_free) with `delim`. */
void tl_csv_scan_init(tl_csv_scan *s, tl_text_input *in, uint8_t delim);
void tl_csv_scan_free(tl_csv_scan *s);

/* Reads the next complete record: s->nfields fields, starting at line
 * s->rec_line; *eof at the end of the input. Malformed text (an unterminated
 * quote, text after a closing quote, a record over 64 MiB or of more than
 * 10,000 fields) is TL_ERR_INVALID naming the input and the line. */
tl_status tl_csv_scan_next(tl_csv_scan *s, bool *eof, tl_error *err);

/* Where a field of the record is: in the window, or (quoted) unescaped in
 * `quoted`. Offsets, not pointers: both buffers may move while the record
 * is read. */
typedef struct tl_csv_span {
    size_t off, len;
    bool quoted;
} tl_csv_span;

/* Field i of the last record; valid until the next call. Inline: called
 * for every field. */
static inline const uint8_t *tl_csv_scan_field(const tl_csv_scan *s, int i, size_t *len)
{
    const tl_csv_span *f = (const tl_csv_span *)s->spans.data + i;
    *len = f->len;
    if (f->len == 0) return (const uint8_t *)"";
    return (f->quoted ? s->quoted.data : s->w.buf) + f->off;
}

/* Lines of the input consumed so far (the last one counts even without a newline). */
int64_t tl_csv_scan_lines(const tl_csv_scan *s);

#endif
