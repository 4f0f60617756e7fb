#include "arrow/cast.h"
#include "arrow/concat.h"
#include "arrow/sort.h"
#include "arrow/take.h"
#include "test_arrow_helpers.h"
#include "unit.h"

static void test_take_fixed_with_nulls_and_offset(void)
{
    int64_t v[] = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
    const char *formats[] = {"c", "s", "i", "l", "tsu:UTC", "d:10,2"};
    for (int f = 0; f < 6; f++) {
        tcol c;
        tcol_ints(&c, formats[f], v, ".x....x...", 10);
        tl_array_view slice;
        CHECK_INT(tl_arrow_view_slice(&c.view, 1, 8, &slice, NULL), TL_OK); /* rows 11..18 */
        int64_t idx[] = {7, 0, -1, 5, 5, 2};
        struct ArrowArray out;
        tl_error err;
        CHECK_OK(tl_arrow_take(&slice, idx, 6, &out, &err), &err);
        check_result_shape(&out, 6);
        CHECK_INT(out.null_count, 4); /* row 11, the -1, and row 16 twice */
        tl_array_view r = tview(formats[f], &out);
        if (c.type.id == TL_ATYPE_DECIMAL128) {
            CHECK(tl_load_i128((const uint8_t *)r.values) == 18);
        } else {
            CHECK_INT(tv_int(&r, 0), 18);
            CHECK_INT(tv_int(&r, 5), 13);
        }
        CHECK(tl_view_is_null(&r, 1) && tl_view_is_null(&r, 2));
        CHECK(tl_view_is_null(&r, 3) && tl_view_is_null(&r, 4));
        tl_array_release(&out);
        tcol_free(&c);
    }
}

static void test_take_strings_and_bools(void)
{
    const char *s[] = {"zero", "one", NULL, "three", ""};
    const char *formats[] = {"u", "U", "z", "Z"};
    for (int f = 0; f < 4; f++) {
        tcol c;
        tcol_strs(&c, formats[f], s, 5);
        int64_t idx[] = {3, 3, 2, -1, 0, 4, 1};
        struct ArrowArray out;
        tl_error err;
        CHECK_OK(tl_arrow_take(&c.view, idx, 7, &out, &err), &err);
        check_result_shape(&out, 7);
        CHECK_INT(out.null_count, 2);
        tl_array_view r = tview(formats[f], &out);
        char buf[16];
        CHECK_STR(tv_str(&r, 0, buf, sizeof buf), "three");
        CHECK_STR(tv_str(&r, 1, buf, sizeof buf), "three");
        CHECK_STR(tv_str(&r, 4, buf, sizeof buf), "zero");
        CHECK_STR(tv_str(&r, 5, buf, sizeof buf), "");
        CHECK_STR(tv_str(&r, 6, buf, sizeof buf), "one");
        tl_array_release(&out);
        tcol_free(&c);
    }
    int64_t bits[20];
    for (int i = 0; i < 20; i++) bits[i] = i % 3 == 0;
    tcol c;
    tcol_ints(&c, "b", bits, NULL, 20);
    int64_t idx[20];
    for (int i = 0; i < 20; i++) idx[i] = 19 - i;
    struct ArrowArray out;
    tl_error err;
    CHECK_OK(tl_arrow_take(&c.view, idx, 20, &out, &err), &err);
    check_result_shape(&out, 20);
    CHECK(out.buffers[0] == NULL);
    tl_array_view r = tview("b", &out);
    for (int i = 0; i < 20; i++) CHECK_INT(tv_int(&r, i), (19 - i) % 3 == 0);
    tl_array_release(&out);
    tcol_free(&c);
}

