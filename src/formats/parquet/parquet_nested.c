#include "formats/parquet/parquet_nested.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/grow.h"

/* Deeper nesting than this is refused (DuckDB's own limit is lower). */
#define MAX_DEPTH 64

typedef enum node_kind { N_LEAF, N_STRUCT, N_LIST, N_MAP, N_UNION } node_kind;

/* Where a leaf's values come from. */
typedef enum leaf_src {
    SRC_PLAIN,    /* the leaf array itself */
    SRC_ENUM,     /* its dictionary, indexed by the array's indices */
    SRC_INTERVAL, /* month_day_nano values, checked and converted by the column writer */
    SRC_TAG       /* a union's member names, indexed by the member of each row */
} leaf_src;

typedef struct node {
    node_kind kind;
    leaf_src src;
    bool nullable;
    int16_t rep; /* of a list's or map's elements */
    const struct ArrowSchema *schema;
    struct node *children;
    size_t n_children;
    size_t leaf, leaf_end; /* leaves [leaf, leaf_end) are under this node */
    int offset_width;      /* lists: 4 or 8 bytes; 0 for a fixed-size list */
    int32_t fixed_n;
    bool dense;          /* unions */
    int8_t member[128];  /* unions: member of each type code, or -1 */
    tl_array_view names; /* unions: the member names, for the tag leaf */
} node;

struct tl_pq_nested {
    tl_arena arena;
    node root;
    tl_pq_schema_element *elems;
    size_t n_elems, elems_cap;
    tl_pq_column_desc *leaves;
    size_t n_leaves, leaves_cap;
    tl_pq_leaf_levels *levels;
    tl_array_view *views; /* per leaf, of the last shredded array */
    bool *live;
    const node **leaf_nodes;
};

bool tl_pq_field_is_nested(const struct ArrowSchema *field)
{
    const char *f = field->format ? field->format : "";
    return field->dictionary != NULL || f[0] == '+' || strcmp(f, "tin") == 0;
}

/* ---- Schema ---- */

static tl_status add_elem(tl_pq_nested *n, size_t *at, tl_error *err)
{
    if (TL_GROW(n->elems, n->elems_cap, n->n_elems + 1, 8) != 0) return tl_error_nomem(err);
    *at = n->n_elems++;
    memset(&n->elems[*at], 0, sizeof n->elems[*at]);
    return TL_OK;
}

static tl_status add_group(tl_pq_nested *n, const char *name, int32_t repetition, size_t *at,
                           tl_error *err)
{
    TL_TRY(add_elem(n, at, err));
    tl_pq_schema_element *e = &n->elems[*at];
    e->name = name;
    e->has_repetition = true;
    e->repetition = repetition;
    return TL_OK;
}

typedef struct build_ctx {
    const char *path[MAX_DEPTH];
    int depth;
    int16_t def, rep; /* levels of the parent */
} build_ctx;

static char *dotted_path(tl_pq_nested *n, const build_ctx *c)
{
    size_t len = 1;
    for (int i = 0; i < c->depth; i++) len += strlen(c->path[i]) + 1;
    char *s = tl_arena_alloc(&n->arena, len);
    if (s == NULL) return NULL;
    s[0] = 0;
    for (int i = 0; i < c->depth; i++) {
        if (i) strcat(s, ".");
        strcat(s, c->path[i]);
    }
    return s;
}

