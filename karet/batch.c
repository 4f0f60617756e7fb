/* Record batches: owned lists, streams over them, row numbers, and taking
 * rows. Arrays built here own their buffers through one private block. */
#include "batch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

/* ---- owned arrays and schemas ---- */

typedef struct owned_array {
    void *buffers[3];
    const void *buffer_ptrs[3];
    struct ArrowArray **children;
    int64_t n_children;
    struct ArrowArray parent; /* a moved-from parent released with us, or released */
} owned_array;

static void release_array(struct ArrowArray *a)
{
    owned_array *o = a->private_data;
    for (int i = 0; i < 3; i++) free(o->buffers[i]);
    for (int64_t i = 0; i < o->n_children; i++) {
        if (o->children[i] && o->children[i]->release) o->children[i]->release(o->children[i]);
        free(o->children[i]);
    }
    free(o->children);
    if (o->parent.release) o->parent.release(&o->parent);
    free(o);
    a->release = NULL;
}

/* A new array of `length` with n_buffers buffers and n_children zeroed,
 * owned children. */
bool karray_new(struct ArrowArray *a, int64_t length, int64_t n_buffers, int64_t n_children)
{
    owned_array *o = calloc(1, sizeof *o);
    if (o == NULL) return false;
    if (n_children && (o->children = calloc((size_t)n_children, sizeof *o->children)) == NULL) {
        free(o);
        return false;
    }
    o->n_children = n_children;
    for (int64_t i = 0; i < n_children; i++)
        if ((o->children[i] = calloc(1, sizeof **o->children)) == NULL) {
            *a = (struct ArrowArray){.private_data = o, .release = release_array};
            release_array(a);
            return false;
        }
    *a = (struct ArrowArray){.length = length,
                             .n_buffers = n_buffers,
                             .n_children = n_children,
                             .buffers = o->buffer_ptrs,
                             .children = o->children,
                             .release = release_array,
                             .private_data = o};
    return true;
}

void karray_set_buffer(struct ArrowArray *a, int i, void *data)
{
    owned_array *o = a->private_data;
    o->buffers[i] = data;
    o->buffer_ptrs[i] = data;
}

typedef struct owned_schema {
    char *format, *name;
    struct ArrowSchema **children;
    int64_t n_children;
} owned_schema;

static void release_schema(struct ArrowSchema *s)
{
    owned_schema *o = s->private_data;
    for (int64_t i = 0; i < o->n_children; i++) {
        if (o->children[i] && o->children[i]->release) o->children[i]->release(o->children[i]);
        free(o->children[i]);
    }
    free(o->children);
    free(o->format);
    free(o->name);
    free(o);
    s->release = NULL;
}

static bool new_schema(struct ArrowSchema *s, const char *format, const char *name,
                       int64_t n_children)
{
    owned_schema *o = calloc(1, sizeof *o);
    if (o == NULL) return false;
    *s = (struct ArrowSchema){
        .flags = ARROW_FLAG_NULLABLE, .private_data = o, .release = release_schema};
    o->format = strdup(format);
    o->name = name ? strdup(name) : NULL;
    o->n_children = n_children;
    if (n_children) o->children = calloc((size_t)n_children, sizeof *o->children);
    bool ok = o->format && (name == NULL || o->name) && (n_children == 0 || o->children);
    for (int64_t i = 0; ok && i < n_children; i++)
        ok = (o->children[i] = calloc(1, sizeof **o->children)) != NULL;
    if (!ok) {
        release_schema(s);
        return false;
    }
    s->format = o->format;
    s->name = o->name;
    s->n_children = n_children;
    s->children = o->children;
    return true;
}

/* ---- batches and lists ---- */

void kbatch_release(kbatch *b)
{
    if (b->array.release) b->array.release(&b->array);
    if (b->schema.release) b->schema.release(&b->schema);
}

