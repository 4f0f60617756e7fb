/* An ArrowArrayStream over a pull function: the readers produce one batch per
 * call and the stream hands it to the consumer, so a file is never held whole. */
#ifndef TL_INPUT_READER_STREAM_H
#define TL_INPUT_READER_STREAM_H

#include <stdbool.h>

#include "core/error.h"

typedef struct tl_batch_reader {
    void *ctx;
    /* Fills *out with the next batch (an owned struct array), or sets *done. */
    tl_status (*next)(void *ctx, struct ArrowArray *out, bool *done, tl_error *err);
    void (*free)(void *ctx);
} tl_batch_reader;

/* Makes *out over `reader`. Takes ownership of *schema (moved) and of the
 * reader's ctx (freed when the stream is released), on failure too. */
tl_status tl_reader_stream_make(struct ArrowSchema *schema, tl_batch_reader reader,
                                struct ArrowArrayStream *out, tl_error *err);

#endif
