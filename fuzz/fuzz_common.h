/* Shared by the fuzz targets: drain a stream, checking every batch is well formed. */
#ifndef TL_FUZZ_COMMON_H
#define TL_FUZZ_COMMON_H

#include <stdlib.h>

#include "arrow/array.h"

static inline void fuzz_drain(struct ArrowArrayStream *s)
{
    struct ArrowSchema schema;
    if (s->get_schema(s, &schema) != 0) abort(); /* a stream that opened has a schema */
    for (;;) {
        struct ArrowArray a;
        if (s->get_next(s, &a) != 0 || a.release == NULL) break;
        for (int64_t i = 0; i < a.n_children; i++) {
            tl_array_view v;
            if (tl_array_view_init(&v, schema.children[i], a.children[i], NULL) != TL_OK) abort();
            tl_array_view_free(&v);
        }
        a.release(&a);
    }
    schema.release(&schema);
    s->release(s);
}

#endif
