/* Shared by the fuzz targets: drain a stream, checking every batch is well formed. */
#ifndef TL_FUZZ_COMMON_H
#define TL_FUZZ_COMMON_H

#include <stdlib.h>

#include "arrow/array.h"

/* Returns the rows read, or -1 when the stream failed before its end. */
static inline int64_t fuzz_drain(struct ArrowArrayStream *s)
{
    struct ArrowSchema schema;
    int64_t rows = 0;
    if (s->get_schema(s, &schema) != 0) abort(); /* a stream that opened has a schema */
    for (;;) {
        struct ArrowArray a;
        if (s->get_next(s, &a) != 0) {
            rows = -1;
            break;
        }
        if (a.release == NULL) break;
        rows += a.length;
        for (int64_t i = 0; i < a.n_children; i++) {
            tl_array_view v;
            if (tl_array_view_init(&v, schema.children[i], a.children[i], NULL) != TL_OK) abort();
            tl_array_view_free(&v);
        }
        a.release(&a);
    }
    schema.release(&schema);
    s->release(s);
    return rows;
}

#endif
