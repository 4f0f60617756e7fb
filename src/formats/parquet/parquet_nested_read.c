#include "formats/parquet/parquet_nested_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/buffers.h"
#include "arrow/take.h"
#include "core/grow.h"

#define MAX_DEPTH 64

typedef enum rkind { R_LEAF, R_STRUCT, R_LIST, R_MAP } rkind;

/* A slot of a node is an entry of its first leaf whose repetition level is at
 * most `rep` and whose definition level is at least `slot_def`: one per value
 * of the node (null or not) where its parent is present. The value is not
 * null when the definition level reaches `present_def`. */
struct tl_pq_rnode {
    rkind kind;
    const tl_pq_schema_element *e;
    const char *name;
    bool nullable;
    int16_t slot_def, present_def, rep;
    struct tl_pq_rnode *kids;
    size_t n_kids;
    size_t leaf, leaf_end; /* leaves under it, counted from the column's first */
};

typedef struct parse_ctx {
    tl_arena *arena;
    const tl_pq_schema_element *elems;
    size_t n_elems, at, first_leaf;
    tl_pq_column_desc **leaves;
    size_t *n_leaves, *cap;
    const char *path[MAX_DEPTH + 1];
    int depth;
} parse_ctx;

static bool is_list(const tl_pq_schema_element *e)
{
    return (e->has_converted && e->converted == TL_PQ_CT_LIST) || e->logical.kind == TL_PQ_LT_LIST;
}

static bool is_map(const tl_pq_schema_element *e)
{
    return (e->has_converted &&
            (e->converted == TL_PQ_CT_MAP || e->converted == TL_PQ_CT_MAP_KEY_VALUE)) ||
           e->logical.kind == TL_PQ_LT_MAP;
}

static bool is_leaf(const tl_pq_schema_element *e)
{
    return e->has_type && e->num_children <= 0;
}

static int32_t repetition(const tl_pq_schema_element *e)
{
    return e->has_repetition ? e->repetition : TL_PQ_OPTIONAL;
}

/* Parses the element at c->at into n. slot_def: where n has a slot; base_def:
 * the definition level of its parent's presence (n adds one if optional);
 * self_repeated: n is a legacy list's repeated element (required). */
static tl_status parse(parse_ctx *c, tl_pq_rnode *n, const char *name, int16_t slot_def,
                       int16_t base_def, int16_t rep, bool self_repeated, tl_error *err);

static tl_status add_leaf(parse_ctx *c, tl_pq_rnode *n, tl_error *err)
{
    if (TL_GROW(*c->leaves, *c->cap, *c->n_leaves + 1, 8) != 0) return tl_error_nomem(err);
    tl_pq_column_desc *d = &(*c->leaves)[*c->n_leaves];
    TL_TRY(tl_pq_column_to_arrow(n->e, d, err));
    d->levels = true;
    d->nullable = n->nullable;
    d->max_def = n->present_def;
    d->max_rep = n->rep;
    d->path = tl_arena_calloc(c->arena, (size_t)c->depth, sizeof *d->path);
    if (d->path == NULL) return tl_error_nomem(err);
    for (int i = 0; i < c->depth; i++) d->path[i] = c->path[i];
    d->n_path = (size_t)c->depth;
    d->name = c->path[0];
    n->leaf = *c->n_leaves - c->first_leaf;
    (*c->n_leaves)++;
    return TL_OK;
}

static tl_status alloc_kids(parse_ctx *c, tl_pq_rnode *n, size_t k, tl_error *err)
{
    n->kids = tl_arena_calloc(c->arena, k ? k : 1, sizeof *n->kids);
    n->n_kids = k;
    return n->kids ? TL_OK : tl_error_nomem(err);
}

static tl_status peek(const parse_ctx *c, const tl_pq_schema_element **out, tl_error *err)
{
    if (c->at >= c->n_elems)
        return tl_error_set(err, TL_ERR_INVALID, "the Parquet schema ends inside a group");
    *out = &c->elems[c->at];
    return TL_OK;
}

/* LIST: <list> { repeated group list { <element> } }, or the legacy forms: a
 * repeated leaf, or a repeated group of several fields (or named "array" or
 * "<list>_tuple") that is itself the element. */
