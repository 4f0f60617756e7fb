/* A stream that counts how often it is released: for the tests that check a
 * call consumes its input on every path. Header-only. */
#ifndef TEST_COUNTED_STREAM_H
#define TEST_COUNTED_STREAM_H

#include <stdlib.h>

#include "timelake.h"

typedef struct counted_stream {
    struct ArrowArrayStream inner;
    int *released;
} counted_stream;

static int counted_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    counted_stream *c = s->private_data;
    return c->inner.get_schema(&c->inner, out);
}

static int counted_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    counted_stream *c = s->private_data;
    return c->inner.get_next(&c->inner, out);
}

static const char *counted_error(struct ArrowArrayStream *s)
{
    counted_stream *c = s->private_data;
    return c->inner.get_last_error(&c->inner);
}

static void counted_release(struct ArrowArrayStream *s)
{
    counted_stream *c = s->private_data;
    c->inner.release(&c->inner);
    if (c->released) (*c->released)++;
    free(c);
    s->release = NULL;
}

/* Wraps *inner (moved) into *out, which adds one to *released when released. */
static inline void counted_stream_make(struct ArrowArrayStream *inner, int *released,
                                       struct ArrowArrayStream *out)
{
    counted_stream *c = calloc(1, sizeof *c);
    c->inner = *inner;
    inner->release = NULL;
    c->released = released;
    *out =
        (struct ArrowArrayStream){counted_schema, counted_next, counted_error, counted_release, c};
}

#endif
