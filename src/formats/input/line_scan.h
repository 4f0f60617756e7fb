/* Lines of a text input, one at a time (the NDJSON readers' records): read in
 * chunks, so memory is bounded by the longest line (64 MiB at most), not by
 * the file. A UTF-8 byte order mark at the start is skipped. */
#ifndef TL_INPUT_LINE_SCAN_H
#define TL_INPUT_LINE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/input/text_window.h"

typedef struct tl_line_scan {
    tl_text_window w; /* owns the input */
    const char *name; /* the input's name, for messages */
    int64_t line;     /* number of the line last returned (1-based) */
} tl_line_scan;

/* Starts reading `in` (taken over: closed by tl_line_scan_free). */
void tl_line_scan_init(tl_line_scan *s, tl_text_input *in);
void tl_line_scan_free(tl_line_scan *s);

/* The next line, without its '\n' (a '\r' before it stays), valid until the
 * next call; *eof at the end of the input. A line over 64 MiB is
 * TL_ERR_INVALID naming the input and the line. */
tl_status tl_line_scan_next(tl_line_scan *s, const char **line, size_t *len, bool *eof,
                            tl_error *err);

#endif