bool kbatches_push(kbatches *l, kbatch *b)
{
    if (l->len == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        kbatch *p = realloc(l->items, cap * sizeof *p);
        if (p == NULL) {
            kbatch_release(b);
            return false;
        }
        l->items = p;
        l->cap = cap;
    }
    l->rows += b->array.length;
    l->items[l->len++] = *b;
    memset(b, 0, sizeof *b);
    return true;
}

void kbatches_free(kbatches *l)
{
    for (size_t i = 0; i < l->len; i++) kbatch_release(&l->items[i]);
    free(l->items);
    memset(l, 0, sizeof *l);
}

bool kschema_struct(struct ArrowSchema *out, const char *const *formats, const char *const *names,
                    size_t n)
{
    if (!new_schema(out, "+s", NULL, (int64_t)n)) return false;
    for (size_t i = 0; i < n; i++)
        if (!new_schema(out->children[i], formats[i], names[i], 0)) {
            out->release(out);
            return false;
        }
    return true;
}

static bool copy_schema(const struct ArrowSchema *src, struct ArrowSchema *out)
{
    if (!new_schema(out, src->format, src->name, src->n_children)) return false;
    out->flags = src->flags;
    for (int64_t i = 0; i < src->n_children; i++)
        if (!copy_schema(src->children[i], out->children[i])) {
            out->release(out);
            return false;
        }
    return true;
}

bool kschema_copy(const struct ArrowSchema *src, struct ArrowSchema *out)
{
    return copy_schema(src, out);
}

int kbatches_drain(struct ArrowArrayStream *s, kbatches *out, char *err, size_t errlen)
{
    struct ArrowSchema schema = {0};
    int rc = s->get_schema(s, &schema);
    while (rc == 0) {
        kbatch b = {0};
        rc = s->get_next(s, &b.array);
        if (rc != 0 || b.array.release == NULL) break;
        if (!copy_schema(&schema, &b.schema) || !kbatches_push(out, &b)) {
            kbatch_release(&b);
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
    }
    if (rc > 0) {
        const char *m = s->get_last_error ? s->get_last_error(s) : NULL;
        snprintf(err, errlen, "%s", m ? m : "the stream failed");
    }
    if (schema.release) schema.release(&schema);
    s->release(s);
    return rc;
}

/* ---- a stream over a list ---- */

typedef struct list_stream {
    kbatches list;
    size_t next;
    struct ArrowSchema schema;
} list_stream;

static int ls_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    list_stream *p = s->private_data;
    return copy_schema(&p->schema, out) ? 0 : 12; /* ENOMEM */
}

static int ls_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    list_stream *p = s->private_data;
    if (p->next == p->list.len) {
        memset(out, 0, sizeof *out);
        return 0;
    }
    kbatch *b = &p->list.items[p->next++];
    *out = b->array;
    b->array.release = NULL;
    return 0;
}

static const char *ls_error(struct ArrowArrayStream *s)
{
    (void)s;
    return "out of memory";
}

static void ls_release(struct ArrowArrayStream *s)
{
    list_stream *p = s->private_data;
    kbatches_free(&p->list);
    if (p->schema.release) p->schema.release(&p->schema);
    free(p);
    s->release = NULL;
}

bool kbatches_stream(kbatches *l, const struct ArrowSchema *schema, struct ArrowArrayStream *out)
{
    list_stream *p = calloc(1, sizeof *p);
    if (p == NULL || !copy_schema(schema, &p->schema)) {
        free(p);
        return false;
    }
    p->list = *l;
    memset(l, 0, sizeof *l);
    *out = (struct ArrowArrayStream){ls_schema, ls_next, ls_error, ls_release, p};
    return true;
}

/* ---- reading values ---- */

kcol kbatch_col(const kbatch *b, int i)
{
    return (kcol){b->schema.children[i], b->array.children[i], b->array.offset};
}

