/* The nested kernels (arrow/nested.h): cast, take, concatenation and nulls of
 * lists, structs and maps, with offsets, nulls at every level and empty lists. */
#include "arrow/nested.h"
#include "test_arrow_helpers.h"
#include "unit.h"

static void field(struct ArrowSchema *s, const char *format, const char *name, int64_t n_children)
{
    tl_error err;
    CHECK_OK(tl_schema_init(s, format, name, ARROW_FLAG_NULLABLE, n_children, &err), &err);
}

static const int32_t *offsets_of(const struct ArrowArray *a)
{
    return (const int32_t *)a->buffers[1];
}

static int64_t value_at(const struct ArrowArray *child, int64_t i)
{
    return ((const int64_t *)child->buffers[1])[i];
}

static bool valid_at(const struct ArrowArray *a, int64_t i)
{
    return a->buffers[0] == NULL || tl_bit_get(a->buffers[0], a->offset + i);
}

/* [[1, null], null, [], [4, 5, 6]] as list<int32>, seen from row 1 (offset 1). */
static void sample(tlist *l)
{
    int32_t offs[] = {0, 1, 3, 3, 3, 6};
    int64_t values[] = {9, 1, 0, 4, 5, 6};
    tlist_make(l, "+l", "i", offs, "..x..", 5, values, "..x...", 6);
    l->array.offset = 1;
    l->array.length = 4;
}

static void test_cast_list_int32_to_int64_rebases_offsets(void)
{
    tlist in, want;
    sample(&in);
    int32_t none[] = {0};
    tlist_make(&want, "+l", "l", none, NULL, 0, NULL, NULL, 0);
    struct ArrowArray out;
    tl_error err;
    CHECK_OK(tl_arrow_cast_nested(&in.schema, &in.array, &want.schema, "l", &out, &err), &err);
    CHECK_INT(out.length, 4);
    CHECK_INT(out.offset, 0);
    CHECK_INT(out.null_count, 1);
    const int32_t *o = offsets_of(&out);
    CHECK(o[0] == 0 && o[1] == 2 && o[2] == 2 && o[3] == 2 && o[4] == 5);
    CHECK(valid_at(&out, 0) && !valid_at(&out, 1) && valid_at(&out, 2) && valid_at(&out, 3));
    const struct ArrowArray *c = out.children[0];
    CHECK_INT(c->length, 5);
    CHECK_INT(c->null_count, 1);
    CHECK_INT(value_at(c, 0), 1);
    CHECK(!valid_at(c, 1));
    CHECK_INT(value_at(c, 4), 6);
    tl_array_release(&out);
    tlist_free(&in);
    tlist_free(&want);
}

static void test_take_and_concat_lists(void)
{
    tlist in;
    sample(&in);
    int64_t idx[] = {3, -1, 0, 2, 3};
    struct ArrowArray taken;
    tl_error err;
    CHECK_OK(tl_arrow_take_nested(&in.schema, &in.array, idx, 5, &taken, &err), &err);
    CHECK_INT(taken.length, 5);
    CHECK_INT(taken.null_count, 1);
    const int32_t *o = offsets_of(&taken);
    CHECK(o[0] == 0 && o[1] == 3 && o[2] == 3 && o[3] == 5 && o[4] == 5 && o[5] == 8);
    tl_array_view v = tview("i", taken.children[0]);
    CHECK_INT(tv_int(&v, 0), 4);
    CHECK_INT(tv_int(&v, 3), 1);
    CHECK(tl_view_is_null(&v, 4));
    CHECK_INT(tv_int(&v, 7), 6);
    struct ArrowArray parts[2] = {in.array, taken}, joined;
    parts[0].release = NULL;
    CHECK_OK(tl_arrow_concat_nested(&in.schema, parts, 2, &joined, &err), &err);
    CHECK_INT(joined.length, 9);
    CHECK_INT(joined.null_count, 2);
    o = offsets_of(&joined);
    CHECK(o[4] == 5 && o[5] == 8 && o[9] == 13);
    v = tview("i", joined.children[0]);
    CHECK_INT(v.length, 13);
    CHECK_INT(tv_int(&v, 5), 4);
    int64_t bad[] = {4};
    struct ArrowArray none;
    CHECK(tl_arrow_take_nested(&in.schema, &in.array, bad, 1, &none, &err) == TL_ERR_INVALID);
    tl_array_release(&joined);
    tl_array_release(&taken);
    tlist_free(&in);
}

static void test_cast_errors_name_the_path(void)
{
    const char *s[] = {"1", "x"};
    tcol c;
    tcol_strs(&c, "u", s, 2);
    struct ArrowSchema from = {0}, to = {0};
    field(&from, "+l", "l", 1);
    field(from.children[0], "u", "element", 0);
    field(&to, "+l", "l", 1);
    field(to.children[0], "l", "element", 0);
    struct ArrowArray list;
    tl_error err;
    CHECK_OK(tl_array_init(&list, 2, 1, &err), &err);
    list.length = 1;
    int32_t *offs = tl_array_alloc_buffer(&list, 1, 8);
    offs[1] = 2;
    tl_array_move(&c.array, list.children[0]);
    struct ArrowArray out;
    CHECK(tl_arrow_cast_nested(&from, &list, &to, "l", &out, &err) == TL_ERR_INVALID);
    CHECK(strstr(err.message, "column \"l.element\"") != NULL);
    CHECK(strstr(err.message, "\"x\"") != NULL);
    /* A struct where the table has a list. */
    struct ArrowSchema st = {0};
    field(&st, "+s", "l", 1);
    field(st.children[0], "l", "a", 0);
    CHECK(tl_arrow_cast_nested(&st, &list, &to, "l", &out, &err) == TL_ERR_INVALID);
    CHECK_STR(err.message, "column \"l\": cannot cast a struct to a list");
    /* A required element that holds a null. */
    to.children[0]->flags = 0;
    CHECK_OK(tl_arrow_nulls_nested(&to, 2, &out, &err), &err);
    tl_array_release(&out);
    tl_array_release(&list);
    tl_schema_release(&st);
    tl_schema_release(&from);
    tl_schema_release(&to);
    tcol_free(&c);
}

