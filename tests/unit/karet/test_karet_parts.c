/* The engine's small parts: SQL quoting, the byte-string set, record batches
 * (taking rows, row numbers, lists as streams) and which keys a source reads. */
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "files.h"
#include "kset.h"
#include "strbuf.h"
#include "unit.h"

static void test_sql_quoting(void)
{
    kbuf b = {0};
    ksql_ident(&b, "a\"b");
    kbuf_putc(&b, ' ');
    ksql_string(&b, "it's");
    CHECK(strcmp(kbuf_cstr(&b), "\"a\"\"b\" 'it''s'") == 0);
    kbuf_free(&b);
    /* A DOUBLE literal reads back as exactly the value, -0.0 too. */
    ksql_double(&b, 0.1);
    ksql_double(&b, -0.0);
    CHECK_STR(kbuf_cstr(&b), "CAST('0.1' AS DOUBLE)CAST('-0.0' AS DOUBLE)");
    kbuf_free(&b);
}

static void test_set(void)
{
    kset s = {0};
    char key[32];
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 50000; i++) {
            int n = snprintf(key, sizeof key, "k%d", i);
            CHECK_INT(kset_add(&s, key, (size_t)n), round == 0 ? 1 : 0);
        }
    CHECK_INT(s.len, 50000);
    CHECK_INT(kset_add(&s, "", 0), 1);
    CHECK_INT(kset_add(&s, "", 0), 0);
    kset_free(&s);
}

/* A batch of int64 "a" (with a null) and utf8 "s". */
static void make_batch(kbatch *b, int64_t n)
{
    static const char *const formats[] = {"l", "u"}, *const names[] = {"a", "s"};
    CHECK(kschema_struct(&b->schema, formats, names, 2));
    /* Build through kbatch_take of a hand-made source. */
    int64_t *ints = malloc((size_t)n * sizeof *ints);
    int32_t *offs = malloc((size_t)(n + 1) * sizeof *offs);
    char *text = malloc((size_t)n * 8 + 1);
    uint8_t *valid = calloc((size_t)n / 8 + 1, 1);
    int32_t pos = 0;
    for (int64_t i = 0; i < n; i++) {
        ints[i] = i * 10;
        offs[i] = pos;
        pos += sprintf(text + pos, "s%lld", (long long)i);
        if (i != 3) valid[i / 8] |= (uint8_t)(1 << (i % 8));
    }
    offs[n] = pos;
    static struct ArrowArray ca, cs, *children[2];
    static const void *bufs_a[2], *bufs_s[3], *bufs_p[1];
    bufs_a[0] = valid, bufs_a[1] = ints;
    bufs_s[0] = NULL, bufs_s[1] = offs, bufs_s[2] = text;
    ca = (struct ArrowArray){.length = n, .null_count = 1, .n_buffers = 2, .buffers = bufs_a};
    cs = (struct ArrowArray){.length = n, .n_buffers = 3, .buffers = bufs_s};
    children[0] = &ca, children[1] = &cs;
    kbatch src = {.schema = b->schema};
    src.array = (struct ArrowArray){
        .length = n, .n_buffers = 1, .buffers = bufs_p, .n_children = 2, .children = children};
    int64_t all[64];
    for (int64_t i = 0; i < n; i++) all[i] = i;
    int cols[] = {0, 1};
    char err[256];
    kbatch out = {0};
    CHECK(kbatch_take(&src, cols, 2, all, (size_t)n, &b->schema, &out, err, sizeof err));
    b->schema.release(&b->schema);
    *b = out;
    free(ints), free(offs), free(text), free(valid);
}

