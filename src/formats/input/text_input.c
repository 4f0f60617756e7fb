#include "formats/input/text_input.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define RAW_CHUNK (1u << 18) /* fewer, larger reads: the file is read once, front to back */

typedef enum { MODE_UNKNOWN, MODE_PLAIN, MODE_GZIP } input_mode;

/* The source's bytes sit in raw[rpos, rlen): for a file a buffer refilled by
 * read(), for memory the caller's bytes themselves (rlen grows by at most
 * read_limit per fill, so tests see gzip headers and trailers split). */
struct tl_text_input {
    char *name;
    int fd;              /* -1 for memory input */
    const uint8_t *raw;  /* file: == buf */
    uint8_t *buf;        /* file input's buffer, RAW_CHUNK bytes */
    size_t rpos, rlen;   /* unread source bytes */
    size_t len;          /* memory: all of the caller's bytes */
    uint64_t size;       /* the source's size when known, else 0 */
    uint64_t source_off; /* source bytes before raw[rlen] */
    bool eof;            /* the source has no bytes after raw[rlen] */
    size_t read_limit;   /* 0: none */
    input_mode mode;
    bool done; /* gzip: the last member ended */
    bool z_live;
    z_stream z;
};

void tl_text_input_set_read_limit(tl_text_input *in, size_t n)
{
    in->read_limit = n;
}

static tl_status input_new(const char *name, int fd, tl_text_input **out, tl_error *err)
{
    tl_text_input *in = calloc(1, sizeof *in);
    if (in == NULL || (in->name = strdup(name)) == NULL) {
        free(in);
        return tl_error_nomem(err);
    }
    in->fd = fd;
    *out = in;
    return TL_OK;
}

tl_status tl_text_input_open_file(const char *path, tl_text_input **out, tl_error *err)
{
    *out = NULL;
    bool is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return tl_error_set(err, errno == ENOENT ? TL_ERR_NOT_FOUND : TL_ERR_INVALID,
                            "cannot open %s: %s", path, strerror(errno));
    tl_text_input *in = NULL;
    if (input_new(is_stdin ? "stdin" : path, fd, &in, err) != TL_OK) {
        close(fd);
        return TL_ERR_NOMEM;
    }
    if ((in->buf = malloc(RAW_CHUNK)) == NULL) {
        tl_text_input_close(in);
        return tl_error_nomem(err);
    }
    in->raw = in->buf;
    struct stat st;
    if (!is_stdin && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) in->size = (uint64_t)st.st_size;
    *out = in;
    return TL_OK;
}

tl_status tl_text_input_open_memory(const uint8_t *data, size_t len, const char *name,
                                    tl_text_input **out, tl_error *err)
{
    *out = NULL;
    tl_text_input *in = NULL;
    TL_TRY(input_new(name ? name : "input", -1, &in, err));
    in->raw = data;
    in->len = len;
    in->size = len;
    in->eof = len == 0;
    *out = in;
    return TL_OK;
}

/* Reads `cap` bytes at most from the file into dst; *n 0 at its end. */
static tl_status read_fd(tl_text_input *in, uint8_t *dst, size_t cap, size_t *n, tl_error *err)
{
    ssize_t got;
    do got = read(in->fd, dst, cap);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        return tl_error_set(err, TL_ERR_INVALID, "%s: cannot read: %s", in->name, strerror(errno));
    *n = (size_t)got;
    in->source_off += *n;
    if (got == 0) in->eof = true;
    return TL_OK;
}

/* Makes more source bytes available after raw[rlen], keeping raw[rpos, rlen). */
static tl_status fill(tl_text_input *in, tl_error *err)
{
    if (in->fd < 0) {
        size_t k = in->len - in->rlen;
        if (in->read_limit && k > in->read_limit) k = in->read_limit;
        in->rlen += k;
        in->source_off = in->rlen;
        in->eof = in->rlen == in->len;
        return TL_OK;
    }
    memmove(in->buf, in->buf + in->rpos, in->rlen - in->rpos);
    in->rlen -= in->rpos;
    in->rpos = 0;
    size_t n = 0;
    TL_TRY(read_fd(in, in->buf + in->rlen, RAW_CHUNK - in->rlen, &n, err));
    in->rlen += n;
    return TL_OK;
}

/* Source bytes consumed so far (what messages and progress reports count). */
static uint64_t consumed(const tl_text_input *in)
{
    return in->source_off - (in->rlen - in->rpos);
}

/* Until at least `k` unread source bytes are buffered, or the source ends. */
static tl_status want(tl_text_input *in, size_t k, tl_error *err)
{
    while (in->rlen - in->rpos < k && !in->eof) TL_TRY(fill(in, err));
    return TL_OK;
}

static bool gzip_magic_at(const tl_text_input *in)
{
    return in->rlen - in->rpos >= 2 && in->raw[in->rpos] == 0x1f && in->raw[in->rpos + 1] == 0x8b;
}

/* Gzip when the bytes start with its magic number, whatever the name says. */
static tl_status choose_mode(tl_text_input *in, tl_error *err)
{
    TL_TRY(want(in, 2, err));
    in->mode = gzip_magic_at(in) ? MODE_GZIP : MODE_PLAIN;
    if (in->mode == MODE_GZIP) {
        if (inflateInit2(&in->z, 15 + 16) != Z_OK) return tl_error_nomem(err);
        in->z_live = true;
    }
    return TL_OK;
}