static void test_take_rejects_bad_indices(void)
{
    int64_t v[] = {1, 2, 3};
    tcol c;
    tcol_ints(&c, "i", v, NULL, 3);
    int64_t idx[] = {0, 3};
    struct ArrowArray out;
    tl_error err;
    CHECK_INT(tl_arrow_take(&c.view, idx, 2, &out, &err), TL_ERR_INVALID);
    CHECK_STR(err.message, "take: index 3 (position 1) is out of range for 3 rows");
    int64_t neg[] = {-2};
    CHECK_INT(tl_arrow_take(&c.view, neg, 1, &out, &err), TL_ERR_INVALID);
    CHECK(out.release == NULL);
    CHECK_OK(tl_arrow_take(&c.view, idx, 0, &out, &err), &err); /* empty take */
    check_result_shape(&out, 0);
    tl_array_release(&out);
    tcol_free(&c);

    /* Hostile offsets: an element pointing past the data must be rejected. */
    const char *s[] = {"ab", "cd", "ef"};
    tcol_strs(&c, "u", s, 3);
    ((int32_t *)c.array.buffers[1])[2] = 1000;
    int64_t one[] = {1};
    CHECK_INT(tl_arrow_take(&c.view, one, 1, &out, &err), TL_ERR_INVALID);
    tcol_free(&c);
}

static void test_take_dictionary_keeps_encoding(void)
{
    const char *dict[] = {"a", "b", "c"};
    int64_t idx[] = {2, 0, 1, 1};
    tcol c;
    tcol_dict(&c, "c", idx, "..x.", 4, "u", dict, 3);
    int64_t take[] = {3, 2, 0};
    struct ArrowArray out;
    tl_error err;
    CHECK_OK(tl_arrow_take(&c.view, take, 3, &out, &err), &err);
    check_result_shape(&out, 3);
    tl_array_view v;
    CHECK_OK(tl_array_view_init(&v, &c.schema, &out, &err), &err); /* same schema describes it */
    CHECK(v.is_dictionary);
    CHECK_INT(tl_view_dict_index(&v, 0), 1);
    CHECK(tl_view_is_null(&v, 1));
    CHECK_INT(tl_view_dict_index(&v, 2), 2);
    tl_array_view_free(&v);
    tl_array_release(&out);

    CHECK_OK(tl_arrow_dict_decode(&c.view, &out, &err), &err);
    check_result_shape(&out, 4);
    tl_array_view d = tview("u", &out);
    char buf[4];
    CHECK_STR(tv_str(&d, 0, buf, sizeof buf), "c");
    CHECK_STR(tv_str(&d, 3, buf, sizeof buf), "b");
    CHECK(tl_view_is_null(&d, 2));
    tl_array_release(&out);
    ((int8_t *)c.array.buffers[1])[1] = 3; /* past the 3-value dictionary */
    CHECK_INT(tl_arrow_take(&c.view, take, 3, &out, &err), TL_ERR_INVALID);
    CHECK_STR(err.message,
              "dictionary index 3 (row 1) is out of range for a dictionary of 3 values");
    CHECK_INT(tl_arrow_copy(&c.view, &out, &err), TL_ERR_INVALID);
    tcol_free(&c);
}

static void test_take_struct(void)
{
    tl_error err;
    struct ArrowSchema schema;
    struct ArrowArray batch;
    CHECK_OK(tl_schema_init(&schema, "+s", NULL, 0, 2, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[0], "l", "id", 2, 0, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[1], "u", "name", 2, 0, &err), &err);
    int64_t ids[] = {100, 101, 102, 103, 104};
    const char *names[] = {"a", "b", NULL, "d", "e"};
    tcol c0, c1;
    tcol_ints(&c0, "l", ids, NULL, 5);
    tcol_strs(&c1, "u", names, 5);
    CHECK_OK(tl_array_init(&batch, 1, 2, &err), &err);
    tl_array_move(&c0.array, batch.children[0]);
    tl_array_move(&c1.array, batch.children[1]);
    tcol_free(&c0);
    tcol_free(&c1);
    batch.length = 4; /* the struct is rows 1..4 of its children */
    batch.offset = 1;
    int64_t idx[] = {3, 0, 1, -1};
    struct ArrowArray out;
    CHECK_OK(tl_arrow_take_struct(&schema, &batch, idx, 4, &out, &err), &err);
    CHECK_INT(out.length, 4);
    CHECK_INT(out.null_count, 1);
    tl_array_view id = tview("l", out.children[0]), name = tview("u", out.children[1]);
    char buf[4];
    CHECK_INT(tv_int(&id, 0), 104);
    CHECK_INT(tv_int(&id, 1), 101);
    CHECK_STR(tv_str(&name, 0, buf, sizeof buf), "e");
    CHECK(tl_view_is_null(&name, 2));
    CHECK(tl_view_is_null(&id, 3));
    tl_array_release(&out);

    int64_t bad[] = {4};
    CHECK_INT(tl_arrow_take_struct(&schema, &batch, bad, 1, &out, &err), TL_ERR_INVALID);
    batch.children[1]->length = 3; /* shorter than the struct claims */
    CHECK_INT(tl_arrow_take_struct(&schema, &batch, idx, 1, &out, &err), TL_ERR_INVALID);
    CHECK_STR(err.message, "column \"name\": has 3 rows, the batch 5");
    tl_array_release(&batch);
    tl_schema_release(&schema);
}