int kbatch_column(const struct ArrowSchema *s, const char *name)
{
    for (int64_t i = 0; i < s->n_children; i++)
        if (s->children[i]->name && strcmp(s->children[i]->name, name) == 0) return (int)i;
    return -1;
}

static bool bit(const void *bits, int64_t i)
{
    return (((const uint8_t *)bits)[i >> 3] >> (i & 7)) & 1;
}

bool kcol_is_null(kcol c, int64_t row)
{
    if (c.schema->format[0] == 'n') return true;
    const void *validity = c.array->n_buffers > 0 ? c.array->buffers[0] : NULL;
    return validity && c.array->null_count != 0 && !bit(validity, row + c.base + c.array->offset);
}

bool kcol_string(kcol c, int64_t row, const char **s, size_t *len)
{
    const char *f = c.schema->format;
    int64_t i = row + c.base + c.array->offset;
    const char *data = c.array->buffers[2];
    if (strcmp(f, "u") == 0) {
        const int32_t *off = c.array->buffers[1];
        *s = data + off[i];
        *len = (size_t)(off[i + 1] - off[i]);
        return true;
    }
    if (strcmp(f, "U") == 0) {
        const int64_t *off = c.array->buffers[1];
        *s = data + off[i];
        *len = (size_t)(off[i + 1] - off[i]);
        return true;
    }
    return false;
}

/* Bytes per value of a fixed-width format, 0 for bool, -1 when not handled. */
static int width_of(const char *f)
{
    if (strcmp(f, "b") == 0) return 0;
    if (strcmp(f, "c") == 0 || strcmp(f, "C") == 0) return 1;
    if (strcmp(f, "s") == 0 || strcmp(f, "S") == 0) return 2;
    if (strcmp(f, "i") == 0 || strcmp(f, "I") == 0 || strcmp(f, "f") == 0 || strcmp(f, "tdD") == 0)
        return 4;
    if (strcmp(f, "l") == 0 || strcmp(f, "L") == 0 || strcmp(f, "g") == 0 ||
        strcmp(f, "tdm") == 0 || strncmp(f, "ts", 2) == 0)
        return 8;
    return -1;
}

bool kcol_int(kcol c, int64_t row, int64_t *out)
{
    const char *f = c.schema->format;
    int64_t i = row + c.base + c.array->offset;
    const void *d = c.array->buffers[1];
    switch (f[0] == 't' ? (strcmp(f, "tdD") == 0 ? 4 : 8) : f[0]) {
    case 'c':
        *out = ((const int8_t *)d)[i];
        return true;
    case 's':
        *out = ((const int16_t *)d)[i];
        return true;
    case 'i':
    case 4:
        *out = ((const int32_t *)d)[i];
        return true;
    case 'l':
    case 8:
        *out = ((const int64_t *)d)[i];
        return true;
    default:
        return false;
    }
}

void kcol_key(kcol c, int64_t row, kbuf *out)
{
    const char *f = c.schema->format;
    if (kcol_is_null(c, row)) {
        kbuf_putc(out, 'N');
        return;
    }
    const char *s;
    size_t len;
    int64_t v;
    if (kcol_string(c, row, &s, &len)) {
        uint64_t n = len;
        kbuf_putc(out, 'S');
        kbuf_putn(out, (const char *)&n, sizeof n);
        kbuf_putn(out, s, len);
    } else if (strcmp(f, "g") == 0 || strcmp(f, "f") == 0) {
        int64_t i = row + c.base + c.array->offset;
        double d = f[0] == 'g' ? ((const double *)c.array->buffers[1])[i]
                               : ((const float *)c.array->buffers[1])[i];
        if (d == 0) d = 0; /* -0.0 equals 0.0 */
        if (isnan(d)) d = NAN;
        kbuf_putc(out, 'F');
        kbuf_putn(out, (const char *)&d, sizeof d);
    } else if (strcmp(f, "b") == 0) {
        kbuf_putc(out, bit(c.array->buffers[1], row + c.base + c.array->offset) ? 'T' : 'F');
    } else if (kcol_int(c, row, &v)) {
        kbuf_putc(out, 'I');
        kbuf_putn(out, (const char *)&v, sizeof v);
    } else {
        kbuf_putc(out, '?');
    }
}

