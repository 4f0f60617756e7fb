#include "formats/input/text_input.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

struct tl_text_input {
    char *name;
    gzFile gz; /* NULL for memory input */
    const uint8_t *data;
    size_t len, pos;
    size_t read_limit; /* 0: none */
};

void tl_text_input_set_read_limit(tl_text_input *in, size_t n)
{
    in->read_limit = n;
}

tl_status tl_text_input_open_file(const char *path, tl_text_input **out, tl_error *err)
{
    *out = NULL;
    bool is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return tl_error_set(err, errno == ENOENT ? TL_ERR_NOT_FOUND : TL_ERR_INVALID,
                            "cannot open %s: %s", path, strerror(errno));
    tl_text_input *in = calloc(1, sizeof *in);
    if (in == NULL || (in->name = strdup(is_stdin ? "stdin" : path)) == NULL) {
        free(in);
        close(fd);
        return tl_error_nomem(err);
    }
    in->gz = gzdopen(fd, "rb");
    if (in->gz == NULL) {
        close(fd);
        tl_text_input_close(in);
        return tl_error_nomem(err);
    }
    gzbuffer(in->gz, 1u << 18); /* fewer, larger reads: the file is read once, front to back */
    *out = in;
    return TL_OK;
}

tl_status tl_text_input_open_memory(const uint8_t *data, size_t len, const char *name,
                                    tl_text_input **out, tl_error *err)
{
    *out = NULL;
    tl_text_input *in = calloc(1, sizeof *in);
    if (in == NULL || (in->name = strdup(name ? name : "input")) == NULL) {
        free(in);
        return tl_error_nomem(err);
    }
    in->data = data;
    in->len = len;
    *out = in;
    return TL_OK;
}

tl_status tl_text_input_read(tl_text_input *in, uint8_t *dst, size_t cap, size_t *n, tl_error *err)
{
    *n = 0;
    if (in->gz == NULL) {
        if (in->read_limit && cap > in->read_limit) cap = in->read_limit;
        size_t k = in->len - in->pos < cap ? in->len - in->pos : cap;
        if (k) memcpy(dst, in->data + in->pos, k);
        in->pos += k;
        *n = k;
        return TL_OK;
    }
    unsigned want = cap > (size_t)INT_MAX ? (unsigned)INT_MAX : (unsigned)cap;
    int got = gzread(in->gz, dst, want);
    if (got < 0) {
        int code = 0;
        const char *msg = gzerror(in->gz, &code);
        return tl_error_set(err, TL_ERR_INVALID, "%s: %s", in->name,
                            code == Z_ERRNO ? strerror(errno) : msg);
    }
    *n = (size_t)got;
    return TL_OK;
}

const char *tl_text_input_name(const tl_text_input *in)
{
    return in->name;
}

uint64_t tl_text_input_position(const tl_text_input *in)
{
    if (in->gz == NULL) return in->pos;
    z_off_t off = gzoffset(in->gz);
    return off < 0 ? 0 : (uint64_t)off;
}

void tl_text_input_close(tl_text_input *in)
{
    if (in == NULL) return;
    if (in->gz) gzclose(in->gz);
    free(in->name);
    free(in);
}