/* A take of many rows gathers its columns in threads: each column equals
 * its own take, and of two failing columns the first is reported, as one
 * at a time. */
static void test_take_struct_parallel(void)
{
    enum { N = 50000, COLS = 4 };
    tl_error err;
    struct ArrowSchema schema;
    struct ArrowArray batch;
    CHECK_OK(tl_schema_init(&schema, "+s", NULL, 0, COLS, &err), &err);
    CHECK_OK(tl_array_init(&batch, 1, COLS, &err), &err);
    batch.length = N;
    int64_t *v = malloc(N * sizeof *v), *idx = malloc(N * sizeof *idx);
    for (int c = 0; c < COLS; c++) {
        char name[8];
        snprintf(name, sizeof name, "c%d", c);
        CHECK_OK(tl_schema_init(schema.children[c], "l", name, 2, 0, &err), &err);
        for (int64_t i = 0; i < N; i++) v[i] = i * COLS + c;
        tcol col;
        tcol_ints(&col, "l", v, NULL, N);
        tl_array_move(&col.array, batch.children[c]);
        tcol_free(&col);
    }
    for (int64_t i = 0; i < N; i++) idx[i] = (i * 7919) % N;
    struct ArrowArray out;
    CHECK_OK(tl_arrow_take_struct(&schema, &batch, idx, N, &out, &err), &err);
    CHECK_INT(out.length, N);
    int64_t bad = 0;
    for (int c = 0; c < COLS && out.release; c++) {
        const int64_t *got = out.children[c]->buffers[1];
        for (int64_t i = 0; i < N; i++) bad += got[i] != idx[i] * COLS + c;
    }
    CHECK_INT(bad, 0);
    tl_array_release(&out);
    batch.children[1]->length = 10; /* shorter than the struct claims */
    batch.children[3]->length = 20;
    CHECK_INT(tl_arrow_take_struct(&schema, &batch, idx, N, &out, &err), TL_ERR_INVALID);
    CHECK_STR(err.message, "column \"c1\": has 10 rows, the batch 50000");
    free(v);
    free(idx);
    tl_array_release(&batch);
    tl_schema_release(&schema);
}

static void test_concat(void)
{
    int64_t a[] = {1, 2, 3, 4, 5};
    int64_t b[] = {6, 7, 8};
    tcol ca, cb, cc;
    tcol_ints(&ca, "i", a, ".x...", 5);
    tcol_ints(&cb, "i", b, NULL, 3);
    tl_array_view parts[3];
    CHECK_INT(tl_arrow_view_slice(&ca.view, 1, 3, &parts[0], NULL), TL_OK); /* 2(x) 3 4 */
    parts[1] = cb.view;
    CHECK_INT(tl_arrow_view_slice(&ca.view, 4, 1, &parts[2], NULL), TL_OK); /* 5 */
    struct ArrowArray out;
    tl_error err;
    CHECK_OK(tl_arrow_concat(parts, 3, &out, &err), &err);
    check_result_shape(&out, 7);
    CHECK_INT(out.null_count, 1);
    tl_array_view r = tview("i", &out);
    int64_t want[] = {0, 3, 4, 6, 7, 8, 5};
    for (int i = 1; i < 7; i++) CHECK_INT(tv_int(&r, i), want[i]);
    CHECK(tl_view_is_null(&r, 0));
    tl_array_release(&out);

    tcol_ints(&cc, "l", b, NULL, 3);
    parts[1] = cc.view;
    CHECK_INT(tl_arrow_concat(parts, 3, &out, &err), TL_ERR_INVALID);
    CHECK_STR(err.message, "concat: part 1 is int64, expected int32");
    CHECK_INT(tl_arrow_concat(parts, 0, &out, &err), TL_ERR_INVALID);
    tcol_free(&ca);
    tcol_free(&cb);
    tcol_free(&cc);
}

