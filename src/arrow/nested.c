#include "arrow/nested.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/buffers.h"
#include "arrow/builder.h"
#include "arrow/cast.h"
#include "arrow/concat.h"
#include "arrow/take.h"

/* Deeper nesting than this is refused (the Iceberg schema allows 64). */
#define MAX_DEPTH 64
#define PATH_MAX_LEN 512

typedef enum kind { K_LEAF, K_NULL, K_STRUCT, K_LIST, K_LARGE_LIST, K_FIXED_LIST, K_MAP } kind;

/* Rows [start, start + len) of an array, start counted from its logical
 * start (the array's own offset is added when its buffers are read). */
typedef struct span {
    const struct ArrowSchema *s;
    const struct ArrowArray *a;
    int64_t start, len;
} span;

static kind kind_of(const struct ArrowSchema *f)
{
    const char *fmt = f->format ? f->format : "";
    if (f->dictionary) return K_LEAF;
    if (strcmp(fmt, "n") == 0) return K_NULL;
    if (strcmp(fmt, "+s") == 0) return K_STRUCT;
    if (strcmp(fmt, "+l") == 0) return K_LIST;
    if (strcmp(fmt, "+L") == 0) return K_LARGE_LIST;
    if (strcmp(fmt, "+m") == 0) return K_MAP;
    if (strncmp(fmt, "+w:", 3) == 0) return K_FIXED_LIST;
    return K_LEAF;
}

static bool is_listlike(kind k)
{
    return k == K_LIST || k == K_LARGE_LIST || k == K_MAP;
}

bool tl_arrow_is_nested(const struct ArrowSchema *field)
{
    kind k = kind_of(field);
    return k != K_LEAF && k != K_NULL;
}

static const char *kind_name(kind k)
{
    static const char *const names[] = {
        "a flat value", "null", "a struct", "a list", "a large list", "a fixed-size list", "a map"};
    return names[k];
}

static const char *field_name(const struct ArrowSchema *f)
{
    return f->name ? f->name : "";
}

/* Checks the array has the buffers and children its kind needs. */
static tl_status check_shape(const struct ArrowSchema *s, const struct ArrowArray *a, kind k,
                             const char *path, tl_error *err)
{
    int64_t want_buffers = k == K_STRUCT || k == K_FIXED_LIST ? 1 : 2;
    int64_t want_children = k == K_STRUCT ? s->n_children : 1;
    if (a->length < 0 || a->offset < 0 || a->n_buffers < want_buffers ||
        a->n_children != want_children || s->n_children != want_children ||
        (want_children > 0 && (a->children == NULL || s->children == NULL)))
        return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": malformed %s array", path,
                            kind_name(k));
    if (is_listlike(k) && a->length > 0 && a->buffers[1] == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": a list without offsets", path);
    return TL_OK;
}

static bool row_valid(const struct ArrowArray *a, int64_t i)
{
    if (a->null_count == 0 || a->n_buffers == 0 || a->buffers[0] == NULL) return true;
    return tl_bit_get(a->buffers[0], a->offset + i);
}

/* List offset j (logical: the array's offset is added) of a list or map. */
static int64_t list_offset(const struct ArrowArray *a, kind k, int64_t j)
{
    if (k == K_LARGE_LIST) return ((const int64_t *)a->buffers[1])[a->offset + j];
    return ((const int32_t *)a->buffers[1])[a->offset + j];
}

/* ---- Validity ---- */

/* Buffer 0 of out: the validity of the rows picked by take(i) (-1 null). */
typedef struct picker {
    const struct ArrowArray *a; /* NULL: a concatenation, see parts */
    const int64_t *idx;         /* NULL: rows start.. in order */
    int64_t start;
    const span *parts; /* concat: one span per part */
    size_t n_parts;
} picker;

static tl_status set_validity(struct ArrowArray *out, int64_t n, const picker *p, tl_error *err)
{
    uint8_t *bits = tl_buffer_alloc(out, 0, (size_t)(n + 7) / 8);
    if (bits == NULL) return tl_error_nomem(err);
    int64_t at = 0;
    if (p->parts) {
        for (size_t i = 0; i < p->n_parts; i++)
            for (int64_t r = 0; r < p->parts[i].len; r++, at++)
                if (row_valid(p->parts[i].a, p->parts[i].start + r))
                    tl_bit_set(bits, at);
                else
                    tl_bit_clear(bits, at);
    } else {
        for (; at < n; at++) {
            int64_t r = p->idx ? p->idx[at] : p->start + at;
            if (r >= 0 && row_valid(p->a, r))
                tl_bit_set(bits, at);
            else
                tl_bit_clear(bits, at);
        }
    }
    out->null_count = n - tl_bitmap_count(bits, 0, n);
    if (out->null_count == 0) tl_array_set_buffer(out, 0, NULL);
    return TL_OK;
}