static tl_status leaf_desc(node *nd, const struct ArrowSchema *f, tl_pq_column_desc *d,
                           tl_error *err)
{
    if (nd->src == SRC_INTERVAL) {
        memset(d, 0, sizeof *d);
        d->elem.has_type = true;
        d->elem.type = TL_PQ_FIXED_LEN_BYTE_ARRAY;
        d->elem.type_length = 12;
        d->elem.has_converted = true;
        d->elem.converted = TL_PQ_CT_INTERVAL;
        d->conv = TL_PQ_CONV_INTERVAL;
        d->phys_width = 12;
        d->order = TL_PQ_ORDER_NONE;
        return TL_OK;
    }
    if (nd->src == SRC_TAG) {
        struct ArrowSchema s = {.format = "u", .name = "tag"};
        return tl_pq_column_from_arrow(&s, d, err);
    }
    const struct ArrowSchema *values = nd->src == SRC_ENUM ? f->dictionary : f;
    if (nd->src == SRC_ENUM && (values->dictionary || !values->format ||
                                (strcmp(values->format, "u") && strcmp(values->format, "U"))))
        return tl_error_set(err, TL_ERR_INVALID, "dictionary of %s values cannot be written",
                            values->format ? values->format : "unknown");
    return tl_pq_column_from_arrow(values, d, err);
}

static tl_status build_leaf(tl_pq_nested *n, node *nd, const struct ArrowSchema *f,
                            const char *name, build_ctx *c, tl_error *err)
{
    if (TL_GROW(n->leaves, n->leaves_cap, n->n_leaves + 1, 4) != 0) return tl_error_nomem(err);
    char *path = dotted_path(n, c);
    if (path == NULL) return tl_error_nomem(err);
    tl_pq_column_desc *d = &n->leaves[n->n_leaves];
    tl_status st = leaf_desc(nd, f, d, err);
    if (st != TL_OK) return tl_error_prefix(err, "column \"%s\"", path);
    d->name = path;
    d->nullable = nd->nullable;
    d->elem.name = name;
    d->elem.has_repetition = true;
    d->elem.repetition = nd->nullable ? TL_PQ_OPTIONAL : TL_PQ_REQUIRED;
    d->elem.has_field_id = nd->src != SRC_TAG && tl_schema_field_id(f, &d->elem.field_id);
    d->levels = true;
    d->max_def = (int16_t)(c->def + nd->nullable);
    d->max_rep = c->rep;
    d->path = tl_arena_calloc(&n->arena, (size_t)c->depth, sizeof *d->path);
    if (d->path == NULL) return tl_error_nomem(err);
    for (int i = 0; i < c->depth; i++) d->path[i] = c->path[i];
    d->n_path = (size_t)c->depth;
    size_t at = 0;
    TL_TRY(add_elem(n, &at, err));
    n->elems[at] = d->elem;
    nd->leaf = n->n_leaves++;
    nd->leaf_end = n->n_leaves;
    return TL_OK;
}

static tl_status build(tl_pq_nested *n, node *nd, const struct ArrowSchema *f, const char *name,
                       bool nullable, build_ctx *c, tl_error *err);

static tl_status build_children(tl_pq_nested *n, node *nd, const struct ArrowSchema *f,
                                bool force_nullable, build_ctx *c, tl_error *err)
{
    size_t first = nd->kind == N_UNION; /* a union's tag comes first */
    for (int64_t i = 0; i < f->n_children; i++) {
        const struct ArrowSchema *ch = f->children[i];
        bool nullable = force_nullable || (ch->flags & ARROW_FLAG_NULLABLE);
        const char *nm = ch->name && ch->name[0] ? ch->name : "f";
        TL_TRY(build(n, &nd->children[first + (size_t)i], ch, nm, nullable, c, err));
    }
    return TL_OK;
}

static tl_status build_group(tl_pq_nested *n, node *nd, const struct ArrowSchema *f,
                             const char *name, build_ctx *c, tl_error *err)
{
    size_t at = 0;
    TL_TRY(add_group(n, name, nd->nullable ? TL_PQ_OPTIONAL : TL_PQ_REQUIRED, &at, err));
    bool is_union = nd->kind == N_UNION;
    nd->n_children = (size_t)f->n_children + is_union;
    n->elems[at].num_children = (int32_t)nd->n_children;
    nd->children = tl_arena_calloc(&n->arena, nd->n_children ? nd->n_children : 1, sizeof(node));
    if (nd->children == NULL) return tl_error_nomem(err);
    build_ctx inner = *c;
    inner.def = (int16_t)(c->def + nd->nullable);
    if (is_union) {
        node *tag = &nd->children[0];
        tag->kind = N_LEAF;
        tag->src = SRC_TAG;
        tag->schema = f;
        if (inner.depth == MAX_DEPTH)
            return tl_error_set(err, TL_ERR_INVALID, "nested deeper than %d levels", MAX_DEPTH);
        inner.path[inner.depth++] = "tag";
        TL_TRY(build_leaf(n, tag, f, "tag", &inner, err));
        inner.depth--;
    }
    return build_children(n, nd, f, is_union, &inner, err);
}