static tl_status parse_list(parse_ctx *c, tl_pq_rnode *n, tl_error *err)
{
    const tl_pq_schema_element *r = NULL; /* set by peek; -O3 cannot tell */
    TL_TRY(peek(c, &r, err));
    if (n->e->num_children != 1 || repetition(r) != TL_PQ_REPEATED)
        return tl_error_set(err, TL_ERR_INVALID, "a LIST group needs one repeated child");
    TL_TRY(alloc_kids(c, n, 1, err));
    int16_t def = (int16_t)(n->present_def + 1), rep = (int16_t)(n->rep + 1);
    char tuple[256];
    snprintf(tuple, sizeof tuple, "%s_tuple", n->e->name ? n->e->name : "");
    bool legacy = is_leaf(r) || r->num_children != 1 ||
                  (r->name && (strcmp(r->name, "array") == 0 || strcmp(r->name, tuple) == 0));
    if (!legacy) {
        c->path[c->depth++] = r->name ? r->name : "list";
        c->at++; /* the repeated group stands for the repetition only */
    }
    tl_status st = parse(c, &n->kids[0], "element", def, def, rep, legacy, err);
    if (!legacy) c->depth--;
    return st;
}

static tl_status parse_map(parse_ctx *c, tl_pq_rnode *n, tl_error *err)
{
    const tl_pq_schema_element *r = NULL;
    TL_TRY(peek(c, &r, err));
    if (n->e->num_children != 1 || repetition(r) != TL_PQ_REPEATED || is_leaf(r) ||
        r->num_children != 2)
        return tl_error_set(err, TL_ERR_INVALID,
                            "a MAP group needs one repeated group of a key and a value");
    c->path[c->depth++] = r->name ? r->name : "key_value";
    c->at++;
    TL_TRY(alloc_kids(c, n, 2, err));
    int16_t def = (int16_t)(n->present_def + 1), rep = (int16_t)(n->rep + 1);
    TL_TRY(parse(c, &n->kids[0], "key", def, def, rep, false, err));
    TL_TRY(parse(c, &n->kids[1], "value", def, def, rep, false, err));
    c->depth--;
    return TL_OK;
}

static tl_status parse_struct(parse_ctx *c, tl_pq_rnode *n, tl_error *err)
{
    if (n->e->num_children <= 0) return tl_error_set(err, TL_ERR_INVALID, "a group has no fields");
    TL_TRY(alloc_kids(c, n, (size_t)n->e->num_children, err));
    for (size_t i = 0; i < n->n_kids; i++)
        TL_TRY(parse(c, &n->kids[i], NULL, n->slot_def, n->present_def, n->rep, false, err));
    return TL_OK;
}

static tl_status parse(parse_ctx *c, tl_pq_rnode *n, const char *name, int16_t slot_def,
                       int16_t base_def, int16_t rep, bool self_repeated, tl_error *err)
{
    const tl_pq_schema_element *e = NULL;
    TL_TRY(peek(c, &e, err));
    if (c->depth == MAX_DEPTH)
        return tl_error_set(err, TL_ERR_INVALID, "nested deeper than %d levels", MAX_DEPTH);
    c->at++;
    c->path[c->depth++] = e->name ? e->name : "";
    n->e = e;
    n->name = name ? name : e->name ? e->name : "";
    if (repetition(e) == TL_PQ_REPEATED && !self_repeated)
        return tl_error_set(err, TL_ERR_INVALID,
                            "field \"%s\" is repeated outside a LIST or MAP group", n->name);
    n->nullable = !self_repeated && repetition(e) == TL_PQ_OPTIONAL;
    n->slot_def = slot_def;
    n->present_def = (int16_t)(base_def + n->nullable);
    n->rep = rep;
    n->leaf = *c->n_leaves - c->first_leaf;
    tl_status st;
    if (is_leaf(e)) {
        n->kind = R_LEAF;
        st = add_leaf(c, n, err);
    } else if (e->has_type) {
        st = tl_error_set(err, TL_ERR_INVALID, "a leaf has children");
    } else if (is_list(e)) {
        n->kind = R_LIST;
        st = parse_list(c, n, err);
    } else if (is_map(e)) {
        n->kind = R_MAP;
        st = parse_map(c, n, err);
    } else {
        n->kind = R_STRUCT;
        st = parse_struct(c, n, err);
    }
    n->leaf_end = *c->n_leaves - c->first_leaf;
    c->depth--;
    if (st == TL_OK && n->leaf_end == n->leaf)
        st = tl_error_set(err, TL_ERR_INVALID, "field \"%s\" has no leaf", n->name);
    return st;
}