/* ---- Leaves ---- */

static tl_status leaf_view(const span *sp, tl_array_view *whole, tl_array_view *slice,
                           tl_error *err)
{
    TL_TRY(tl_array_view_init(whole, sp->s, sp->a, err));
    tl_status st = tl_arrow_view_slice(whole, sp->start, sp->len, slice, err);
    if (st != TL_OK) tl_array_view_free(whole);
    return st;
}

static char *child_path(const char *path, const char *name, char *buf)
{
    snprintf(buf, PATH_MAX_LEN, "%s.%s", path, name);
    return buf;
}

/* ---- Take ---- */

static tl_status take_span(const struct ArrowSchema *s, const struct ArrowArray *a,
                           const int64_t *idx, int64_t n, int depth, struct ArrowArray *out,
                           tl_error *err);

static tl_status take_leaf(const struct ArrowSchema *s, const struct ArrowArray *a,
                           const int64_t *idx, int64_t n, struct ArrowArray *out, tl_error *err)
{
    tl_array_view v;
    TL_TRY(tl_array_view_init(&v, s, a, err));
    tl_status st = tl_arrow_take(&v, idx, n, out, err);
    tl_array_view_free(&v);
    return st;
}

static tl_status take_struct_rows(const struct ArrowSchema *s, const struct ArrowArray *a,
                                  const int64_t *idx, int64_t n, int depth, struct ArrowArray *out,
                                  tl_error *err)
{
    TL_TRY(tl_array_init(out, 1, s->n_children, err));
    out->length = n;
    TL_TRY(set_validity(out, n, &(picker){.a = a, .idx = idx}, err));
    int64_t *shifted = malloc((size_t)(n > 0 ? n : 1) * sizeof *shifted);
    if (shifted == NULL) return tl_error_nomem(err);
    for (int64_t i = 0; i < n; i++) shifted[i] = idx[i] >= 0 ? idx[i] + a->offset : -1;
    tl_status st = TL_OK;
    for (int64_t c = 0; st == TL_OK && c < s->n_children; c++)
        st =
            take_span(s->children[c], a->children[c], shifted, n, depth + 1, out->children[c], err);
    free(shifted);
    return st;
}

static tl_status take_list_rows(const struct ArrowSchema *s, const struct ArrowArray *a, kind k,
                                const int64_t *idx, int64_t n, int depth, struct ArrowArray *out,
                                tl_error *err)
{
    bool large = k == K_LARGE_LIST;
    TL_TRY(tl_array_init(out, 2, 1, err));
    out->length = n;
    TL_TRY(set_validity(out, n, &(picker){.a = a, .idx = idx}, err));
    void *offs = tl_buffer_alloc(out, 1, (size_t)(n + 1) * (large ? 8 : 4));
    if (offs == NULL) return tl_error_nomem(err);
    int64_t total = 0;
    for (int64_t i = 0; i <= n; i++) {
        if (large)
            ((int64_t *)offs)[i] = total;
        else
            ((int32_t *)offs)[i] = (int32_t)total;
        if (i == n) break;
        int64_t r = idx[i];
        if (r >= 0 && row_valid(a, r)) total += list_offset(a, k, r + 1) - list_offset(a, k, r);
        if (!large && total > INT32_MAX)
            return tl_error_set(err, TL_ERR_INVALID, "over 2^31 list elements in one array");
    }
    int64_t *child = malloc((size_t)(total > 0 ? total : 1) * sizeof *child);
    if (child == NULL) return tl_error_nomem(err);
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t r = idx[i];
        if (r < 0 || !row_valid(a, r)) continue;
        for (int64_t j = list_offset(a, k, r); j < list_offset(a, k, r + 1); j++) child[at++] = j;
    }
    tl_status st =
        take_span(s->children[0], a->children[0], child, total, depth + 1, out->children[0], err);
    free(child);
    return st;
}

