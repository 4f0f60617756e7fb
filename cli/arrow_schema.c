/* Schemas the CLI owns: one block per node with its strings and children. */
#include <stdlib.h>
#include <string.h>

#include "arrow_own.h"

typedef struct schema_node {
    char *format, *name, *metadata;
    struct ArrowSchema **child_ptrs;
    struct ArrowSchema *children;
    struct ArrowSchema dictionary;
} schema_node;

static void node_release(struct ArrowSchema *s)
{
    schema_node *p = s->private_data;
    for (int64_t i = 0; i < s->n_children; i++) cli_schema_release(&p->children[i]);
    cli_schema_release(&p->dictionary);
    free(p->format);
    free(p->name);
    free(p->metadata);
    free(p->child_ptrs);
    free(p->children);
    free(p);
    s->release = NULL;
}

static char *copy_or_null(const char *s, int *failed)
{
    char *c = s ? strdup(s) : NULL;
    if (s && !c) *failed = 1;
    return c;
}

int cli_schema_new(struct ArrowSchema *out, const char *format, const char *name, int64_t flags,
                   int64_t n_children)
{
    memset(out, 0, sizeof *out);
    schema_node *p = calloc(1, sizeof *p);
    if (p == NULL) return -1;
    int failed = 0;
    p->format = copy_or_null(format, &failed);
    p->name = copy_or_null(name, &failed);
    p->children = calloc((size_t)n_children + 1, sizeof *p->children);
    p->child_ptrs = calloc((size_t)n_children + 1, sizeof *p->child_ptrs);
    for (int64_t i = 0; p->child_ptrs && p->children && i < n_children; i++)
        p->child_ptrs[i] = &p->children[i];
    *out = (struct ArrowSchema){.format = p->format,
                                .name = p->name,
                                .flags = flags,
                                .n_children = n_children,
                                .children = p->child_ptrs,
                                .release = node_release,
                                .private_data = p};
    if (failed || !p->children || !p->child_ptrs) {
        out->n_children = 0;
        node_release(out);
        return -1;
    }
    return 0;
}

/* Bytes of Arrow's metadata encoding: int32 pair count, then each key and
 * value as an int32 length and its bytes. */
static size_t metadata_size(const char *m)
{
    int32_t pairs, len;
    memcpy(&pairs, m, sizeof pairs);
    size_t at = sizeof pairs;
    for (int32_t i = 0; i < 2 * pairs; i++) {
        memcpy(&len, m + at, sizeof len);
        at += sizeof len + (size_t)len;
    }
    return at;
}

int cli_schema_copy(const struct ArrowSchema *src, struct ArrowSchema *out)
{
    if (cli_schema_new(out, src->format, src->name, src->flags, src->n_children) != 0) return -1;
    schema_node *p = out->private_data;
    int rc = 0;
    if (src->metadata) {
        size_t n = metadata_size(src->metadata);
        p->metadata = malloc(n);
        if (p->metadata) memcpy(p->metadata, src->metadata, n);
        out->metadata = p->metadata;
        rc = p->metadata ? 0 : -1;
    }
    for (int64_t i = 0; rc == 0 && i < src->n_children; i++)
        rc = cli_schema_copy(src->children[i], &p->children[i]);
    if (rc == 0 && src->dictionary) {
        rc = cli_schema_copy(src->dictionary, &p->dictionary);
        out->dictionary = &p->dictionary;
    }
    if (rc != 0) node_release(out);
    return rc;
}

void cli_schema_release(struct ArrowSchema *s)
{
    if (s && s->release) s->release(s);
}

void cli_array_release(struct ArrowArray *a)
{
    if (a && a->release) a->release(a);
}

void cli_array_move(struct ArrowArray *src, struct ArrowArray *dst)
{
    *dst = *src;
    src->release = NULL;
}