tl_status tl_pq_rnode_parse(tl_arena *arena, const tl_pq_schema_element *elems, size_t n_elems,
                            size_t *at, tl_pq_rnode **out, tl_pq_column_desc **leaves,
                            size_t *n_leaves, size_t *cap, tl_error *err)
{
    parse_ctx c = {.arena = arena,
                   .elems = elems,
                   .n_elems = n_elems,
                   .at = *at,
                   .first_leaf = *n_leaves,
                   .leaves = leaves,
                   .n_leaves = n_leaves,
                   .cap = cap};
    tl_pq_rnode *n = tl_arena_calloc(arena, 1, sizeof *n);
    if (n == NULL) return tl_error_nomem(err);
    tl_status st = parse(&c, n, NULL, 0, 0, 0, false, err);
    if (st != TL_OK)
        return tl_error_prefix(err, "column \"%s\"", elems[*at].name ? elems[*at].name : "");
    *at = c.at;
    *out = n;
    return TL_OK;
}

size_t tl_pq_rnode_n_leaves(const tl_pq_rnode *n)
{
    return n->leaf_end - n->leaf;
}

/* ---- Arrow schema ---- */

static tl_status set_id(const tl_pq_schema_element *e, struct ArrowSchema *out, tl_error *err)
{
    return e->has_field_id ? tl_schema_set_field_id(out, e->field_id, err) : TL_OK;
}

static tl_status arrow_of(const tl_pq_rnode *n, const tl_pq_column_desc *leaves,
                          struct ArrowSchema *out, tl_error *err)
{
    int64_t flags = n->nullable ? ARROW_FLAG_NULLABLE : 0;
    char format[96];
    switch (n->kind) {
    case R_LEAF:
        tl_arrow_type_format(&leaves[n->leaf].arrow, format, sizeof format);
        TL_TRY(tl_schema_init(out, format, n->name, flags, 0, err));
        break;
    case R_STRUCT:
        TL_TRY(tl_schema_init(out, "+s", n->name, flags, (int64_t)n->n_kids, err));
        for (size_t i = 0; i < n->n_kids; i++)
            TL_TRY(arrow_of(&n->kids[i], leaves, out->children[i], err));
        break;
    case R_LIST:
        TL_TRY(tl_schema_init(out, "+l", n->name, flags, 1, err));
        TL_TRY(arrow_of(&n->kids[0], leaves, out->children[0], err));
        break;
    case R_MAP:
        TL_TRY(tl_schema_init(out, "+m", n->name, flags, 1, err));
        TL_TRY(tl_schema_init(out->children[0], "+s", "entries", 0, 2, err));
        for (int i = 0; i < 2; i++)
            TL_TRY(arrow_of(&n->kids[i], leaves, out->children[0]->children[i], err));
        break;
    }
    return set_id(n->e, out, err);
}

tl_status tl_pq_rnode_arrow(const tl_pq_rnode *n, const tl_pq_column_desc *leaves,
                            struct ArrowSchema *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    tl_status st = arrow_of(n, leaves, out, err);
    if (st != TL_OK) tl_schema_release(out);
    return st;
}

/* ---- Assembly ---- */

typedef struct leaf_in {
    const struct ArrowArray *values;
    const tl_pq_levels *levels;
    const tl_pq_column_desc *desc;
} leaf_in;

static bool is_slot(const tl_pq_rnode *n, const tl_pq_levels *l, int64_t e)
{
    return l->rep[e] <= (uint32_t)n->rep && l->def[e] >= (uint32_t)n->slot_def;
}

static int64_t count_slots(const tl_pq_rnode *n, const tl_pq_levels *l)
{
    int64_t k = 0;
    for (int64_t e = 0; e < l->n; e++) k += is_slot(n, l, e);
    return k;
}

static tl_status set_validity(const tl_pq_rnode *n, const tl_pq_levels *l, int64_t slots,
                              struct ArrowArray *out, tl_error *err)
{
    uint8_t *bits = tl_array_alloc_buffer(out, 0, (size_t)(slots + 7) / 8);
    if (bits == NULL) return tl_error_nomem(err);
    int64_t i = 0;
    for (int64_t e = 0; e < l->n; e++) {
        if (!is_slot(n, l, e)) continue;
        if (l->def[e] >= (uint32_t)n->present_def)
            tl_bit_set(bits, i);
        else
            out->null_count++;
        i++;
    }
    if (out->null_count == 0) tl_array_set_buffer(out, 0, NULL);
    return TL_OK;
}

