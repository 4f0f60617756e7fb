/* The text readers' byte input: plain and gzip data, from memory and files,
 * with every split of the source; a cut, damaged or extended gzip stream is an
 * error naming the input, never a short read that looks like the end. */
#include <stdlib.h>
#include <zlib.h>

#include "core/buf.h"
#include "formats/input/text_input.h"
#include "unit.h"

/* One gzip member of `len` bytes at `text`, appended to *out. */
static void gzip_member(const char *text, size_t len, tl_buf *out)
{
    CHECK(unit_gzip(text, len, out) == 0);
}

/* Some text that does not compress to nothing. */
static void make_text(tl_buf *text, int rows)
{
    for (int i = 0; i < rows; i++)
        tl_buf_printf(text, "2024-05-01T10:%02d:%02dZ,dev-%d,%d.%d\n", i / 60 % 60, i % 60,
                      i * 7919 % 1000, i, i * 31 % 10);
}

/* Reads the whole input; *st is the first failure (or TL_OK). */
static void read_all(tl_text_input *in, size_t cap, tl_buf *out, tl_status *st, tl_error *err)
{
    uint8_t chunk[4096];
    if (cap > sizeof chunk) cap = sizeof chunk;
    for (;;) {
        size_t n;
        *st = tl_text_input_read(in, chunk, cap, &n, err);
        if (*st != TL_OK || n == 0) return;
        tl_buf_append(out, chunk, n);
    }
}

static tl_status read_memory(const tl_buf *src, size_t limit, tl_buf *out, tl_error *err)
{
    tl_text_input *in;
    tl_status st = tl_text_input_open_memory(src->data, src->len, "in.csv.gz", &in, err);
    if (st != TL_OK) return st;
    if (limit) tl_text_input_set_read_limit(in, limit);
    CHECK_INT(tl_text_input_size(in), src->len);
    read_all(in, 4096, out, &st, err);
    tl_text_input_close(in);
    return st;
}

static void test_plain_and_gzip_members_read_whole(void)
{
    tl_buf text = {0}, gz = {0};
    make_text(&text, 3000);
    size_t half = text.len / 2;
    gzip_member((const char *)text.data, half, &gz);
    gzip_member((const char *)text.data + half, text.len - half, &gz);
    memset(tl_buf_extend(&gz, 700), 0, 700); /* zero padding after the last member */
    size_t limits[] = {0, 1, 2, 3, 7, 100, 4095};
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
        tl_buf plain = {0}, unzipped = {0};
        tl_error err = {0};
        CHECK_OK(read_memory(&text, limits[i], &plain, &err), &err);
        CHECK_OK(read_memory(&gz, limits[i], &unzipped, &err), &err);
        CHECK(plain.len == text.len && memcmp(plain.data, text.data, text.len) == 0);
        CHECK(unzipped.len == text.len && memcmp(unzipped.data, text.data, text.len) == 0);
        tl_buf_free(&plain);
        tl_buf_free(&unzipped);
    }
    tl_buf_free(&text);
    tl_buf_free(&gz);
}

/* Plain bytes in memory are lent whole, once, and then read; gzip, a read
 * limit or bytes already read are not lent. */
static void test_borrow_all(void)
{
    tl_buf text = {0}, gz = {0};
    make_text(&text, 100);
    gzip_member((const char *)text.data, text.len, &gz);
    tl_text_input *in;
    tl_error err = {0};
    const uint8_t *all = NULL;
    size_t len = 0, n;
    uint8_t byte;
    CHECK_OK(tl_text_input_open_memory(text.data, text.len, "m", &in, &err), &err);
    CHECK(tl_text_input_borrow_all(in, &all, &len) && all == text.data && len == text.len);
    CHECK_INT(tl_text_input_position(in), text.len);
    CHECK(!tl_text_input_borrow_all(in, &all, &len));
    CHECK_OK(tl_text_input_read(in, &byte, 1, &n, &err), &err);
    CHECK_INT(n, 0);
    tl_text_input_close(in);
    CHECK_OK(tl_text_input_open_memory(gz.data, gz.len, "m.gz", &in, &err), &err);
    CHECK(!tl_text_input_borrow_all(in, &all, &len));
    tl_text_input_close(in);
    CHECK_OK(tl_text_input_open_memory(text.data, text.len, "m", &in, &err), &err);
    tl_text_input_set_read_limit(in, 7);
    CHECK(!tl_text_input_borrow_all(in, &all, &len));
    tl_text_input_set_read_limit(in, 0);
    CHECK_OK(tl_text_input_read(in, &byte, 1, &n, &err), &err);
    CHECK(!tl_text_input_borrow_all(in, &all, &len));
    tl_text_input_close(in);
    tl_buf_free(&text);
    tl_buf_free(&gz);
}

/* Every prefix of a gzip file that keeps its magic number is an error:
 * whether it ends mid-block, on a flush point or inside the trailer. */
static void test_every_cut_is_an_error(void)
{
    tl_buf text = {0}, gz = {0};
    make_text(&text, 400);
    gzip_member((const char *)text.data, text.len, &gz);
    for (size_t cut = 2; cut < gz.len; cut++) {
        tl_buf part = {.data = gz.data, .len = cut}, out = {0};
        tl_error err = {0};
        tl_status st = read_memory(&part, cut % 5 ? 64 : 0, &out, &err);
        CHECK_INT(st, TL_ERR_INVALID);
        CHECK(strstr(err.message, "in.csv.gz: truncated gzip file") == err.message);
        tl_buf_free(&out);
    }
    tl_buf_free(&text);
    tl_buf_free(&gz);
}