static void test_struct_fields_by_name(void)
{
    /* The input has b then a; the table has a, b and c (nullable, missing). */
    int64_t av[] = {1, 2, 3}, bv[] = {10, 20, 30};
    tcol a, b;
    tcol_ints(&a, "l", av, NULL, 3);
    tcol_ints(&b, "l", bv, ".x.", 3);
    struct ArrowSchema from = {0}, to = {0};
    field(&from, "+s", "s", 2);
    field(from.children[0], "l", "b", 0);
    field(from.children[1], "l", "a", 0);
    field(&to, "+s", "s", 3);
    field(to.children[0], "l", "a", 0);
    field(to.children[1], "l", "b", 0);
    field(to.children[2], "+l", "c", 1);
    field(to.children[2]->children[0], "u", "element", 0);
    struct ArrowArray in;
    tl_error err;
    CHECK_OK(tl_array_init(&in, 1, 2, &err), &err);
    in.length = 2;
    in.offset = 1;
    uint8_t *bits = tl_array_alloc_buffer(&in, 0, 1);
    bits[0] = 0x2; /* row 1 valid, row 2 null */
    in.null_count = 2;
    tl_array_move(&b.array, in.children[0]);
    tl_array_move(&a.array, in.children[1]);
    struct ArrowArray out;
    CHECK_OK(tl_arrow_cast_nested(&from, &in, &to, "s", &out, &err), &err);
    CHECK_INT(out.length, 2);
    CHECK_INT(out.null_count, 1);
    CHECK(valid_at(&out, 0) && !valid_at(&out, 1));
    CHECK_INT(value_at(out.children[0], 0), 2);
    CHECK_INT(value_at(out.children[0], 1), 3);
    CHECK(!valid_at(out.children[1], 0));
    CHECK_INT(value_at(out.children[1], 1), 30);
    CHECK_INT(out.children[2]->length, 2);
    CHECK_INT(out.children[2]->null_count, 2);
    tl_array_release(&out);
    /* A field the table lacks. */
    tl_schema_release(from.children[0]);
    field(from.children[0], "l", "zz", 0);
    CHECK(tl_arrow_cast_nested(&from, &in, &to, "s", &out, &err) == TL_ERR_INVALID);
    CHECK_STR(err.message, "column \"s.zz\" is not in the table schema");
    tl_array_release(&in);
    tl_schema_release(&from);
    tl_schema_release(&to);
    tcol_free(&a);
    tcol_free(&b);
}

static void test_map_nulls_and_null_keys(void)
{
    struct ArrowSchema m = {0};
    field(&m, "+m", "m", 1);
    field(m.children[0], "+s", "entries", 2);
    field(m.children[0]->children[0], "u", "key", 0);
    field(m.children[0]->children[1], "g", "value", 0);
    struct ArrowArray out;
    tl_error err;
    CHECK_OK(tl_arrow_nulls_nested(&m, 3, &out, &err), &err);
    CHECK_INT(out.null_count, 3);
    CHECK_INT(offsets_of(&out)[3], 0);
    CHECK_INT(out.children[0]->length, 0);
    CHECK_INT(out.children[0]->n_children, 2);
    /* A null key is refused. */
    const char *keys[] = {NULL};
    tcol k;
    tcol_strs(&k, "u", keys, 1);
    struct ArrowArray in;
    CHECK_OK(tl_array_init(&in, 2, 1, &err), &err);
    in.length = 1;
    int32_t *offs = tl_array_alloc_buffer(&in, 1, 8);
    offs[1] = 1;
    struct ArrowArray *e = in.children[0];
    CHECK_OK(tl_array_init(e, 1, 2, &err), &err);
    e->length = 1;
    tl_array_move(&k.array, e->children[0]);
    tl_arrow_type g;
    CHECK_OK(tl_arrow_type_parse("g", &g, &err), &err);
    CHECK_OK(tl_arrow_nulls(&g, 1, e->children[1], &err), &err);
    struct ArrowArray cast;
    CHECK(tl_arrow_cast_nested(&m, &in, &m, "m", &cast, &err) == TL_ERR_INVALID);
    CHECK_STR(err.message, "column \"m.key\": a map key is null");
    tl_array_release(&in);
    tl_array_release(&out);
    tl_schema_release(&m);
    tcol_free(&k);
}

UNIT_TESTS(UNIT(test_cast_list_int32_to_int64_rebases_offsets), UNIT(test_take_and_concat_lists),
           UNIT(test_cast_errors_name_the_path), UNIT(test_struct_fields_by_name),
           UNIT(test_map_nulls_and_null_keys))
