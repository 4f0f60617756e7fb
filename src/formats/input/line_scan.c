#include "formats/input/line_scan.h"

#include <stdlib.h>
#include <string.h>

#define LINE_CHUNK (1u << 20)
#define LINE_MAX_LEN ((size_t)64 << 20)

void tl_line_scan_init(tl_line_scan *s, tl_text_input *in)
{
    memset(s, 0, sizeof *s);
    s->in = in;
    s->name = tl_text_input_name(in);
}

void tl_line_scan_free(tl_line_scan *s)
{
    tl_text_input_close(s->in);
    free(s->buf);
    memset(s, 0, sizeof *s);
}

/* Moves the unread tail to the front and reads another chunk after it. */
static tl_status fill(tl_line_scan *s, tl_error *err)
{
    if (s->pos > 0) {
        memmove(s->buf, s->buf + s->pos, s->len - s->pos);
        s->len -= s->pos;
        s->pos = 0;
    }
    if (s->len > LINE_MAX_LEN)
        return tl_error_set(err, TL_ERR_INVALID, "%s: line %lld: longer than 64 MiB", s->name,
                            (long long)s->line + 1);
    if (s->cap - s->len < LINE_CHUNK) {
        size_t cap = s->cap ? s->cap * 2 : 2 * LINE_CHUNK;
        uint8_t *nb = realloc(s->buf, cap);
        if (nb == NULL) return tl_error_nomem(err);
        s->buf = nb;
        s->cap = cap;
    }
    /* The buffer starts at the current line: reading no further than one
     * byte past the limit makes a longer line fail here, at any size. */
    do { /* the first time, read at least 3 bytes to see a byte order mark */
        size_t n, room = s->cap - s->len, limit = LINE_MAX_LEN + 1 - s->len;
        TL_TRY(tl_text_input_read(s->in, s->buf + s->len, room < limit ? room : limit, &n, err));
        s->len += n;
        if (n == 0) s->eof = true;
    } while (!s->started && s->len < 3 && !s->eof);
    if (!s->started && s->len >= 3 && memcmp(s->buf, "\xEF\xBB\xBF", 3) == 0) s->pos = 3;
    s->started = true;
    return TL_OK;
}

tl_status tl_line_scan_next(tl_line_scan *s, const char **line, size_t *len, bool *eof,
                            tl_error *err)
{
    *eof = false;
    for (;;) {
        const uint8_t *p = s->buf ? s->buf + s->pos : NULL;
        size_t avail = s->len - s->pos;
        const uint8_t *nl = avail ? memchr(p, '\n', avail) : NULL;
        if (nl == NULL && !s->eof) {
            TL_TRY(fill(s, err));
            continue;
        }
        if (nl == NULL && avail == 0) return *eof = true, TL_OK;
        size_t n = nl ? (size_t)(nl - p) : avail;
        *line = (const char *)p;
        *len = n;
        s->pos += n + (nl != NULL);
        s->line++;
        return TL_OK;
    }
}