static void test_concat_strings_bools_dicts(void)
{
    const char *s1[] = {"x", "yy", NULL};
    const char *s2[] = {"", "zzz"};
    tcol a, b;
    tcol_strs(&a, "U", s1, 3);
    tcol_strs(&b, "U", s2, 2);
    tl_array_view parts[3];
    CHECK_INT(tl_arrow_view_slice(&a.view, 1, 2, &parts[0], NULL), TL_OK);
    parts[1] = b.view;
    parts[2] = a.view;
    struct ArrowArray out;
    tl_error err;
    CHECK_OK(tl_arrow_concat(parts, 3, &out, &err), &err);
    check_result_shape(&out, 7);
    CHECK_INT(out.null_count, 2);
    tl_array_view r = tview("U", &out);
    const char *want[] = {"yy", NULL, "", "zzz", "x", "yy", NULL};
    char buf[8];
    for (int i = 0; i < 7; i++) {
        CHECK(tl_view_is_null(&r, i) == (want[i] == NULL));
        if (want[i]) CHECK_STR(tv_str(&r, i, buf, sizeof buf), want[i]);
    }
    tl_array_release(&out);
    tcol_free(&a);
    tcol_free(&b);

    /* Bits at odd offsets. */
    int64_t bits[13];
    for (int i = 0; i < 13; i++) bits[i] = (i * 7) % 3 == 1;
    tcol_ints(&a, "b", bits, "....x........", 13);
    tl_array_view bp[4];
    for (int k = 0; k < 4; k++)
        CHECK_INT(tl_arrow_view_slice(&a.view, k, 13 - 3 * k, &bp[k], NULL), TL_OK);
    CHECK_OK(tl_arrow_concat(bp, 4, &out, &err), &err);
    check_result_shape(&out, 13 + 10 + 7 + 4);
    r = tview("b", &out);
    int at = 0;
    for (int k = 0; k < 4; k++)
        for (int i = k; i < 13 - 2 * k; i++, at++) {
            CHECK(tl_view_is_null(&r, at) == (i == 4));
            if (i != 4) CHECK_INT(tv_int(&r, at), bits[i]);
        }
    tl_array_release(&out);
    tcol_free(&a);

    /* Dictionary parts are decoded and may mix with plain ones. */
    const char *dict[] = {"p", "q"};
    int64_t idx[] = {1, 0};
    const char *plain[] = {"r"};
    tcol_dict(&a, "i", idx, NULL, 2, "u", dict, 2);
    tcol_strs(&b, "u", plain, 1);
    parts[0] = a.view;
    parts[1] = b.view;
    CHECK_OK(tl_arrow_concat(parts, 2, &out, &err), &err);
    r = tview("u", &out);
    CHECK_STR(tv_str(&r, 0, buf, sizeof buf), "q");
    CHECK_STR(tv_str(&r, 2, buf, sizeof buf), "r");
    tl_array_release(&out);
    tcol_free(&a);
    tcol_free(&b);
}

