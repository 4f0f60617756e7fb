/* The unread text of an input in one growing buffer, refilled a chunk at a
 * time: what the line and CSV scanners parse records from. A record must
 * fit in the window, so memory is bounded by the longest record (the
 * caller's limit), not by the file. */
#ifndef TL_INPUT_TEXT_WINDOW_H
#define TL_INPUT_TEXT_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/input/text_input.h"

typedef struct tl_text_window {
    tl_text_input *in; /* owned: closed by tl_text_window_free */
    uint8_t *buf;
    size_t len, cap, pos; /* buf[pos, len) is unread */
    bool eof;             /* the input has nothing after buf[len] */
    bool started;
    bool borrowed; /* buf is the input's own bytes in memory, whole: never written */
} tl_text_window;

/* Moves the unread text to the front and reads more after it, no further
 * than `max` + 1 bytes from the front; *too_long (nothing read) when the
 * unread text is longer than `max` already, so that a record longer than
 * the limit fails at any size. A UTF-8 byte order mark at the start of the
 * input is skipped. Plain bytes in memory of at most `max` bytes are the
 * window themselves, whole: no copy. */
tl_status tl_text_window_fill(tl_text_window *w, size_t max, bool *too_long, tl_error *err);

void tl_text_window_free(tl_text_window *w);

#endif