/* LIST: <name> (LIST) { repeated group list { <element> } }; MAP: <name> (MAP) {
 * repeated group key_value { required key; value } }. */
static tl_status build_repeated(tl_pq_nested *n, node *nd, const struct ArrowSchema *f,
                                const char *name, build_ctx *c, tl_error *err)
{
    bool map = nd->kind == N_MAP;
    if (f->n_children != 1)
        return tl_error_set(err, TL_ERR_INVALID, "a list type needs one child, not %lld",
                            (long long)f->n_children);
    const struct ArrowSchema *ch = f->children[0];
    if (map && ch->n_children != 2)
        return tl_error_set(err, TL_ERR_INVALID, "a map's entries need a key and a value");
    size_t at = 0, rep_at = 0;
    TL_TRY(add_group(n, name, nd->nullable ? TL_PQ_OPTIONAL : TL_PQ_REQUIRED, &at, err));
    n->elems[at].num_children = 1;
    n->elems[at].has_converted = true;
    n->elems[at].converted = map ? TL_PQ_CT_MAP : TL_PQ_CT_LIST;
    n->elems[at].logical.kind = map ? TL_PQ_LT_MAP : TL_PQ_LT_LIST;
    TL_TRY(add_group(n, map ? "key_value" : "list", TL_PQ_REPEATED, &rep_at, err));
    n->elems[rep_at].num_children = map ? 2 : 1;
    nd->n_children = map ? 2 : 1;
    nd->children = tl_arena_calloc(&n->arena, 2, sizeof(node));
    if (nd->children == NULL) return tl_error_nomem(err);
    build_ctx inner = *c;
    inner.def = (int16_t)(c->def + nd->nullable + 1);
    inner.rep = (int16_t)(c->rep + 1);
    nd->rep = inner.rep;
    if (!map)
        return build(n, &nd->children[0], ch, "element", ch->flags & ARROW_FLAG_NULLABLE, &inner,
                     err);
    TL_TRY(build(n, &nd->children[0], ch->children[0], "key", false, &inner, err));
    return build(n, &nd->children[1], ch->children[1], "value",
                 ch->children[1]->flags & ARROW_FLAG_NULLABLE, &inner, err);
}

static tl_status union_codes(node *nd, const struct ArrowSchema *f, tl_error *err)
{
    memset(nd->member, -1, sizeof nd->member);
    nd->dense = f->format[2] == 'd';
    const char *p = f->format + 4;
    for (int64_t i = 0; i < f->n_children; i++) {
        char *end;
        long code = strtol(p, &end, 10);
        if (end == p || code < 0 || code > 127)
            return tl_error_set(err, TL_ERR_INVALID, "bad union format \"%s\"", f->format);
        nd->member[code] = (int8_t)i;
        p = *end == ',' ? end + 1 : end;
        const char *nm = f->children[i]->name;
        if (nm && strcmp(nm, "tag") == 0)
            return tl_error_set(err, TL_ERR_INVALID,
                                "a union member named \"tag\" collides with the Parquet group's "
                                "tag field; rename the member in the query");
    }
    return TL_OK;
}