static tl_status read_plain(tl_text_input *in, uint8_t *dst, size_t cap, size_t *n, tl_error *err)
{
    if (in->rpos == in->rlen && !in->eof) {
        if (in->fd >= 0 && !in->read_limit) { /* nothing buffered: no copy */
            in->rpos = in->rlen = 0;
            return read_fd(in, dst, cap, n, err);
        }
        TL_TRY(fill(in, err));
    }
    size_t k = in->rlen - in->rpos < cap ? in->rlen - in->rpos : cap;
    if (k) memcpy(dst, in->raw + in->rpos, k);
    in->rpos += k;
    *n = k;
    return TL_OK;
}

/* After a gzip member's trailer: another member, the end (zero padding
 * allowed, as gzip allows it), or an error for anything else. */
static tl_status next_member(tl_text_input *in, tl_error *err)
{
    bool padding = false;
    for (;;) {
        TL_TRY(want(in, 2, err));
        if (in->rpos == in->rlen) {
            in->done = true;
            return TL_OK;
        }
        if (!padding && gzip_magic_at(in)) {
            inflateReset(&in->z);
            return TL_OK;
        }
        if (in->raw[in->rpos] != 0)
            return tl_error_set(err, TL_ERR_INVALID,
                                "%s: unexpected bytes after the gzip data, at byte %llu (the "
                                "file is not a whole gzip stream: was it appended to or damaged?)",
                                in->name, (unsigned long long)consumed(in));
        padding = true;
        while (in->rpos < in->rlen && in->raw[in->rpos] == 0) in->rpos++;
    }
}

static tl_status gzip_failed(tl_text_input *in, int rc, tl_error *err)
{
    if (rc == Z_MEM_ERROR) return tl_error_nomem(err);
    const char *why = in->z.msg ? in->z.msg : "corrupt data";
    const char *what =
        strcmp(why, "incorrect data check") == 0     ? ": its CRC-32 does not match the data"
        : strcmp(why, "incorrect length check") == 0 ? ": its length does not match the data"
                                                     : "";
    return tl_error_set(err, TL_ERR_INVALID,
                        "%s: corrupt gzip data at byte %llu (%s%s): the file is damaged", in->name,
                        (unsigned long long)consumed(in), why, what);
}

/* Inflates into dst until it produces bytes, the last member ends, or the
 * data is bad. A stream that ends before its trailer is an error: the
 * trailer's CRC and length are what tell a whole file from a cut one. */
static tl_status read_gzip(tl_text_input *in, uint8_t *dst, size_t cap, size_t *n, tl_error *err)
{
    if (cap > UINT_MAX) cap = UINT_MAX;
    while (*n == 0 && !in->done) {
        if (in->rpos == in->rlen) TL_TRY(fill(in, err));
        in->z.next_in = (Bytef *)(in->raw + in->rpos);
        in->z.avail_in = (uInt)(in->rlen - in->rpos);
        in->z.next_out = dst;
        in->z.avail_out = (uInt)cap;
        int rc = inflate(&in->z, Z_NO_FLUSH);
        in->rpos = in->rlen - in->z.avail_in;
        *n = cap - in->z.avail_out;
        if (rc == Z_STREAM_END)
            TL_TRY(next_member(in, err));
        else if (rc != Z_OK && rc != Z_BUF_ERROR)
            return gzip_failed(in, rc, err);
        else if (*n == 0 && in->rpos == in->rlen && in->eof)
            return tl_error_set(err, TL_ERR_INVALID,
                                "%s: truncated gzip file: the data ends at byte %llu, before "
                                "gzip's trailer (an incomplete upload or copy?): send the "
                                "whole file",
                                in->name, (unsigned long long)consumed(in));
    }
    return TL_OK;
}

tl_status tl_text_input_read(tl_text_input *in, uint8_t *dst, size_t cap, size_t *n, tl_error *err)
{
    *n = 0;
    if (cap == 0) return TL_OK;
    if (in->read_limit && cap > in->read_limit) cap = in->read_limit;
    if (in->mode == MODE_UNKNOWN) TL_TRY(choose_mode(in, err));
    if (in->mode == MODE_PLAIN) return read_plain(in, dst, cap, n, err);
    return read_gzip(in, dst, cap, n, err);
}

bool tl_text_input_borrow_all(tl_text_input *in, const uint8_t **data, size_t *len)
{
    if (in->fd >= 0 || in->read_limit || in->mode != MODE_UNKNOWN || in->rlen != 0) return false;
    if (in->len >= 2 && in->raw[0] == 0x1f && in->raw[1] == 0x8b) return false; /* gzip */
    in->mode = MODE_PLAIN;
    in->rpos = in->rlen = in->len;
    in->source_off = in->len;
    in->eof = true;
    *data = in->raw;
    *len = in->len;
    return true;
}

uint64_t tl_text_input_size(const tl_text_input *in)
{
    return in->size;
}

const char *tl_text_input_name(const tl_text_input *in)
{
    return in->name;
}

uint64_t tl_text_input_position(const tl_text_input *in)
{
    return consumed(in);
}

void tl_text_input_close(tl_text_input *in)
{
    if (in == NULL) return;
    if (in->z_live) inflateEnd(&in->z);
    if (in->fd >= 0) close(in->fd);
    free(in->buf);
    free(in->name);
    free(in);
}