static void test_take_and_row_numbers(void)
{
    kbatch b = {0};
    make_batch(&b, 10);
    int64_t next = 100;
    CHECK(kbatch_add_row_numbers(&b, "__row", &next));
    CHECK_INT(next, 110);
    CHECK_INT(b.array.n_children, 3);
    CHECK_INT(kbatch_column(&b.schema, "__row"), 2);
    int64_t v;
    CHECK(kcol_int(kbatch_col(&b, 2), 4, &v) && v == 104);
    /* Take rows 9, 3, 0 of the columns s and a. */
    int cols[] = {1, 0};
    int64_t rows[] = {9, 3, 0};
    static const char *const formats[] = {"u", "l"}, *const names[] = {"s", "a"};
    struct ArrowSchema want = {0};
    CHECK(kschema_struct(&want, formats, names, 2));
    kbatch t = {0};
    char err[256] = "";
    CHECK(kbatch_take(&b, cols, 2, rows, 3, &want, &t, err, sizeof err));
    const char *s;
    size_t len;
    CHECK(kcol_string(kbatch_col(&t, 0), 0, &s, &len) && len == 2 && memcmp(s, "s9", 2) == 0);
    CHECK(kcol_is_null(kbatch_col(&t, 1), 1));
    CHECK(kcol_int(kbatch_col(&t, 1), 0, &v) && v == 90);
    CHECK(!kcol_is_null(kbatch_col(&t, 1), 2));
    /* The wrong type is refused, naming the column. */
    static const char *const bad[] = {"g", "l"};
    struct ArrowSchema wrong = {0};
    CHECK(kschema_struct(&wrong, bad, names, 2));
    kbatch t2 = {0};
    int cols2[] = {0, 0};
    CHECK(!kbatch_take(&b, cols2, 2, rows, 3, &wrong, &t2, err, sizeof err));
    CHECK(strstr(err, "\"a\"") != NULL);
    /* Keys: equal values give equal bytes; null differs from any value. */
    kbuf k1 = {0}, k2 = {0};
    kcol_key(kbatch_col(&t, 1), 0, &k1);
    kcol_key(kbatch_col(&b, 0), 9, &k2);
    CHECK(k1.len == k2.len && memcmp(k1.data, k2.data, k1.len) == 0);
    kbuf_truncate(&k2, 0);
    kcol_key(kbatch_col(&t, 1), 1, &k2);
    CHECK(k1.len != k2.len || memcmp(k1.data, k2.data, k1.len) != 0);
    kbuf_free(&k1), kbuf_free(&k2);
    /* A list as a stream hands the batches out once, then ends. */
    kbatches l = {0};
    CHECK(kbatches_push(&l, &t));
    struct ArrowArrayStream st;
    CHECK(kbatches_stream(&l, &want, &st));
    kbatches back = {0};
    CHECK_INT(kbatches_drain(&st, &back, err, sizeof err), 0);
    CHECK_INT(back.len, 1);
    CHECK_INT(back.rows, 3);
    kbatches_free(&back);
    want.release(&want);
    wrong.release(&wrong);
    kbatch_release(&b);
}

/* Picking columns moves them (every row, no copy) under the table's schema;
 * what cannot be moved as it is leaves the batch untouched for a take. */
static void test_pick(void)
{
    static const char *const formats[] = {"u", "l"}, *const names[] = {"s", "a"};
    struct ArrowSchema want = {0};
    CHECK(kschema_struct(&want, formats, names, 2));
    kbatch b = {0};
    make_batch(&b, 10);
    int64_t next = 0;
    CHECK(kbatch_add_row_numbers(&b, "__row", &next)); /* a column left behind */
    const void *text = b.array.children[1]->buffers[2];
    /* A type that is not the schema's, or a column named twice: refused, b kept. */
    static const char *const bad[] = {"u", "g"};
    struct ArrowSchema wrong = {0};
    CHECK(kschema_struct(&wrong, bad, names, 2));
    kbatch out = {0};
    int cols[] = {1, 0}, twice[] = {1, 1};
    CHECK(!kbatch_pick(&b, cols, 2, &wrong, &out));
    CHECK(!kbatch_pick(&b, twice, 2, &want, &out));
    CHECK(b.array.release != NULL && out.array.release == NULL);
    CHECK(kbatch_pick(&b, cols, 2, &want, &out));
    CHECK(b.array.release == NULL && b.schema.release == NULL);
    CHECK_INT(out.array.length, 10);
    CHECK_INT(out.array.n_children, 2);
    CHECK(out.array.children[0]->buffers[2] == text); /* moved, not copied */
    CHECK(strcmp(out.schema.children[1]->name, "a") == 0);
    const char *s;
    size_t len;
    int64_t v;
    CHECK(kcol_string(kbatch_col(&out, 0), 7, &s, &len) && len == 2 && memcmp(s, "s7", 2) == 0);
    CHECK(kcol_is_null(kbatch_col(&out, 1), 3));
    CHECK(kcol_int(kbatch_col(&out, 1), 9, &v) && v == 90);
    kbatch_release(&out); /* and the row numbers with it: ASan finds a leak otherwise */
    want.release(&want);
    wrong.release(&wrong);
}

static void test_source_files(void)
{
    ksource csv = {.format = KF_CSV}, nd = {.format = KF_NDJSON};
    CHECK(ksource_wants(&csv, "a/b.csv"));
    CHECK(ksource_wants(&csv, "a/b.CSV.gz"));
    CHECK(!ksource_wants(&csv, "a/b.json"));
    CHECK(!ksource_wants(&csv, "a/b.csv.tmp"));
    CHECK(ksource_wants(&nd, "x.ndjson"));
    CHECK(ksource_wants(&nd, "x.jsonl.gz"));
    CHECK(ksource_wants(&nd, "x.json"));
    CHECK(!ksource_wants(&nd, "x.gz"));
    kfiles l = {0};
    CHECK(kfiles_add(&l, "b", 1, "e", NULL));
    CHECK(kfiles_add(&l, "a/z", 1, NULL, NULL));
    CHECK(kfiles_add(&l, "a", 1, "e", NULL));
    kfiles_sort(&l);
    CHECK(strcmp(l.items[0].key, "a") == 0 && strcmp(l.items[1].key, "a/z") == 0);
    kfiles_free(&l);
}

UNIT_TESTS(UNIT(test_sql_quoting), UNIT(test_set), UNIT(test_take_and_row_numbers), UNIT(test_pick),
           UNIT(test_source_files))