static tl_status names_view(tl_pq_nested *n, node *nd, const struct ArrowSchema *f, tl_error *err)
{
    size_t total = 0, k = (size_t)f->n_children;
    for (size_t i = 0; i < k; i++)
        total += strlen(f->children[i]->name ? f->children[i]->name : "");
    int32_t *offsets = tl_arena_calloc(&n->arena, k + 1, sizeof *offsets);
    char *data = tl_arena_alloc(&n->arena, total + 1);
    if (offsets == NULL || data == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < k; i++) {
        const char *nm = f->children[i]->name ? f->children[i]->name : "";
        memcpy(data + offsets[i], nm, strlen(nm));
        offsets[i + 1] = offsets[i] + (int32_t)strlen(nm);
    }
    nd->names = (tl_array_view){.length = (int64_t)k, .values = offsets, .data = (uint8_t *)data};
    nd->names.type.id = TL_ATYPE_STRING;
    return TL_OK;
}

static tl_status build(tl_pq_nested *n, node *nd, const struct ArrowSchema *f, const char *name,
                       bool nullable, build_ctx *c, tl_error *err)
{
    if (c->depth == MAX_DEPTH)
        return tl_error_set(err, TL_ERR_INVALID, "nested deeper than %d levels", MAX_DEPTH);
    c->path[c->depth++] = name;
    const char *fmt = f->format ? f->format : "";
    nd->schema = f;
    nd->nullable = nullable;
    nd->leaf = n->n_leaves;
    size_t first = n->n_elems;
    tl_status st;
    if (f->dictionary) {
        nd->src = SRC_ENUM;
        st = build_leaf(n, nd, f, name, c, err);
    } else if (strcmp(fmt, "tin") == 0) {
        nd->src = SRC_INTERVAL;
        st = build_leaf(n, nd, f, name, c, err);
    } else if (strcmp(fmt, "+s") == 0) {
        nd->kind = N_STRUCT;
        st = f->n_children > 0 ? build_group(n, nd, f, name, c, err)
                               : tl_error_set(err, TL_ERR_INVALID, "a struct has no fields");
    } else if (strcmp(fmt, "+l") == 0 || strcmp(fmt, "+L") == 0 || strncmp(fmt, "+w:", 3) == 0) {
        nd->kind = N_LIST;
        nd->offset_width = fmt[1] == 'l' ? 4 : fmt[1] == 'L' ? 8 : 0;
        nd->fixed_n = fmt[1] == 'w' ? (int32_t)atoi(fmt + 3) : 0;
        st = build_repeated(n, nd, f, name, c, err);
    } else if (strcmp(fmt, "+m") == 0) {
        nd->kind = N_MAP;
        nd->offset_width = 4;
        st = build_repeated(n, nd, f, name, c, err);
    } else if (strncmp(fmt, "+us:", 4) == 0 || strncmp(fmt, "+ud:", 4) == 0) {
        nd->kind = N_UNION;
        st = union_codes(nd, f, err);
        if (st == TL_OK) st = names_view(n, nd, f, err);
        if (st == TL_OK) st = build_group(n, nd, f, name, c, err);
    } else {
        nd->src = SRC_PLAIN;
        st = build_leaf(n, nd, f, name, c, err);
    }
    nd->leaf_end = n->n_leaves;
    c->depth--;
    /* The element of the field itself: the first one it added. */
    if (st == TL_OK && first < n->n_elems)
        n->elems[first].has_field_id = tl_schema_field_id(f, &n->elems[first].field_id);
    return st;
}

static void index_leaves(tl_pq_nested *n, const node *nd)
{
    if (nd->kind == N_LEAF) n->leaf_nodes[nd->leaf] = nd;
    for (size_t i = 0; i < nd->n_children; i++) index_leaves(n, &nd->children[i]);
}