static tl_status take_span(const struct ArrowSchema *s, const struct ArrowArray *a,
                           const int64_t *idx, int64_t n, int depth, struct ArrowArray *out,
                           tl_error *err)
{
    kind k = kind_of(s);
    if (depth > MAX_DEPTH)
        return tl_error_set(err, TL_ERR_INVALID, "types nested more than %d deep", MAX_DEPTH);
    if (k == K_LEAF || k == K_NULL) return take_leaf(s, a, idx, n, out, err);
    const char *name = field_name(s);
    TL_TRY(check_shape(s, a, k, name, err));
    for (int64_t i = 0; i < n; i++)
        if (idx[i] < -1 || idx[i] >= a->length)
            return tl_error_set(err, TL_ERR_INVALID, "take: index %lld is outside %lld rows",
                                (long long)idx[i], (long long)a->length);
    tl_status st;
    if (k == K_STRUCT)
        st = take_struct_rows(s, a, idx, n, depth, out, err);
    else if (is_listlike(k))
        st = take_list_rows(s, a, k, idx, n, depth, out, err);
    else
        st = tl_error_set(err, TL_ERR_INVALID, "take: %s is not supported", kind_name(k));
    if (st != TL_OK) tl_array_release(out);
    return st;
}

tl_status tl_arrow_take_nested(const struct ArrowSchema *field, const struct ArrowArray *src,
                               const int64_t *indices, int64_t n, struct ArrowArray *out,
                               tl_error *err)
{
    memset(out, 0, sizeof *out);
    return take_span(field, src, indices, n, 0, out, err);
}

/* ---- Concatenation ---- */

static tl_status concat_spans(const span *parts, size_t n, int depth, struct ArrowArray *out,
                              tl_error *err);

static tl_status concat_leaves(const span *parts, size_t n, struct ArrowArray *out, tl_error *err)
{
    tl_array_view *whole = calloc(n ? n : 1, sizeof *whole);
    tl_array_view *slices = calloc(n ? n : 1, sizeof *slices);
    tl_status st = whole && slices ? TL_OK : tl_error_nomem(err);
    size_t done = 0;
    for (; st == TL_OK && done < n; done++)
        if ((st = leaf_view(&parts[done], &whole[done], &slices[done], err)) != TL_OK) break;
    if (st == TL_OK) st = tl_arrow_concat(slices, n, out, err);
    for (size_t i = 0; i < done; i++) tl_array_view_free(&whole[i]);
    free(whole);
    free(slices);
    return st;
}

static tl_status concat_structs(const span *parts, size_t n, int64_t total, int depth,
                                struct ArrowArray *out, tl_error *err)
{
    const struct ArrowSchema *s = parts[0].s;
    TL_TRY(tl_array_init(out, 1, s->n_children, err));
    out->length = total;
    TL_TRY(set_validity(out, total, &(picker){.parts = parts, .n_parts = n}, err));
    span *kids = calloc(n ? n : 1, sizeof *kids);
    if (kids == NULL) return tl_error_nomem(err);
    tl_status st = TL_OK;
    for (int64_t c = 0; st == TL_OK && c < s->n_children; c++) {
        for (size_t i = 0; i < n; i++)
            kids[i] = (span){parts[i].s->children[c], parts[i].a->children[c],
                             parts[i].a->offset + parts[i].start, parts[i].len};
        st = concat_spans(kids, n, depth + 1, out->children[c], err);
    }
    free(kids);
    return st;
}

static tl_status concat_lists(const span *parts, size_t n, int64_t total, int depth,
                              struct ArrowArray *out, tl_error *err)
{
    kind k = kind_of(parts[0].s);
    bool large = k == K_LARGE_LIST;
    TL_TRY(tl_array_init(out, 2, 1, err));
    out->length = total;
    TL_TRY(set_validity(out, total, &(picker){.parts = parts, .n_parts = n}, err));
    void *offs = tl_buffer_alloc(out, 1, (size_t)(total + 1) * (large ? 8 : 4));
    span *kids = calloc(n ? n : 1, sizeof *kids);
    if (offs == NULL || kids == NULL) {
        free(kids);
        return tl_error_nomem(err);
    }
    int64_t at = 0, elems = 0;
    tl_status st = TL_OK;
    for (size_t i = 0; st == TL_OK && i < n; i++) {
        const span *p = &parts[i];
        int64_t first = p->len ? list_offset(p->a, k, p->start) : 0;
        for (int64_t r = 0; r < p->len; r++, at++) {
            int64_t o = elems + list_offset(p->a, k, p->start + r) - first;
            if (large)
                ((int64_t *)offs)[at] = o;
            else
                ((int32_t *)offs)[at] = (int32_t)o;
        }
        int64_t len = p->len ? list_offset(p->a, k, p->start + p->len) - first : 0;
        if (first < 0 || len < 0)
            st = tl_error_set(err, TL_ERR_INVALID, "concat: part %zu has bad list offsets", i);
        kids[i] = (span){p->s->children[0], p->a->children[0], first, len};
        elems += len;
        if (!large && elems > INT32_MAX)
            st = tl_error_set(err, TL_ERR_INVALID, "over 2^31 list elements in one array");
    }
    if (large)
        ((int64_t *)offs)[total] = elems;
    else
        ((int32_t *)offs)[total] = (int32_t)elems;
    if (st == TL_OK) st = concat_spans(kids, n, depth + 1, out->children[0], err);
    free(kids);
    return st;
}

