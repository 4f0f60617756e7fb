/* The CSV record scanner against records it was not written from: random
 * records (quoted fields with delimiters, quotes, LF, CR and CRLF inside,
 * empty fields, bytes that are not UTF-8, fields far longer than the 16 bytes
 * the scanner looks at at once) are written out as text with random line
 * ends, then scanned through reads of random sizes; every field must come
 * back byte for byte, with the line each record starts on. */
#include <stdlib.h>

#include "core/buf.h"
#include "formats/csv/csv_scan.h"
#include "formats/input/text_input.h"
#include "unit.h"

#define MAX_FIELDS 12

static uint64_t seed = 0x5DEECE66DULL;

static uint64_t rnd(uint64_t n)
{
    return trand(&seed) % n;
}

typedef struct record {
    int n;
    tl_buf fields[MAX_FIELDS];
    int64_t line; /* where it starts */
} record;

/* A byte of an unquoted field: anything but the delimiter, CR, LF (and a
 * quote first, which would open a quoted field). */
static uint8_t plain_byte(uint8_t delim)
{
    static const char alphabet[] = "0123456789.-+eE abcxyz\"'\t;,|";
    for (;;) {
        uint8_t c = rnd(4) ? (uint8_t)alphabet[rnd(sizeof alphabet - 1)] : (uint8_t)rnd(256);
        if (c != delim && c != '\n' && c != '\r') return c;
    }
}

static size_t field_length(void)
{
    switch (rnd(8)) {
    case 0:
        return 0;
    case 1:
        return 15 + rnd(3); /* around one 16-byte block */
    case 2:
        return 16 + rnd(200);
    case 3:
        return rnd(8) == 0 ? 4000 + rnd(70000) : rnd(40); /* very long now and then */
    default:
        return 1 + rnd(20);
    }
}

/* Writes one random field of record r to text; returns the newlines it holds. */
static int64_t write_field(record *r, int i, uint8_t delim, tl_buf *text)
{
    tl_buf *f = &r->fields[i];
    size_t len = field_length();
    bool quoted = rnd(3) == 0;
    int64_t lines = 0;
    f->len = 0;
    (void)tl_buf_reserve(f, len + 1);
    if (!quoted) {
        for (size_t k = 0; k < len; k++) {
            uint8_t c = plain_byte(delim);
            if (k == 0 && c == '"') c = 'q';
            (void)tl_buf_append_byte(f, c);
        }
        /* A record of one empty unquoted field is a blank line, skipped. */
        if (r->n == 1 && len == 0) (void)tl_buf_append_byte(f, 'z');
        (void)tl_buf_append(text, f->data, f->len);
        return 0;
    }
    (void)tl_buf_append_byte(text, '"');
    for (size_t k = 0; k < len; k++) {
        static const char special[] = {'"', '\n', '\r', ',', '\t'};
        uint8_t c = rnd(6) == 0 ? (uint8_t)special[rnd(sizeof special)] : plain_byte(delim);
        (void)tl_buf_append_byte(f, c);
        if (c == '"') (void)tl_buf_append_byte(text, '"');
        (void)tl_buf_append_byte(text, c);
        lines += c == '\n';
    }
    (void)tl_buf_append_byte(text, '"');
    return lines;
}

/* Random records (with blank lines between some) as text; their count. */
static int make_text(record *recs, int n, uint8_t delim, tl_buf *text)
{
    int64_t line = 1;
    if (rnd(4) == 0) (void)tl_buf_append(text, "\xEF\xBB\xBF", 3);
    for (int i = 0; i < n; i++) {
        while (rnd(10) == 0) {
            (void)tl_buf_append_str(text, rnd(2) ? "\r\n" : "\n");
            line++;
        }
        record *r = &recs[i];
        r->n = 1 + (int)rnd(MAX_FIELDS);
        r->line = line;
        for (int k = 0; k < r->n; k++) {
            if (k > 0) (void)tl_buf_append_byte(text, delim);
            line += write_field(r, k, delim, text);
        }
        /* The last record may end without a line end. */
        if (i + 1 < n || rnd(2)) (void)tl_buf_append_str(text, rnd(3) == 0 ? "\r\n" : "\n");
        line++;
    }
    return n;
}