tl_status tl_pq_nested_new(const struct ArrowSchema *field, tl_pq_nested **out, tl_error *err)
{
    *out = NULL;
    tl_pq_nested *n = calloc(1, sizeof *n);
    if (n == NULL) return tl_error_nomem(err);
    build_ctx c = {.depth = 0};
    const char *name = field->name ? field->name : "";
    tl_status st = build(n, &n->root, field, name, field->flags & ARROW_FLAG_NULLABLE, &c, err);
    if (st == TL_OK && n->n_leaves == 0)
        st = tl_error_set(err, TL_ERR_INVALID, "column \"%s\" has no values to write", name);
    if (st == TL_OK) {
        n->levels = calloc(n->n_leaves, sizeof *n->levels);
        n->views = calloc(n->n_leaves, sizeof *n->views);
        n->live = calloc(n->n_leaves, sizeof *n->live);
        n->leaf_nodes = calloc(n->n_leaves, sizeof *n->leaf_nodes);
        if (!n->levels || !n->views || !n->live || !n->leaf_nodes) st = tl_error_nomem(err);
    }
    if (st != TL_OK) {
        tl_pq_nested_free(n);
        /* Leaves' errors name their path; others name the column. */
        if (err && strncmp(err->message, "column \"", 8) != 0)
            tl_error_prefix(err, "column \"%s\"", name);
        return st;
    }
    index_leaves(n, &n->root);
    *out = n;
    return TL_OK;
}

void tl_pq_nested_release(tl_pq_nested *n)
{
    for (size_t i = 0; n->live && i < n->n_leaves; i++)
        if (n->live[i]) {
            tl_array_view_free(&n->views[i]);
            n->live[i] = false;
        }
}

void tl_pq_nested_free(tl_pq_nested *n)
{
    if (n == NULL) return;
    tl_pq_nested_release(n);
    for (size_t i = 0; n->levels && i < n->n_leaves; i++) {
        free(n->levels[i].def);
        free(n->levels[i].rep);
        free(n->levels[i].slots);
    }
    free(n->levels);
    free(n->views);
    free(n->live);
    free(n->leaf_nodes);
    free(n->elems);
    free(n->leaves);
    tl_arena_free(&n->arena);
    free(n);
}

const tl_pq_schema_element *tl_pq_nested_elements(tl_pq_nested *n, size_t *count)
{
    *count = n->n_elems;
    return n->elems;
}

size_t tl_pq_nested_n_leaves(const tl_pq_nested *n)
{
    return n->n_leaves;
}

const tl_pq_column_desc *tl_pq_nested_leaf(const tl_pq_nested *n, size_t i)
{
    return &n->leaves[i];
}

tl_pq_leaf_levels *tl_pq_nested_levels(tl_pq_nested *n, size_t leaf)
{
    return &n->levels[leaf];
}

/* ---- Binding an array: checked once per batch ---- */

static tl_status bind(tl_pq_nested *n, const node *nd, const struct ArrowArray *a, tl_error *err)
{
    const struct ArrowSchema *f = nd->schema;
    int64_t want_buffers = 1;
    if (nd->kind == N_LIST || nd->kind == N_MAP) want_buffers = nd->offset_width ? 2 : 1;
    if (nd->kind == N_UNION) want_buffers = nd->dense ? 2 : 1;
    if (nd->kind != N_LEAF) {
        if (a->n_children != f->n_children || a->n_buffers != want_buffers || a->length < 0 ||
            a->offset < 0)
            return tl_error_set(err, TL_ERR_INVALID, "array does not match its %s type", f->format);
        for (int64_t i = 0; i < a->n_children; i++)
            if (a->children[i] == NULL)
                return tl_error_set(err, TL_ERR_INVALID, "array misses a child");
    }
    switch (nd->kind) {
    case N_STRUCT:
        for (size_t i = 0; i < nd->n_children; i++)
            TL_TRY(bind(n, &nd->children[i], a->children[i], err));
        return TL_OK;
    case N_UNION:
        for (size_t i = 1; i < nd->n_children; i++)
            TL_TRY(bind(n, &nd->children[i], a->children[i - 1], err));
        n->views[nd->children[0].leaf] = nd->names;
        return TL_OK;
    case N_LIST:
        return bind(n, &nd->children[0], a->children[0], err);
    case N_MAP: {
        const struct ArrowArray *e = a->children[0];
        if (e->n_children != 2 || e->children[0] == NULL || e->children[1] == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "map entries need a key and a value");
        TL_TRY(bind(n, &nd->children[0], e->children[0], err));
        return bind(n, &nd->children[1], e->children[1], err);
    }
    case N_LEAF:
        break;
    }
    tl_array_view *v = &n->views[nd->leaf];
    if (nd->src == SRC_INTERVAL) {
        if (a->n_buffers != 2 || a->length < 0 || a->offset < 0 ||
            (a->length > 0 && a->buffers[1] == NULL))
            return tl_error_set(err, TL_ERR_INVALID, "interval array has no values");
        *v = (tl_array_view){.length = a->length, .offset = a->offset, .values = a->buffers[1]};
        return TL_OK;
    }
    TL_TRY(tl_array_view_init(v, f, a, err));
    n->live[nd->leaf] = true;
    return TL_OK;
}

