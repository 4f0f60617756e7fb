/* A stream of one record batch, for producers that export __arrow_c_array__,
 * and the deep schema copy its get_schema needs (it may be called twice). */
#include "tlpy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of Arrow's binary metadata encoding: int32 count, then int32-prefixed
 * keys and values. */
static size_t metadata_size(const char *md)
{
    if (md == NULL) return 0;
    int32_t n, len;
    size_t at = sizeof n;
    memcpy(&n, md, sizeof n);
    for (int32_t i = 0; i < 2 * n; i++) {
        memcpy(&len, md + at, sizeof len);
        at += sizeof len + (size_t)len;
    }
    return at;
}

static char *copy_bytes(const char *src, size_t n, int *failed)
{
    if (src == NULL) return NULL;
    char *out = malloc(n);
    if (out == NULL)
        *failed = 1;
    else
        memcpy(out, src, n);
    return out;
}

static void release_copy(struct ArrowSchema *s)
{
    for (int64_t i = 0; i < s->n_children; i++) {
        if (s->children[i] && s->children[i]->release) s->children[i]->release(s->children[i]);
        free(s->children[i]);
    }
    free(s->children);
    if (s->dictionary && s->dictionary->release) s->dictionary->release(s->dictionary);
    free(s->dictionary);
    free((char *)s->format);
    free((char *)s->name);
    free((char *)s->metadata);
    s->release = NULL;
}

static int copy_children(const struct ArrowSchema *src, struct ArrowSchema *out)
{
    if (src->n_children > 0) {
        out->children = calloc((size_t)src->n_children, sizeof *out->children);
        if (out->children == NULL) return -1;
        out->n_children = src->n_children;
    }
    for (int64_t i = 0; i < src->n_children; i++) {
        out->children[i] = calloc(1, sizeof **out->children);
        if (out->children[i] == NULL || tlpy_schema_copy(src->children[i], out->children[i]) < 0)
            return -1;
    }
    if (src->dictionary) {
        out->dictionary = calloc(1, sizeof *out->dictionary);
        if (out->dictionary == NULL || tlpy_schema_copy(src->dictionary, out->dictionary) < 0)
            return -1;
    }
    return 0;
}

int tlpy_schema_copy(const struct ArrowSchema *src, struct ArrowSchema *out)
{
    int failed = 0;
    memset(out, 0, sizeof *out);
    out->release = release_copy;
    out->flags = src->flags;
    out->format = copy_bytes(src->format, strlen(src->format) + 1, &failed);
    out->name = copy_bytes(src->name, src->name ? strlen(src->name) + 1 : 0, &failed);
    out->metadata = copy_bytes(src->metadata, metadata_size(src->metadata), &failed);
    if (failed || copy_children(src, out) < 0) {
        release_copy(out);
        return -1;
    }
    return 0;
}

typedef struct {
    struct ArrowSchema schema;
    struct ArrowArray array; /* release == NULL once handed out */
} one_batch;

static int one_get_schema(struct ArrowArrayStream *stream, struct ArrowSchema *out)
{
    one_batch *p = stream->private_data;
    return tlpy_schema_copy(&p->schema, out) < 0 ? ENOMEM : 0;
}

static int one_get_next(struct ArrowArrayStream *stream, struct ArrowArray *out)
{
    one_batch *p = stream->private_data;
    *out = p->array; /* the end of the stream is an array with release == NULL */
    p->array.release = NULL;
    return 0;
}

static const char *one_last_error(struct ArrowArrayStream *stream)
{
    (void)stream;
    return "out of memory";
}

static void one_release(struct ArrowArrayStream *stream)
{
    one_batch *p = stream->private_data;
    if (p->schema.release) p->schema.release(&p->schema);
    if (p->array.release) p->array.release(&p->array);
    free(p);
    stream->release = NULL;
}

int tlpy_stream_of_array(struct ArrowSchema *schema, struct ArrowArray *array,
                         struct ArrowArrayStream *out)
{
    one_batch *p = malloc(sizeof *p);
    if (p == NULL) return -1;
    p->schema = *schema;
    p->array = *array;
    out->get_schema = one_get_schema;
    out->get_next = one_get_next;
    out->get_last_error = one_last_error;
    out->release = one_release;
    out->private_data = p;
    return 0;
}