/* ---- taking rows ---- */

static bool take_validity(kcol c, const int64_t *rows, size_t n, struct ArrowArray *out)
{
    int64_t nulls = 0;
    for (size_t r = 0; r < n; r++) nulls += kcol_is_null(c, rows[r]);
    out->null_count = nulls;
    if (nulls == 0) return true;
    uint8_t *v = calloc((n + 7) / 8 + 1, 1);
    if (v == NULL) return false;
    for (size_t r = 0; r < n; r++)
        if (!kcol_is_null(c, rows[r])) v[r >> 3] |= (uint8_t)(1 << (r & 7));
    karray_set_buffer(out, 0, v);
    return true;
}

static bool take_column(kcol c, const int64_t *rows, size_t n, const char *want,
                        struct ArrowArray *out, char *err, size_t errlen)
{
    const char *f = c.schema->format;
    bool text = strcmp(f, "u") == 0 || strcmp(f, "U") == 0;
    bool utf8 = text && strcmp(want, "u") == 0, large = text && strcmp(want, "U") == 0;
    int w = width_of(f);
    if ((!utf8 && !large && w < 0) || (!text && strcmp(f, want) != 0)) {
        snprintf(err, errlen, "column \"%s\" is Arrow type %s where karet expects %s",
                 c.schema->name ? c.schema->name : "?", f, want);
        return false;
    }
    if (!karray_new(out, (int64_t)n, utf8 || large ? 3 : 2, 0)) goto oom;
    if (!take_validity(c, rows, n, out)) goto oom;
    if (utf8 || large) {
        size_t total = 0, ow = large ? 8 : 4;
        const char *s;
        size_t len;
        for (size_t r = 0; r < n; r++)
            if (kcol_string(c, rows[r], &s, &len)) total += len;
        if (!large && total > INT32_MAX) {
            snprintf(err, errlen, "column \"%s\": over 2 GiB of text in one batch",
                     c.schema->name ? c.schema->name : "?");
            out->release(out);
            return false;
        }
        char *offsets = malloc((n + 1) * ow), *data = malloc(total ? total : 1);
        if (offsets == NULL || data == NULL) {
            free(offsets);
            free(data);
            goto oom;
        }
        size_t pos = 0;
        for (size_t r = 0; r <= n; r++) {
            if (large)
                ((int64_t *)offsets)[r] = (int64_t)pos;
            else
                ((int32_t *)offsets)[r] = (int32_t)pos;
            if (r < n && kcol_string(c, rows[r], &s, &len)) {
                memcpy(data + pos, s, len);
                pos += len;
            }
        }
        karray_set_buffer(out, 1, offsets);
        karray_set_buffer(out, 2, data);
        return true;
    }
    if (w == 0) {
        uint8_t *bits = calloc((n + 7) / 8 + 1, 1);
        if (bits == NULL) goto oom;
        for (size_t r = 0; r < n; r++)
            if (bit(c.array->buffers[1], rows[r] + c.base + c.array->offset))
                bits[r >> 3] |= (uint8_t)(1 << (r & 7));
        karray_set_buffer(out, 1, bits);
        return true;
    }
    char *data = malloc(n * (size_t)w + 1);
    if (data == NULL) goto oom;
    const char *src = c.array->buffers[1];
    for (size_t r = 0; r < n; r++)
        memcpy(data + r * (size_t)w, src + (rows[r] + c.base + c.array->offset) * w, (size_t)w);
    karray_set_buffer(out, 1, data);
    return true;
oom:
    if (out->release) out->release(out);
    snprintf(err, errlen, "out of memory");
    return false;
}