/* A data-loss case: a stream flushed on a row boundary and cut there
 * decompresses to whole rows; only the missing trailer tells. */
static void test_cut_on_a_flush_point(void)
{
    tl_buf text = {0}, gz = {0};
    make_text(&text, 1000);
    z_stream z = {0};
    CHECK(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    uint8_t *dst = tl_buf_extend(&gz, deflateBound(&z, (uLong)text.len));
    z.next_in = text.data;
    z.avail_in = (uInt)(text.len / 2);
    z.next_out = dst;
    z.avail_out = (uInt)gz.len;
    CHECK(deflate(&z, Z_SYNC_FLUSH) == Z_OK);
    gz.len -= z.avail_out;
    deflateEnd(&z);
    tl_buf out = {0};
    tl_error err = {0};
    CHECK_INT(read_memory(&gz, 0, &out, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "truncated gzip file") != NULL);
    tl_buf_free(&out);
    tl_buf_free(&text);
    tl_buf_free(&gz);
}

static void check_damage(size_t from_end, const char *words)
{
    tl_buf text = {0}, gz = {0}, out = {0};
    make_text(&text, 500);
    gzip_member((const char *)text.data, text.len, &gz);
    gz.data[gz.len - from_end] ^= 0x10;
    tl_error err = {0};
    CHECK_INT(read_memory(&gz, 0, &out, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "in.csv.gz: corrupt gzip data") == err.message);
    if (strstr(err.message, words) == NULL) unit_fail(__FILE__, __LINE__, "%s", err.message);
    tl_buf_free(&out);
    tl_buf_free(&text);
    tl_buf_free(&gz);
}

static void test_crc_and_length_mismatch(void)
{
    check_damage(8, "CRC-32 does not match");
    check_damage(4, "length does not match");
}

static void test_bytes_after_the_stream(void)
{
    tl_buf text = {0}, gz = {0}, out = {0};
    make_text(&text, 100);
    gzip_member((const char *)text.data, text.len, &gz);
    tl_buf_append_str(&gz, "more,rows\n");
    tl_error err = {0};
    CHECK_INT(read_memory(&gz, 3, &out, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "unexpected bytes after the gzip data") != NULL);
    tl_buf_free(&out);
    tl_buf_free(&text);
    tl_buf_free(&gz);
}

static void write_file(const char *path, const tl_buf *b)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f == NULL) return;
    fwrite(b->data, 1, b->len, f);
    fclose(f);
}

/* Files take the same road, through reads larger than the buffer; errors
 * name the path, and the position counts compressed bytes. */
static void test_files(void)
{
    tl_buf text = {0}, gz = {0};
    make_text(&text, 60000); /* compressed, still more than one buffer of the input */
    gzip_member((const char *)text.data, text.len, &gz);
    char path[600];
    snprintf(path, sizeof path, "%s/whole.csv.gz", unit_tmpdir());
    write_file(path, &gz);
    tl_text_input *in;
    tl_error err = {0};
    tl_status st;
    tl_buf out = {0};
    CHECK_OK(tl_text_input_open_file(path, &in, &err), &err);
    read_all(in, 4096, &out, &st, &err);
    CHECK_OK(st, &err);
    CHECK(out.len == text.len && memcmp(out.data, text.data, text.len) == 0);
    CHECK_INT(tl_text_input_position(in), gz.len);
    CHECK_INT(tl_text_input_size(in), gz.len); /* the source's size, compressed */
    tl_text_input_close(in);
    out.len = 0;

    gz.len -= 3;
    snprintf(path, sizeof path, "%s/cut.csv.gz", unit_tmpdir());
    write_file(path, &gz);
    CHECK_OK(tl_text_input_open_file(path, &in, &err), &err);
    read_all(in, 4096, &out, &st, &err);
    CHECK_INT(st, TL_ERR_INVALID);
    CHECK(strstr(err.message, path) == err.message && strstr(err.message, "truncated") != NULL);
    CHECK(strstr(err.message, "<fd:") == NULL);
    tl_text_input_close(in);

    snprintf(path, sizeof path, "%s/plain.csv", unit_tmpdir());
    write_file(path, &text);
    out.len = 0;
    CHECK_OK(tl_text_input_open_file(path, &in, &err), &err);
    CHECK_INT(tl_text_input_size(in), text.len);
    read_all(in, 1000, &out, &st, &err);
    CHECK_OK(st, &err);
    CHECK(out.len == text.len && memcmp(out.data, text.data, text.len) == 0);
    tl_text_input_close(in);
    tl_buf_free(&out);
    tl_buf_free(&text);
    tl_buf_free(&gz);
}

UNIT_TESTS(UNIT(test_plain_and_gzip_members_read_whole), UNIT(test_every_cut_is_an_error),
           UNIT(test_cut_on_a_flush_point), UNIT(test_crc_and_length_mismatch),
           UNIT(test_bytes_after_the_stream), UNIT(test_files), UNIT(test_borrow_all))