/* ---- Shredding ---- */

typedef struct shred_ctx {
    tl_pq_nested *n;
    int64_t row; /* of the row being shredded, for errors */
    tl_error *err;
} shred_ctx;

static int push(tl_pq_leaf_levels *l, uint32_t def, uint32_t rep)
{
    if (l->n == l->cap) {
        size_t cap = tl_grow_capacity(l->cap, l->n + 1, sizeof *l->def, 1024);
        if (cap == 0 || tl_realloc_array(&l->def, cap, sizeof *l->def) != 0 ||
            tl_realloc_array(&l->rep, cap, sizeof *l->rep) != 0)
            return -1;
        l->cap = cap;
    }
    l->def[l->n] = def;
    l->rep[l->n++] = rep;
    return 0;
}

static int push_value(tl_pq_leaf_levels *l, uint32_t def, uint32_t rep, int64_t slot)
{
    if (TL_GROW(l->slots, l->slots_cap, l->n_slots + 1, 1024) != 0) return -1;
    l->slots[l->n_slots++] = slot;
    return push(l, def, rep);
}

/* Every leaf under nd gets an entry that stops at def. */
static tl_status absent(shred_ctx *c, const node *nd, int def, int rep)
{
    for (size_t i = nd->leaf; i < nd->leaf_end; i++)
        if (push(&c->n->levels[i], (uint32_t)def, (uint32_t)rep) != 0)
            return tl_error_nomem(c->err);
    return TL_OK;
}

static const char *column_name(const shred_ctx *c)
{
    return c->n->leaves[0].path[0];
}

static bool is_null(const struct ArrowArray *a, int64_t i)
{
    const uint8_t *valid = a->n_buffers > 0 ? a->buffers[0] : NULL;
    return a->null_count != 0 && valid != NULL && !tl_bit_get(valid, a->offset + i);
}

static tl_status check_interval(shred_ctx *c, const node *nd, const struct ArrowArray *a, int64_t i)
{
    const uint8_t *x = (const uint8_t *)a->buffers[1] + (size_t)(a->offset + i) * 16;
    int32_t months, days;
    int64_t nanos;
    memcpy(&months, x, 4);
    memcpy(&days, x + 4, 4);
    memcpy(&nanos, x + 8, 8);
    if (months >= 0 && days >= 0 && nanos >= 0 && nanos % 1000000 == 0 &&
        nanos / 1000000 <= (int64_t)UINT32_MAX)
        return TL_OK;
    return tl_error_set(c->err, TL_ERR_INVALID,
                        "column \"%s\", row %lld: the interval of %d months, %d days and %lld "
                        "microseconds cannot be written to Parquet, whose INTERVAL holds "
                        "months, days and milliseconds, none negative; round it to "
                        "milliseconds or cast it (col::VARCHAR) in the query",
                        c->n->leaves[nd->leaf].name, (long long)c->row, months, days,
                        (long long)(nanos / 1000));
}

static int64_t enum_index(const tl_array_view *v, int64_t i)
{
    int64_t j = v->offset + i;
    switch (v->index_type.id) {
    case TL_ATYPE_UINT8:
        return ((const uint8_t *)v->values)[j];
    case TL_ATYPE_UINT16:
        return ((const uint16_t *)v->values)[j];
    case TL_ATYPE_UINT32:
        return ((const uint32_t *)v->values)[j];
    case TL_ATYPE_INT8:
        return ((const int8_t *)v->values)[j];
    case TL_ATYPE_INT16:
        return ((const int16_t *)v->values)[j];
    case TL_ATYPE_INT32:
        return ((const int32_t *)v->values)[j];
    default:
        return ((const int64_t *)v->values)[j];
    }
}