bool kbatch_take(const kbatch *b, const int *cols, size_t ncols, const int64_t *rows, size_t n,
                 const struct ArrowSchema *schema, kbatch *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    err[0] = '\0';
    if (!karray_new(&out->array, (int64_t)n, 1, (int64_t)ncols) ||
        !copy_schema(schema, &out->schema)) {
        kbatch_release(out);
        snprintf(err, errlen, "out of memory");
        return false;
    }
    for (size_t i = 0; i < ncols; i++) {
        kcol c = kbatch_col(b, cols[i]);
        if (!take_column(c, rows, n, schema->children[i]->format, out->array.children[i], err,
                         errlen)) {
            if (err[0] == '\0') snprintf(err, errlen, "out of memory");
            kbatch_release(out);
            return false;
        }
    }
    return true;
}

static bool pickable(const kbatch *b, const int *cols, size_t ncols,
                     const struct ArrowSchema *schema)
{
    if (b->array.offset != 0 || b->array.null_count != 0 || (int64_t)ncols != schema->n_children)
        return false;
    for (size_t i = 0; i < ncols; i++) {
        if (cols[i] < 0 || cols[i] >= b->array.n_children ||
            b->array.children[cols[i]]->length < b->array.length ||
            strcmp(b->schema.children[cols[i]]->format, schema->children[i]->format) != 0)
            return false;
        for (size_t j = 0; j < i; j++)
            if (cols[j] == cols[i]) return false;
    }
    return true;
}

bool kbatch_pick(kbatch *b, const int *cols, size_t ncols, const struct ArrowSchema *schema,
                 kbatch *out)
{
    memset(out, 0, sizeof *out);
    if (!pickable(b, cols, ncols, schema)) return false;
    if (!karray_new(&out->array, b->array.length, 1, (int64_t)ncols) ||
        !copy_schema(schema, &out->schema)) {
        kbatch_release(out);
        return false;
    }
    /* The moved columns may share memory with their old parent (DuckDB's
     * do): it is released only after them, with the new batch. */
    owned_array *o = out->array.private_data;
    for (size_t i = 0; i < ncols; i++) {
        *o->children[i] = *b->array.children[cols[i]];
        b->array.children[cols[i]]->release = NULL;
    }
    o->parent = b->array;
    b->array.release = NULL;
    kbatch_release(b);
    return true;
}

/* ---- row numbers ---- */

bool kbatch_add_row_numbers(kbatch *b, const char *name, int64_t *next)
{
    int64_t n = b->array.n_children, len = b->array.length;
    if (b->array.offset != 0) return false; /* readers hand out unsliced batches */
    kbatch nb = {0};
    if (!karray_new(&nb.array, len, 1, n + 1) || !new_schema(&nb.schema, "+s", NULL, n + 1)) {
        kbatch_release(&nb);
        return false;
    }
    bool ok = true;
    for (int64_t i = 0; ok && i < n; i++)
        ok = copy_schema(b->schema.children[i], nb.schema.children[i]);
    ok = ok && new_schema(nb.schema.children[n], "l", name, 0);
    int64_t *nums = ok ? malloc((size_t)(len ? len : 1) * sizeof *nums) : NULL;
    ok = nums && karray_new(nb.array.children[n], len, 2, 0);
    if (!ok) {
        free(nums);
        kbatch_release(&nb);
        return false;
    }
    for (int64_t r = 0; r < len; r++) nums[r] = (*next)++;
    karray_set_buffer(nb.array.children[n], 1, nums);
    /* Move the children out of the old parent, which the new one releases
     * (as the Arrow spec allows: a parent's release skips moved children). */
    owned_array *o = nb.array.private_data;
    for (int64_t i = 0; i < n; i++) {
        *o->children[i] = *b->array.children[i];
        b->array.children[i]->release = NULL;
    }
    o->parent = b->array;
    b->array.release = NULL;
    kbatch_release(b);
    *b = nb;
    return true;
}
