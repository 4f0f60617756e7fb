#include "core/grow.h"
#include "formats/input/text_window.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK (1u << 20)

/* Takes plain bytes in memory of at most `max` bytes as the window. */
static bool borrow(tl_text_window *w, size_t max)
{
    const uint8_t *all;
    size_t n;
    if (tl_text_input_size(w->in) > max || !tl_text_input_borrow_all(w->in, &all, &n)) return false;
    w->buf = (uint8_t *)(uintptr_t)all; /* read only: a borrowed window is never written */
    w->len = w->cap = n;
    w->eof = w->borrowed = w->started = true;
    if (n >= 3 && memcmp(all, "\xEF\xBB\xBF", 3) == 0) w->pos = 3;
    return true;
}

tl_status tl_text_window_fill(tl_text_window *w, size_t max, bool *too_long, tl_error *err)
{
    if (!w->started && borrow(w, max)) return *too_long = false, TL_OK;
    if (w->borrowed) return *too_long = w->len - w->pos > max, TL_OK; /* all there, at its end */
    if (w->pos > 0) {
        memmove(w->buf, w->buf + w->pos, w->len - w->pos);
        w->len -= w->pos;
        w->pos = 0;
    }
    *too_long = w->len > max;
    if (*too_long) return TL_OK;
    if (TL_GROW(w->buf, w->cap, w->len + CHUNK, 2 * CHUNK) != 0) return tl_error_nomem(err);
    do { /* the first time, read at least 3 bytes to see a byte order mark */
        size_t n, room = w->cap - w->len, limit = max + 1 - w->len;
        TL_TRY(tl_text_input_read(w->in, w->buf + w->len, room < limit ? room : limit, &n, err));
        w->len += n;
        if (n == 0) w->eof = true;
    } while (!w->started && w->len < 3 && !w->eof);
    if (!w->started && w->len >= 3 && memcmp(w->buf, "\xEF\xBB\xBF", 3) == 0) w->pos = 3;
    w->started = true;
    return TL_OK;
}

void tl_text_window_free(tl_text_window *w)
{
    tl_text_input_close(w->in);
    if (!w->borrowed) free(w->buf);
    memset(w, 0, sizeof *w);
}
