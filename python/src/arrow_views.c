/* Streams with string_view / binary_view columns ("vu" / "vz", as polars
 * exports strings), rewritten to large_string / large_binary, which the
 * library reads. Only those columns are converted (copied); every other column
 * passes through untouched, sharing the producer's buffers. */
#include "tlpy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int is_view(const char *format)
{
    return !strcmp(format, "vu") || !strcmp(format, "vz");
}

/* ---- the producer's batch, shared by the columns that pass through ---- */

typedef struct {
    struct ArrowArray batch;
    int refs;
} shared_batch;

static void shared_unref(shared_batch *s)
{
    if (--s->refs > 0) return;
    if (s->batch.release) s->batch.release(&s->batch);
    free(s);
}

static void shell_release(struct ArrowArray *a)
{
    shared_unref(a->private_data);
    a->release = NULL;
}

/* A column of the shared batch, as its own array that holds a reference. */
static void share_column(shared_batch *owner, const struct ArrowArray *col, struct ArrowArray *out)
{
    *out = *col;
    out->release = shell_release;
    out->private_data = owner;
    owner->refs++;
}

/* ---- one view column to a large string/binary column ---- */

typedef struct {
    const void *buffers[3];
} converted;

static void converted_release(struct ArrowArray *a)
{
    converted *c = a->private_data;
    for (int i = 0; i < 3; i++) free((void *)c->buffers[i]);
    free(c);
    a->release = NULL;
}

static int bit(const uint8_t *bits, int64_t i)
{
    return (bits[i >> 3] >> (i & 7)) & 1;
}

/* The bytes of view i of src: inline up to 12 bytes, else in a data buffer. */
static const uint8_t *view_bytes(const struct ArrowArray *src, int64_t i, int32_t *len)
{
    const uint8_t *v = (const uint8_t *)src->buffers[1] + 16 * i;
    memcpy(len, v, 4);
    if (*len <= 12) return v + 4;
    int32_t buf, off;
    memcpy(&buf, v + 8, 4);
    memcpy(&off, v + 12, 4);
    return (const uint8_t *)src->buffers[2 + buf] + off;
}

static int convert_view(const struct ArrowArray *src, struct ArrowArray *out)
{
    const int64_t n = src->length, base = src->offset;
    const uint8_t *valid = src->buffers[0];
    int64_t total = 0;
    int32_t len;
    for (int64_t j = 0; j < n; j++)
        if (!valid || bit(valid, base + j)) total += (view_bytes(src, base + j, &len), len);
    converted *c = calloc(1, sizeof *c);
    int64_t *offsets = malloc((size_t)(n + 1) * sizeof *offsets);
    uint8_t *data = malloc((size_t)total + 1), *bits = NULL;
    if (valid) bits = calloc((size_t)(n + 7) / 8 + 1, 1);
    if (!c || !offsets || !data || (valid && !bits)) {
        free(c), free(offsets), free(data), free(bits);
        return -1;
    }
    offsets[0] = 0;
    for (int64_t j = 0; j < n; j++) {
        offsets[j + 1] = offsets[j];
        if (valid && !bit(valid, base + j)) continue;
        if (bits) bits[j >> 3] |= (uint8_t)(1u << (j & 7));
        const uint8_t *p = view_bytes(src, base + j, &len);
        memcpy(data + offsets[j], p, (size_t)len);
        offsets[j + 1] += len;
    }
    c->buffers[0] = bits, c->buffers[1] = offsets, c->buffers[2] = data;
    memset(out, 0, sizeof *out);
    out->length = n;
    out->null_count = src->null_count;
    out->n_buffers = 3;
    out->buffers = c->buffers;
    out->release = converted_release;
    out->private_data = c;
    return 0;
}

/* ---- the rewritten batch ---- */

typedef struct {
    shared_batch *owner;
    struct ArrowArray **children;
    int64_t n_children;
} rewritten;

static void rewritten_release(struct ArrowArray *a)
{
    rewritten *r = a->private_data;
    for (int64_t i = 0; i < r->n_children; i++) {
        if (r->children[i] && r->children[i]->release) r->children[i]->release(r->children[i]);
        free(r->children[i]);
    }
    free(r->children);
    shared_unref(r->owner);
    free(r);
    a->release = NULL;
}