static tl_status concat_spans(const span *parts, size_t n, int depth, struct ArrowArray *out,
                              tl_error *err)
{
    if (depth > MAX_DEPTH)
        return tl_error_set(err, TL_ERR_INVALID, "types nested more than %d deep", MAX_DEPTH);
    kind k = n ? kind_of(parts[0].s) : K_NULL;
    if (k == K_LEAF || k == K_NULL) return concat_leaves(parts, n, out, err);
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = field_name(parts[i].s);
        TL_TRY(check_shape(parts[i].s, parts[i].a, k, name, err));
        if (kind_of(parts[i].s) != k)
            return tl_error_set(err, TL_ERR_INVALID, "concat: part %zu of \"%s\" is %s, not %s", i,
                                name, kind_name(kind_of(parts[i].s)), kind_name(k));
        if (parts[i].start < 0 || parts[i].len < 0 ||
            parts[i].start + parts[i].len > parts[i].a->length)
            return tl_error_set(err, TL_ERR_INVALID, "concat: part %zu of \"%s\" is out of range",
                                i, name);
        total += parts[i].len;
    }
    tl_status st;
    if (k == K_STRUCT)
        st = concat_structs(parts, n, total, depth, out, err);
    else if (is_listlike(k))
        st = concat_lists(parts, n, total, depth, out, err);
    else
        st = tl_error_set(err, TL_ERR_INVALID, "concat: %s is not supported", kind_name(k));
    if (st != TL_OK) tl_array_release(out);
    return st;
}

tl_status tl_arrow_concat_nested(const struct ArrowSchema *field, const struct ArrowArray *parts,
                                 size_t n, struct ArrowArray *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    span *spans = calloc(n ? n : 1, sizeof *spans);
    if (spans == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) spans[i] = (span){field, &parts[i], 0, parts[i].length};
    tl_status st =
        n ? concat_spans(spans, n, 0, out, err) : tl_arrow_nulls_nested(field, 0, out, err);
    free(spans);
    return st;
}

/* ---- All nulls ---- */

static tl_status nulls(const struct ArrowSchema *f, int64_t length, int depth,
                       struct ArrowArray *out, tl_error *err)
{
    if (depth > MAX_DEPTH)
        return tl_error_set(err, TL_ERR_INVALID, "types nested more than %d deep", MAX_DEPTH);
    kind k = kind_of(f);
    if (k == K_LEAF || k == K_NULL) {
        tl_arrow_type type;
        TL_TRY(tl_arrow_type_parse(f->format, &type, err));
        return tl_arrow_nulls(&type, length, out, err);
    }
    if (k == K_FIXED_LIST)
        return tl_error_set(err, TL_ERR_INVALID, "fixed-size lists are not a storage type");
    bool list = is_listlike(k);
    TL_TRY(tl_array_init(out, list ? 2 : 1, list ? 1 : f->n_children, err));
    out->length = length;
    out->null_count = length;
    bool ok = tl_array_alloc_buffer(out, 0, (size_t)(length + 7) / 8) != NULL;
    if (ok && list)
        ok = tl_array_alloc_buffer(out, 1, (size_t)(length + 1) * (k == K_LARGE_LIST ? 8 : 4));
    if (!ok) return tl_error_nomem(err);
    if (list) return nulls(f->children[0], 0, depth + 1, out->children[0], err);
    for (int64_t c = 0; c < f->n_children; c++)
        TL_TRY(nulls(f->children[c], length, depth + 1, out->children[c], err));
    return TL_OK;
}