static void test_bitmap_helpers(void)
{
    uint8_t src[16], dst[16];
    uint64_t state = 3;
    for (int i = 0; i < 16; i++) src[i] = (uint8_t)trand(&state);
    for (int so = 0; so < 9; so++)
        for (int d = 0; d < 9; d++)
            for (int len = 0; len < 100; len += 7) {
                memset(dst, 0xAA, sizeof dst);
                tl_bitmap_copy(dst, d, src, so, len);
                for (int i = 0; i < len; i++)
                    if (tl_bit_get(dst, d + i) != tl_bit_get(src, so + i)) {
                        unit_fail(__FILE__, __LINE__, "copy so=%d d=%d len=%d bit %d", so, d, len,
                                  i);
                        return;
                    }
                /* Bits around the copied range are untouched. */
                for (int i = 0; i < d; i++) CHECK_INT(tl_bit_get(dst, i), (0xAA >> (i & 7)) & 1);
                int64_t count = 0;
                for (int i = 0; i < len; i++) count += tl_bit_get(src, so + i);
                CHECK_INT(tl_bitmap_count(src, so, len), count);
            }
}

/* Every kernel on arrays whose interior offsets or dictionary indices are
 * random: errors are fine, reading outside the buffers is not (ASan). */
static void test_kernels_survive_corrupt_arrays(void)
{
    uint64_t st = 1234;
    const char *words[] = {"alpha", "", "b", "gamma-delta", NULL, "z"};
    for (int round = 0; round < 300; round++) {
        const char *v[24];
        for (int i = 0; i < 24; i++) v[i] = words[trand(&st) % 6];
        tcol c;
        bool dict = round % 3 == 2;
        int64_t idx24[24];
        for (int i = 0; i < 24; i++) idx24[i] = (int64_t)(trand(&st) % 6);
        if (dict)
            tcol_dict(&c, "c", idx24, NULL, 24, "u", words, 4);
        else
            tcol_strs(&c, round % 2 ? "U" : "u", v, 24);
        /* Corrupt a few interior offsets (or indices), keeping the ends valid. */
        for (int k = 0; k < 3; k++) {
            int64_t at = 1 + (int64_t)(trand(&st) % 22), val = (int64_t)(trand(&st) % 200) - 50;
            if (dict)
                ((int8_t *)c.array.buffers[1])[at] = (int8_t)val;
            else if (round % 2)
                ((int64_t *)c.array.buffers[1])[at] = val;
            else
                ((int32_t *)c.array.buffers[1])[at] = (int32_t)val;
        }
        tl_error err;
        struct ArrowArray out;
        int64_t idx[10];
        for (int i = 0; i < 10; i++) idx[i] = (int64_t)(trand(&st) % 24);
        if (tl_arrow_take(&c.view, idx, 10, &out, &err) == TL_OK) tl_array_release(&out);
        if (tl_arrow_copy(&c.view, &out, &err) == TL_OK) tl_array_release(&out);
        if (tl_arrow_dict_decode(&c.view, &out, &err) == TL_OK) tl_array_release(&out);
        tl_array_view parts[2] = {c.view, c.view};
        if (tl_arrow_concat(parts, 2, &out, &err) == TL_OK) tl_array_release(&out);
        tl_arrow_type t;
        const char *targets[] = {"U", "z", "l", "tsu:"};
        for (int k = 0; k < 4; k++) {
            tl_arrow_type_parse(targets[k], &t, NULL);
            if (tl_arrow_cast(&c.view, &t, "c", &out, &err) == TL_OK) tl_array_release(&out);
        }
        tl_sort_key key = {&c.view, round % 4 == 1, false};
        int64_t *sorted = NULL;
        if (tl_arrow_sort_indices(&key, 1, 24, &sorted, &err) == TL_OK) free(sorted);
        tcol_free(&c);
    }
}

UNIT_TESTS(UNIT(test_take_fixed_with_nulls_and_offset), UNIT(test_take_struct_parallel),
           UNIT(test_take_strings_and_bools), UNIT(test_take_rejects_bad_indices),
           UNIT(test_take_dictionary_keeps_encoding), UNIT(test_take_struct), UNIT(test_concat),
           UNIT(test_concat_strings_bools_dicts), UNIT(test_bitmap_helpers),
           UNIT(test_kernels_survive_corrupt_arrays))