static tl_status assemble(const tl_pq_rnode *n, const leaf_in *in, int64_t want,
                          struct ArrowArray *out, tl_error *err);

static tl_status assemble_leaf(const tl_pq_rnode *n, const leaf_in *leaf, int64_t slots,
                               struct ArrowArray *out, tl_error *err)
{
    const tl_pq_levels *l = leaf->levels;
    int64_t *idx = malloc((size_t)(slots ? slots : 1) * sizeof *idx);
    if (idx == NULL) return tl_error_nomem(err);
    int64_t i = 0;
    for (int64_t e = 0; e < l->n; e++)
        if (is_slot(n, l, e)) idx[i++] = e;
    tl_array_view v;
    tl_view_of_owned(&leaf->desc->arrow, leaf->values, &v);
    tl_status st = tl_arrow_take(&v, idx, slots, out, err);
    free(idx);
    return st;
}

/* Offsets of a list or map: each slot's elements are the element slots up to
 * the next slot. *elements gets their count. */
static tl_status list_offsets(const tl_pq_rnode *n, const tl_pq_levels *l, int64_t slots,
                              struct ArrowArray *out, int64_t *elements, tl_error *err)
{
    int32_t *offs = tl_array_alloc_buffer(out, 1, (size_t)(slots + 1) * sizeof *offs);
    if (offs == NULL) return tl_error_nomem(err);
    const tl_pq_rnode *kid = &n->kids[0];
    int64_t i = 0, k = 0;
    for (int64_t e = 0; e < l->n; e++) {
        if (is_slot(n, l, e)) offs[i++] = (int32_t)k;
        if (is_slot(kid, l, e)) k++;
        if (k > INT32_MAX)
            return tl_error_set(err, TL_ERR_INVALID, "over 2^31 list elements in a row group");
    }
    offs[slots] = (int32_t)k;
    *elements = k;
    return TL_OK;
}

static tl_status assemble(const tl_pq_rnode *n, const leaf_in *in, int64_t want,
                          struct ArrowArray *out, tl_error *err)
{
    const leaf_in *first = &in[n->leaf];
    int64_t slots = count_slots(n, first->levels);
    if (slots != want)
        return tl_error_set(err, TL_ERR_INVALID,
                            "field \"%s\": its levels give %lld values where %lld are due", n->name,
                            (long long)slots, (long long)want);
    if (n->kind == R_LEAF) return assemble_leaf(n, first, slots, out, err);
    bool list = n->kind != R_STRUCT;
    TL_TRY(tl_array_init(out, list ? 2 : 1, list ? 1 : (int64_t)n->n_kids, err));
    out->length = slots;
    TL_TRY(set_validity(n, first->levels, slots, out, err));
    if (n->kind == R_STRUCT) {
        for (size_t i = 0; i < n->n_kids; i++)
            TL_TRY(assemble(&n->kids[i], in, slots, out->children[i], err));
        return TL_OK;
    }
    int64_t elements = 0;
    TL_TRY(list_offsets(n, first->levels, slots, out, &elements, err));
    if (n->kind == R_LIST) return assemble(&n->kids[0], in, elements, out->children[0], err);
    struct ArrowArray *entries = out->children[0];
    TL_TRY(tl_array_init(entries, 1, 2, err));
    entries->length = elements;
    for (int i = 0; i < 2; i++)
        TL_TRY(assemble(&n->kids[i], in, elements, entries->children[i], err));
    if (entries->children[0]->null_count != 0)
        return tl_error_set(err, TL_ERR_INVALID, "field \"%s\": a map key is null", n->name);
    return TL_OK;
}

tl_status tl_pq_rnode_assemble(const tl_pq_rnode *n, const tl_pq_column_desc *leaves,
                               const struct ArrowArray *values, const tl_pq_levels *levels,
                               int64_t rows, struct ArrowArray *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    size_t k = tl_pq_rnode_n_leaves(n);
    leaf_in *in = calloc(k ? k : 1, sizeof *in);
    if (in == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < k; i++) in[i] = (leaf_in){&values[i], &levels[i], &leaves[i]};
    tl_status st = assemble(n, in, rows, out, err);
    free(in);
    if (st != TL_OK) tl_array_release(out);
    return st;
}
