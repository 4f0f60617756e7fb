/* A struct batch split in two by rows without a copy: each part's columns
 * are the batch's with their offset moved on, sharing its buffers. The batch
 * is released when the last part (or a column moved out of one) is. */
#include <stdlib.h>
#include <string.h>

#include "arrow_own.h"

typedef struct shared_batch {
    struct ArrowArray batch;
    int64_t refs;
} shared_batch;

typedef struct part {
    shared_batch *shared;
    struct ArrowArray **child_ptrs;
    struct ArrowArray *children;
    const void *buffers[1]; /* no validity: a record batch has no null rows */
} part;

static void unref(shared_batch *s)
{
    if (--s->refs > 0) return;
    cli_array_release(&s->batch);
    free(s);
}

static void column_release(struct ArrowArray *a)
{
    unref(a->private_data);
    a->release = NULL;
}

static void part_release(struct ArrowArray *a)
{
    part *p = a->private_data;
    for (int64_t i = 0; i < a->n_children; i++) cli_array_release(&p->children[i]);
    unref(p->shared);
    free(p->child_ptrs);
    free(p->children);
    free(p);
    a->release = NULL;
}

/* Nulls among values [from, from + n) of a column of `format`. */
static int64_t null_count(const char *format, const struct ArrowArray *c, int64_t from, int64_t n)
{
    if (c->null_count == 0) return 0;
    if (strcmp(format, "n") == 0) return n;
    /* Unions and run-end encoded arrays have no validity buffer of their own. */
    if (strncmp(format, "+u", 2) == 0 || strcmp(format, "+r") == 0 || c->buffers[0] == NULL)
        return 0;
    const uint8_t *bits = c->buffers[0];
    int64_t nulls = 0;
    for (int64_t i = c->offset + from; i < c->offset + from + n; i++)
        nulls += !(bits[i >> 3] >> (i & 7) & 1);
    return nulls;
}

/* Rows [from, from + n) of the shared batch into *out. */
static int make_part(const struct ArrowSchema *schema, shared_batch *s, int64_t from, int64_t n,
                     struct ArrowArray *out)
{
    const struct ArrowArray *b = &s->batch;
    part *p = calloc(1, sizeof *p);
    int64_t k = b->n_children;
    if (p) p->children = calloc((size_t)k + 1, sizeof *p->children);
    if (p) p->child_ptrs = calloc((size_t)k + 1, sizeof *p->child_ptrs);
    if (!p || !p->children || !p->child_ptrs) {
        if (p) free(p->children);
        free(p);
        return -1;
    }
    p->shared = s;
    s->refs += 1 + k;
    for (int64_t i = 0; i < k; i++) {
        const struct ArrowArray *c = b->children[i];
        int64_t at = b->offset + from;
        p->children[i] = *c;
        p->children[i].offset = c->offset + at;
        p->children[i].length = n;
        p->children[i].null_count = null_count(schema->children[i]->format, c, at, n);
        p->children[i].release = column_release;
        p->children[i].private_data = s;
        p->child_ptrs[i] = &p->children[i];
    }
    *out = (struct ArrowArray){.length = n,
                               .n_buffers = 1,
                               .buffers = p->buffers,
                               .n_children = k,
                               .children = p->child_ptrs,
                               .release = part_release,
                               .private_data = p};
    return 0;
}

int cli_batch_split(const struct ArrowSchema *schema, struct ArrowArray *batch, int64_t n,
                    struct ArrowArray *head, struct ArrowArray *tail)
{
    head->release = tail->release = NULL;
    shared_batch *s = calloc(1, sizeof *s);
    if (s == NULL) {
        cli_array_release(batch);
        return -1;
    }
    cli_array_move(batch, &s->batch);
    s->refs = 1; /* ours, until both parts are made */
    int rc = make_part(schema, s, 0, n, head);
    if (rc == 0) rc = make_part(schema, s, n, s->batch.length - n, tail);
    if (rc != 0) {
        cli_array_release(head);
        cli_array_release(tail);
    }
    unref(s);
    return rc;
}