tl_status tl_arrow_nulls_nested(const struct ArrowSchema *field, int64_t length,
                                struct ArrowArray *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    tl_status st = nulls(field, length, 0, out, err);
    if (st != TL_OK) tl_array_release(out);
    return st;
}

/* ---- Cast ---- */

static tl_status cast_span(const span *src, const struct ArrowSchema *to, const char *path,
                           int depth, struct ArrowArray *out, tl_error *err);

static tl_status cast_leaf(const span *src, const struct ArrowSchema *to, const char *path,
                           struct ArrowArray *out, tl_error *err)
{
    tl_arrow_type target;
    TL_TRY(tl_arrow_type_parse(to->format, &target, err));
    tl_array_view whole, slice;
    tl_status st = leaf_view(src, &whole, &slice, err);
    if (st != TL_OK) return tl_error_prefix(err, "column \"%s\"", path);
    st = tl_arrow_cast(&slice, &target, path, out, err);
    tl_array_view_free(&whole);
    return st;
}

/* A null under a non-nullable child, where its parent row is valid. */
static tl_status check_required(const struct ArrowSchema *to, const struct ArrowArray *child,
                                const struct ArrowArray *parent, bool list, const char *path,
                                tl_error *err)
{
    if ((to->flags & ARROW_FLAG_NULLABLE) || child->null_count == 0) return TL_OK;
    for (int64_t r = 0; r < parent->length; r++) {
        if (!row_valid(parent, r)) continue;
        int64_t lo = r, hi = r + 1;
        if (list) {
            lo = ((const int32_t *)parent->buffers[1])[r];
            hi = ((const int32_t *)parent->buffers[1])[r + 1];
        }
        for (int64_t j = lo; j < hi; j++)
            if (!row_valid(child, j))
                return tl_error_set(err, TL_ERR_INVALID,
                                    "column \"%s\" is required but holds a null (row %lld of "
                                    "its parent)",
                                    path, (long long)r);
    }
    return TL_OK;
}

static int find_child(const struct ArrowSchema *s, const char *name)
{
    for (int64_t i = 0; i < s->n_children; i++)
        if (s->children[i]->name && strcmp(s->children[i]->name, name) == 0) return (int)i;
    return -1;
}

static tl_status cast_struct(const span *src, const struct ArrowSchema *to, const char *path,
                             int depth, struct ArrowArray *out, tl_error *err)
{
    const struct ArrowSchema *from = src->s;
    char buf[PATH_MAX_LEN];
    for (int64_t c = 0; c < from->n_children; c++)
        if (find_child(to, field_name(from->children[c])) < 0)
            return tl_error_set(err, TL_ERR_INVALID, "column \"%s\" is not in the table schema",
                                child_path(path, field_name(from->children[c]), buf));
    TL_TRY(tl_array_init(out, 1, to->n_children, err));
    out->length = src->len;
    TL_TRY(set_validity(out, src->len, &(picker){.a = src->a, .start = src->start}, err));
    for (int64_t c = 0; c < to->n_children; c++) {
        const struct ArrowSchema *tc = to->children[c];
        child_path(path, field_name(tc), buf);
        int i = find_child(from, field_name(tc));
        if (i < 0 && !(tc->flags & ARROW_FLAG_NULLABLE))
            return tl_error_set(err, TL_ERR_INVALID, "required column \"%s\" is missing", buf);
        if (i < 0) {
            TL_TRY(nulls(tc, src->len, depth + 1, out->children[c], err));
            continue;
        }
        span kid = {from->children[i], src->a->children[i], src->a->offset + src->start, src->len};
        TL_TRY(cast_span(&kid, tc, buf, depth + 1, out->children[c], err));
        TL_TRY(check_required(tc, out->children[c], out, false, buf, err));
    }
    return TL_OK;
}

/* Source rows [start, start + len) of a list, large list, fixed-size list or
 * map as int32 offsets from 0, and the child range they cover. */
static tl_status list_offsets(const span *src, kind k, struct ArrowArray *out, int64_t *first,
                              int64_t *count, const char *path, tl_error *err)
{
    int32_t *offs = tl_buffer_alloc(out, 1, (size_t)(src->len + 1) * 4);
    if (offs == NULL) return tl_error_nomem(err);
    int64_t width = 0;
    if (k == K_FIXED_LIST) width = atoll(src->s->format + 3);
    int64_t base = k == K_FIXED_LIST ? (src->a->offset + src->start) * width
                                     : (src->len ? list_offset(src->a, k, src->start) : 0);
    for (int64_t r = 0; r <= src->len; r++) {
        int64_t o = k == K_FIXED_LIST ? r * width : list_offset(src->a, k, src->start + r) - base;
        if (o < 0 || o > INT32_MAX || (r > 0 && o < offs[r - 1]))
            return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": bad list offsets", path);
        offs[r] = (int32_t)o;
    }
    *first = base;
    *count = offs[src->len];
    return TL_OK;
}