static void scan_and_compare(const record *recs, int n, uint8_t delim, const tl_buf *text,
                             size_t limit)
{
    tl_error err = {0};
    tl_text_input *in;
    CHECK_OK(tl_text_input_open_memory(text->data, text->len, "r.csv", &in, &err), &err);
    tl_text_input_set_read_limit(in, limit);
    tl_csv_scan s;
    tl_csv_scan_init(&s, in, delim);
    int got = 0;
    for (;; got++) {
        bool eof = false;
        tl_status st = tl_csv_scan_next(&s, &eof, &err);
        if (st != TL_OK) {
            unit_fail(__FILE__, __LINE__, "record %d: %s", got, err.message);
            break;
        }
        if (eof) break;
        if (got >= n) {
            unit_fail(__FILE__, __LINE__, "more records than the %d written", n);
            break;
        }
        const record *r = &recs[got];
        CHECK_INT(s.nfields, r->n);
        CHECK_INT(s.rec_line, r->line);
        for (int k = 0; k < s.nfields && k < r->n; k++) {
            size_t len;
            const uint8_t *f = tl_csv_scan_field(&s, k, &len);
            if (len != r->fields[k].len || (len && memcmp(f, r->fields[k].data, len) != 0)) {
                unit_fail(__FILE__, __LINE__, "record %d field %d: %zu bytes, expected %zu", got, k,
                          len, r->fields[k].len);
                break;
            }
        }
        if (unit_failures > 10) break;
    }
    CHECK_INT(got, n);
    tl_csv_scan_free(&s);
}

static void test_random_records(void)
{
    static record recs[40];
    for (int round = 0; round < 300 && unit_failures == 0; round++) {
        uint8_t delim = rnd(3) == 0 ? '\t' : ',';
        tl_buf text = {0};
        int n = make_text(recs, 1 + (int)rnd(40), delim, &text);
        /* Short reads only of short texts: a record read again after each
         * read costs its length squared over the read size. */
        static const size_t limits[] = {1, 2, 3, 7, 15, 16, 17, 31, 64, 1000, 4096, 1 << 20};
        size_t first = text.len < 8192 ? 0 : 9, nl = sizeof limits / sizeof limits[0];
        size_t limit = limits[first + rnd(nl - first)];
        scan_and_compare(recs, n, delim, &text, limit);
        scan_and_compare(recs, n, delim, &text, 0); /* no limit: the bytes are the window */
        tl_buf_free(&text);
    }
    for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++)
        for (int k = 0; k < MAX_FIELDS; k++) tl_buf_free(&recs[i].fields[k]);
}

/* Fixed cases, each read whole and a byte at a time. */
static void expect_fields(const char *text, size_t len, const char *const *want, int n)
{
    const size_t limits[] = {1, 2, 3, len + 1, 0}; /* 0: the bytes are the window */
    for (size_t l = 0; l < 5; l++) {
        size_t limit = limits[l];
        tl_error err = {0};
        tl_text_input *in;
        CHECK_OK(tl_text_input_open_memory((const uint8_t *)text, len, "f.csv", &in, &err), &err);
        tl_text_input_set_read_limit(in, limit);
        tl_csv_scan s;
        tl_csv_scan_init(&s, in, ',');
        bool eof = false;
        CHECK_OK(tl_csv_scan_next(&s, &eof, &err), &err);
        CHECK(!eof);
        CHECK_INT(s.nfields, n);
        for (int k = 0; k < n && k < s.nfields; k++) {
            size_t flen;
            const uint8_t *f = tl_csv_scan_field(&s, k, &flen);
            CHECK_INT(flen, strlen(want[k]));
            CHECK(memcmp(f, want[k], flen) == 0);
        }
        tl_csv_scan_free(&s);
    }
}

#define T(lit) lit, sizeof(lit) - 1

static void test_fixed_records(void)
{
    const char *three[] = {"0123456789abcdef0123", "", "x"};
    expect_fields(T("0123456789abcdef0123,,x\n"), three, 3);
    const char *crlf[] = {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "b"};
    expect_fields(T("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,b\r\n"), crlf, 2);
    const char *cr_in[] = {"0123456789abcde"}; /* a CR alone ends the record too */
    expect_fields(T("0123456789abcde\rzzzzzzzzzzzzzzzzzzz"), cr_in, 1);
    const char *quoted[] = {"a\"b,c\r\nd", "e\"f"};
    expect_fields(T("\"a\"\"b,c\r\nd\",e\"f\n"), quoted, 2);
    const char *bytes[] = {"\xff\xfe\x80 not utf-8 \xc3", ""};
    expect_fields(T("\xff\xfe\x80 not utf-8 \xc3,"), bytes, 2);
}

UNIT_TESTS(UNIT(test_fixed_records), UNIT(test_random_records))