static tl_status emit_leaf(shred_ctx *c, const node *nd, const struct ArrowArray *a, int64_t i,
                           int def, int rep)
{
    tl_pq_leaf_levels *l = &c->n->levels[nd->leaf];
    if (nd->src != SRC_TAG && is_null(a, i)) {
        if (!nd->nullable)
            return tl_error_set(c->err, TL_ERR_INVALID,
                                "column \"%s\", row %lld: a null where "
                                "Parquet requires a value (a map key?)",
                                c->n->leaves[nd->leaf].name, (long long)c->row);
        return push(l, (uint32_t)def, (uint32_t)rep) ? tl_error_nomem(c->err) : TL_OK;
    }
    int64_t slot = i;
    if (nd->src == SRC_INTERVAL) TL_TRY(check_interval(c, nd, a, i));
    if (nd->src == SRC_ENUM) {
        const tl_array_view *v = &c->n->views[nd->leaf];
        slot = enum_index(v, i);
        if (slot < 0 || slot >= v->dictionary->length)
            return tl_error_set(c->err, TL_ERR_INVALID,
                                "column \"%s\", row %lld: dictionary index %lld out of range",
                                c->n->leaves[nd->leaf].name, (long long)c->row, (long long)slot);
    }
    if (push_value(l, (uint32_t)(def + nd->nullable), (uint32_t)rep, slot) != 0)
        return tl_error_nomem(c->err);
    return TL_OK;
}

static tl_status emit(shred_ctx *c, const node *nd, const struct ArrowArray *a, int64_t i, int def,
                      int rep);

static tl_status list_range(shred_ctx *c, const node *nd, const struct ArrowArray *a, int64_t i,
                            int64_t *start, int64_t *end)
{
    int64_t j = a->offset + i;
    if (nd->offset_width == 4) {
        *start = ((const int32_t *)a->buffers[1])[j];
        *end = ((const int32_t *)a->buffers[1])[j + 1];
    } else if (nd->offset_width == 8) {
        *start = ((const int64_t *)a->buffers[1])[j];
        *end = ((const int64_t *)a->buffers[1])[j + 1];
    } else {
        *start = j * nd->fixed_n;
        *end = *start + nd->fixed_n;
    }
    if (*start < 0 || *end < *start || *end > a->children[0]->length)
        return tl_error_set(c->err, TL_ERR_INVALID,
                            "column \"%s\", row %lld: list offsets out "
                            "of range",
                            column_name(c), (long long)c->row);
    return TL_OK;
}

static tl_status emit_repeated(shred_ctx *c, const node *nd, const struct ArrowArray *a, int64_t i,
                               int def, int rep)
{
    int64_t start, end;
    TL_TRY(list_range(c, nd, a, i, &start, &end));
    if (start == end) return absent(c, nd, def, rep);
    const struct ArrowArray *e = a->children[0];
    for (int64_t k = start; k < end; k++) {
        int r = k == start ? rep : nd->rep;
        if (nd->kind == N_LIST) {
            TL_TRY(emit(c, &nd->children[0], e, k, def + 1, r));
        } else {
            TL_TRY(emit(c, &nd->children[0], e->children[0], e->offset + k, def + 1, r));
            TL_TRY(emit(c, &nd->children[1], e->children[1], e->offset + k, def + 1, r));
        }
    }
    return TL_OK;
}