static tl_status cast_list(const span *src, kind from_kind, const struct ArrowSchema *to,
                           const char *path, int depth, struct ArrowArray *out, tl_error *err)
{
    bool map = kind_of(to) == K_MAP;
    TL_TRY(tl_array_init(out, 2, 1, err));
    out->length = src->len;
    TL_TRY(set_validity(out, src->len, &(picker){.a = src->a, .start = src->start}, err));
    int64_t first = 0, count = 0;
    TL_TRY(list_offsets(src, from_kind, out, &first, &count, path, err));
    const struct ArrowArray *ca = src->a->children[0];
    if (first < 0 || first + count > ca->length)
        return tl_error_set(err, TL_ERR_INVALID,
                            "column \"%s\": list offsets pass the end of "
                            "its values",
                            path);
    span kid = {src->s->children[0], ca, first, count};
    const struct ArrowSchema *tc = to->children[0];
    char buf[PATH_MAX_LEN];
    if (!map) {
        child_path(path, "element", buf);
        TL_TRY(cast_span(&kid, tc, buf, depth + 1, out->children[0], err));
        return check_required(tc, out->children[0], out, true, buf, err);
    }
    /* A map's entries: key and value by position, whatever their names. */
    const struct ArrowSchema *fe = kid.s;
    if (kind_of(fe) != K_STRUCT || fe->n_children != 2 || tc->n_children != 2 ||
        ca->n_children != 2)
        return tl_error_set(err, TL_ERR_INVALID,
                            "column \"%s\": a map needs entries of a key "
                            "and a value",
                            path);
    struct ArrowArray *entries = out->children[0];
    TL_TRY(tl_array_init(entries, 1, 2, err));
    entries->length = count;
    static const char *const names[] = {"key", "value"};
    for (int c = 0; c < 2; c++) {
        child_path(path, names[c], buf);
        span e = {fe->children[c], ca->children[c], ca->offset + first, count};
        TL_TRY(cast_span(&e, tc->children[c], buf, depth + 1, entries->children[c], err));
        if (c == 0 && entries->children[0]->null_count != 0)
            return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": a map key is null", buf);
        TL_TRY(check_required(tc->children[c], entries->children[c], entries, false, buf, err));
    }
    return TL_OK;
}

static tl_status cast_span(const span *src, const struct ArrowSchema *to, const char *path,
                           int depth, struct ArrowArray *out, tl_error *err)
{
    if (depth > MAX_DEPTH)
        return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": types nested more than %d deep",
                            path, MAX_DEPTH);
    kind fk = kind_of(src->s), tk = kind_of(to);
    if (tk == K_LEAF) {
        if (fk != K_LEAF && fk != K_NULL)
            return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": cannot cast %s to %s", path,
                                kind_name(fk), to->format);
        return cast_leaf(src, to, path, out, err);
    }
    if (fk == K_NULL) return nulls(to, src->len, depth, out, err);
    bool fits = fk == tk || (tk == K_LIST && (fk == K_LARGE_LIST || fk == K_FIXED_LIST));
    if (!fits)
        return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": cannot cast %s to %s", path,
                            kind_name(fk), kind_name(tk));
    TL_TRY(check_shape(src->s, src->a, fk, path, err));
    if (src->start < 0 || src->len < 0 || src->start + src->len > src->a->length)
        return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": rows out of range", path);
    if (tk == K_STRUCT) return cast_struct(src, to, path, depth, out, err);
    if (tk == K_LIST || tk == K_MAP) return cast_list(src, fk, to, path, depth, out, err);
    return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": %s is not a storage type", path,
                        kind_name(tk));
}

tl_status tl_arrow_cast_nested(const struct ArrowSchema *from, const struct ArrowArray *src,
                               const struct ArrowSchema *to, const char *path,
                               struct ArrowArray *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    span sp = {from, src, 0, src->length};
    tl_status st = cast_span(&sp, to, path, 0, out, err);
    if (st != TL_OK) tl_array_release(out);
    return st;
}
