#include "formats/input/line_scan.h"

#include <stdlib.h>
#include <string.h>

#define LINE_MAX_LEN ((size_t)64 << 20)

void tl_line_scan_init(tl_line_scan *s, tl_text_input *in)
{
    memset(s, 0, sizeof *s);
    s->w.in = in;
    s->name = tl_text_input_name(in);
}

void tl_line_scan_free(tl_line_scan *s)
{
    tl_text_window_free(&s->w);
    memset(s, 0, sizeof *s);
}

static tl_status fill(tl_line_scan *s, tl_error *err)
{
    bool too_long;
    TL_TRY(tl_text_window_fill(&s->w, LINE_MAX_LEN, &too_long, err));
    if (too_long)
        return tl_error_set(err, TL_ERR_INVALID, "%s: line %lld: longer than 64 MiB", s->name,
                            (long long)s->line + 1);
    return TL_OK;
}

tl_status tl_line_scan_next(tl_line_scan *s, const char **line, size_t *len, bool *eof,
                            tl_error *err)
{
    *eof = false;
    for (;;) {
        const uint8_t *p = s->w.buf ? s->w.buf + s->w.pos : NULL;
        size_t avail = s->w.len - s->w.pos;
        const uint8_t *nl = avail ? memchr(p, '\n', avail) : NULL;
        if (nl == NULL && !s->w.eof) {
            TL_TRY(fill(s, err));
            continue;
        }
        if (nl == NULL && avail == 0) return *eof = true, TL_OK;
        size_t n = nl ? (size_t)(nl - p) : avail;
        *line = (const char *)p;
        *len = n;
        s->w.pos += n + (nl != NULL);
        s->line++;
        return TL_OK;
    }
}