/* Builds *out from *batch (moved), converting the columns flagged in views. */
static int rewrite_batch(struct ArrowArray *batch, const char *views, struct ArrowArray *out)
{
    shared_batch *owner = calloc(1, sizeof *owner);
    rewritten *r = calloc(1, sizeof *r);
    if (owner == NULL || r == NULL) {
        batch->release(batch);
        free(owner), free(r);
        return ENOMEM;
    }
    owner->batch = *batch, owner->refs = 1;
    batch->release = NULL;
    r->owner = owner;
    *out = owner->batch; /* length, offset and the struct's own buffers */
    out->release = rewritten_release;
    out->private_data = r;
    r->children = calloc((size_t)owner->batch.n_children + 1, sizeof *r->children);
    if (r->children == NULL) goto fail;
    for (int64_t i = 0; i < owner->batch.n_children; i++) {
        struct ArrowArray *child = malloc(sizeof *child);
        if (child == NULL) goto fail;
        child->release = NULL;
        r->children[r->n_children++] = child;
        if (!views[i])
            share_column(owner, owner->batch.children[i], child);
        else if (convert_view(owner->batch.children[i], child) < 0)
            goto fail;
    }
    out->children = r->children;
    return 0;
fail:
    rewritten_release(out);
    return ENOMEM;
}

/* ---- the wrapping stream ---- */

typedef struct {
    struct ArrowArrayStream inner;
    struct ArrowSchema schema; /* the rewritten schema */
    char *views;               /* per top-level column: 1 to convert */
    const char *error;
} view_stream;

static int vs_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    view_stream *p = s->private_data;
    return tlpy_schema_copy(&p->schema, out) < 0 ? ENOMEM : 0;
}

static int vs_get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    view_stream *p = s->private_data;
    struct ArrowArray batch;
    int rc = p->inner.get_next(&p->inner, &batch);
    if (rc != 0) {
        p->error = p->inner.get_last_error(&p->inner);
        return rc;
    }
    if (batch.release == NULL) {
        *out = batch;
        return 0;
    }
    rc = rewrite_batch(&batch, p->views, out);
    if (rc != 0) p->error = "out of memory converting string views";
    return rc;
}

static const char *vs_last_error(struct ArrowArrayStream *s)
{
    return ((view_stream *)s->private_data)->error;
}

static void vs_release(struct ArrowArrayStream *s)
{
    view_stream *p = s->private_data;
    p->inner.release(&p->inner);
    if (p->schema.release) p->schema.release(&p->schema);
    free(p->views);
    free(p);
    s->release = NULL;
}

/* Rewrites the view formats of the copied schema; returns the flags. */
static char *mark_views(struct ArrowSchema *schema)
{
    char *views = calloc((size_t)schema->n_children + 1, 1);
    for (int64_t i = 0; views && i < schema->n_children; i++) {
        struct ArrowSchema *child = schema->children[i];
        if (!is_view(child->format)) continue;
        char *large = strdup(child->format[1] == 'u' ? "U" : "Z");
        if (large == NULL) {
            free(views);
            return NULL;
        }
        free((char *)child->format); /* the copy's own string */
        child->format = large;
        views[i] = 1;
    }
    return views;
}

int tlpy_stream_without_views(struct ArrowArrayStream *stream)
{
    struct ArrowSchema schema;
    if (stream->get_schema(stream, &schema) != 0) return 0; /* the consumer will report it */
    int any = 0;
    for (int64_t i = 0; i < schema.n_children; i++) any |= is_view(schema.children[i]->format);
    if (!any) {
        schema.release(&schema);
        return 0;
    }
    view_stream *p = calloc(1, sizeof *p);
    int rc = p ? tlpy_schema_copy(&schema, &p->schema) : -1;
    schema.release(&schema);
    if (rc == 0 && (p->views = mark_views(&p->schema)) == NULL) rc = -1;
    if (rc < 0) {
        if (p && p->schema.release) p->schema.release(&p->schema);
        free(p);
        return -1;
    }
    p->inner = *stream;
    stream->get_schema = vs_get_schema;
    stream->get_next = vs_get_next;
    stream->get_last_error = vs_last_error;
    stream->release = vs_release;
    stream->private_data = p;
    return 0;
}