/* The member (child index) and its element that element i of a union holds. */
static tl_status union_member(shred_ctx *c, const node *nd, const struct ArrowArray *a, int64_t i,
                              int *m, int64_t *at)
{
    int64_t j = a->offset + i;
    int8_t code = ((const int8_t *)a->buffers[0])[j];
    *m = code >= 0 ? nd->member[code] : -1;
    *at = nd->dense ? ((const int32_t *)a->buffers[1])[j] : j;
    if (*m < 0 || *at < 0 || *at >= a->children[*m]->length)
        return tl_error_set(c->err, TL_ERR_INVALID,
                            "column \"%s\", row %lld: bad union type code %d or offset",
                            column_name(c), (long long)c->row, code);
    return TL_OK;
}

static bool is_null(const struct ArrowArray *a, int64_t i);

/* A union has no validity bitmap: it is null where its member's value is. */
static bool union_is_null(const node *nd, const struct ArrowArray *a, int m, int64_t at)
{
    return nd->children[m + 1].kind != N_UNION && is_null(a->children[m], at);
}

static tl_status emit_union(shred_ctx *c, const node *nd, const struct ArrowArray *a, int64_t i,
                            int def, int rep)
{
    int m;
    int64_t at;
    TL_TRY(union_member(c, nd, a, i, &m, &at));
    if (push_value(&c->n->levels[nd->children[0].leaf], (uint32_t)def, (uint32_t)rep, m) != 0)
        return tl_error_nomem(c->err);
    for (size_t k = 1; k < nd->n_children; k++) {
        if ((int)k - 1 == m)
            TL_TRY(emit(c, &nd->children[k], a->children[m], at, def, rep));
        else
            TL_TRY(absent(c, &nd->children[k], def, rep));
    }
    return TL_OK;
}

/* Entries of element i of array a (of node nd) reached with def levels present. */
static tl_status emit(shred_ctx *c, const node *nd, const struct ArrowArray *a, int64_t i, int def,
                      int rep)
{
    if (nd->kind == N_LEAF) return emit_leaf(c, nd, a, i, def, rep);
    bool null;
    if (nd->kind == N_UNION) {
        int m;
        int64_t at;
        TL_TRY(union_member(c, nd, a, i, &m, &at));
        null = union_is_null(nd, a, m, at);
    } else {
        null = is_null(a, i);
    }
    if (null) {
        if (!nd->nullable)
            return tl_error_set(c->err, TL_ERR_INVALID,
                                "column \"%s\", row %lld: a null in a "
                                "required group",
                                column_name(c), (long long)c->row);
        return absent(c, nd, def, rep);
    }
    def += nd->nullable;
    switch (nd->kind) {
    case N_STRUCT:
        for (size_t k = 0; k < nd->n_children; k++)
            TL_TRY(emit(c, &nd->children[k], a->children[k], a->offset + i, def, rep));
        return TL_OK;
    case N_LIST:
    case N_MAP:
        return emit_repeated(c, nd, a, i, def, rep);
    case N_UNION:
        return emit_union(c, nd, a, i, def, rep);
    default:
        return TL_OK;
    }
}

tl_status tl_pq_nested_shred(tl_pq_nested *n, const struct ArrowArray *column, int64_t start,
                             int64_t count, int64_t first_row, tl_error *err)
{
    tl_pq_nested_release(n);
    for (size_t i = 0; i < n->n_leaves; i++) {
        n->levels[i].n = n->levels[i].n_slots = 0;
        n->levels[i].values = &n->views[i];
    }
    tl_status st = bind(n, &n->root, column, err);
    if (st != TL_OK) return tl_error_prefix(err, "column \"%s\"", n->leaves[0].path[0]);
    for (size_t i = 0; i < n->n_leaves; i++)
        if (n->leaf_nodes[i]->src == SRC_ENUM) n->levels[i].values = n->views[i].dictionary;
    if (start < 0 || start + count > column->length)
        return tl_error_set(err, TL_ERR_INVALID, "column \"%s\" has %lld rows, not %lld",
                            n->leaves[0].path[0], (long long)column->length,
                            (long long)(start + count));
    shred_ctx c = {.n = n, .err = err};
    for (int64_t r = 0; r < count; r++) {
        c.row = first_row + r;
        TL_TRY(emit(&c, &n->root, column, start + r, 0, 0));
    }
    return TL_OK;
}
