/* tl_table_append_group: the good inputs of a call land in one commit that
 * records every batch id, each input keeping its own outcome: a bad input
 * fails alone and writes nothing, an id committed before is a duplicate, an
 * id repeated within the call goes in after the first, ids another writer
 * commits meanwhile become duplicates, a group whose commit fails is
 * committed input by input, and a bad call does nothing at all. */
#include <stdatomic.h>

#include "store/store_fault.h"
#include "test_table_helpers.h"

static const int64_t T0 = 1714557600000000LL; /* 2024-05-01T10:00:00Z */
#define MAX_ROWS 8

/* One input's data, owned by the test: the call only reads it. */
typedef struct tin {
    struct ArrowSchema schema;
    struct ArrowArray batch;
} tin;

/* An input of columns cols[0..n) named names[0..n) (the columns moved). */
static void tin_cols(tin *x, const char *const *names, tcol *cols, int n, int64_t rows)
{
    tl_error err;
    CHECK_OK(tl_schema_init(&x->schema, "+s", NULL, 0, n, &err), &err);
    CHECK_OK(tl_array_init(&x->batch, 1, n, &err), &err);
    x->batch.length = rows;
    for (int i = 0; i < n; i++) {
        CHECK_OK(tl_schema_init(x->schema.children[i], cols[i].schema.format, names[i],
                                ARROW_FLAG_NULLABLE, 0, &err),
                 &err);
        tl_array_move(&cols[i].array, x->batch.children[i]);
        tcol_free(&cols[i]);
    }
}

/* n rows of series `key` (NULL: a null key) at T0 + at, at + 1, ... seconds. */
static void tin_rows(tin *x, const char *key, int at, int n)
{
    int64_t times[MAX_ROWS];
    const char *keys[MAX_ROWS];
    for (int i = 0; i < n && i < MAX_ROWS; i++) {
        times[i] = T0 + (int64_t)(at + i) * 1000000LL;
        keys[i] = key;
    }
    tcol cols[2];
    tcol_ints(&cols[0], "tsu:UTC", times, NULL, n);
    tcol_strs(&cols[1], "u", keys, n);
    tin_cols(x, (const char *const[]){"time", "device"}, cols, 2, n);
}

/* One row with a column the table does not have. */
static void tin_unknown_column(tin *x)
{
    int64_t time = T0, extra = 7;
    const char *key = "pump-x";
    tcol cols[3];
    tcol_ints(&cols[0], "tsu:UTC", &time, NULL, 1);
    tcol_strs(&cols[1], "u", &key, 1);
    tcol_ints(&cols[2], "l", &extra, NULL, 1);
    tin_cols(x, (const char *const[]){"time", "device", "bogus"}, cols, 3, 1);
}

/* One row whose time is text that is no time. */
static void tin_wrong_type(tin *x)
{
    const char *time = "not a time", *key = "pump-y";
    tcol cols[2];
    tcol_strs(&cols[0], "u", &time, 1);
    tcol_strs(&cols[1], "u", &key, 1);
    tin_cols(x, (const char *const[]){"time", "device"}, cols, 2, 1);
}

static void tin_free(tin *x)
{
    tl_array_release(&x->batch);
    tl_schema_release(&x->schema);
}

static tl_append_input input_of(const char *id, const tin *x)
{
    tl_append_input in;
    memset(&in, 0x5a, sizeof in); /* the call fills every outcome field */
    in.batch_id = id;
    in.schema = &x->schema;
    in.batches = &x->batch;
    in.n_batches = 1;
    return in;
}

static tl_table *group_table(tl_lake **lake, const char *dir)
{
    return ttable_create(lake, dir, "iot.g", "device", "u", false, NULL);
}

static int64_t rows_of(tl_lake *lake, const char *where)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM iot.g WHERE %s", where);
    return ttable_sql_int64(lake, sql);
}

static int count_file(const char *path, const char *folder, void *ctx)
{
    (void)path, (void)folder, (void)ctx;
    return 1;
}

static int files_of(const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", unit_tmpdir(), dir);
    return ttable_walk_files(path, count_file, NULL);
}

static void check_committed(tl_table *t, const char *const *ids, size_t n, const int *want)
{
    int seen[8] = {0};
    tl_error err;
    CHECK_OK(tl_table_batches_committed(t, ids, n, seen, &err), &err);
    for (size_t i = 0; i < n; i++)
        if (seen[i] != want[i])
            unit_fail(__FILE__, __LINE__, "batch %s committed: %d", ids[i], seen[i]);
}

static void check_ok(const tl_append_input *in, int64_t rows, int group, int64_t version)
{
    CHECK_INT(in->status, TL_OK);
    CHECK_STR(in->error.message, "");
    CHECK_INT(in->result.rows, rows);
    CHECK_INT(in->result.duplicate, 0);
    CHECK_INT(in->result.version, version);
    CHECK_INT(in->group, group);
}

static void check_failed(const tl_append_input *in, const char *message)
{
    CHECK_INT(in->status, TL_ERR_INVALID);
    CHECK_INT(in->error.code, TL_ERR_INVALID);
    if (strstr(in->error.message, message) == NULL)
        unit_fail(__FILE__, __LINE__, "error \"%s\" does not say \"%s\"", in->error.message,
                  message);
    CHECK_INT(in->result.rows, 0);
    CHECK_INT(in->group, 0);
}

static void check_duplicate(const tl_append_input *in, int64_t version)
{
    CHECK_INT(in->status, TL_OK);
    CHECK_INT(in->result.duplicate, 1);
    CHECK_INT(in->result.rows, 0);
    CHECK_INT(in->result.version, version);
    CHECK_INT(in->group, 0);
}

static void test_good_inputs_make_one_commit(void)
{
    tl_lake *lake;
    tl_table *t = group_table(&lake, "group_good");
    int64_t v0 = tl_table_version(t);
    tin x[3];
    tin_rows(&x[0], "pump-a", 0, 2);
    tin_rows(&x[1], "pump-b", 0, 3);
    tin_rows(&x[2], "pump-c", 10, 4);
    x[2].batch.offset = 1; /* a batch's own offset and length pick its rows */
    x[2].batch.length = 2;
    const char *ids[] = {"a.csv", "b.csv", "c.csv"};
    tl_append_input in[3];
    for (int i = 0; i < 3; i++) in[i] = input_of(ids[i], &x[i]);
    tl_append_options o = {.maintain = 0};
    tl_error err;
    CHECK_OK(tl_table_append_group(t, in, 3, &o, &err), &err);
    CHECK_INT(tl_table_version(t), v0 + 1);
    check_ok(&in[0], 2, 3, v0 + 1);
    check_ok(&in[1], 3, 3, v0 + 1);
    check_ok(&in[2], 2, 3, v0 + 1);
    CHECK_INT(in[0].result.attempts, 1);
    CHECK_INT(rows_of(lake, "true"), 7);
    CHECK_INT(rows_of(lake, "device = 'pump-c' AND time = TIMESTAMPTZ '2024-05-01 10:00:11+00'"),
              1);
    check_committed(t, ids, 3, (const int[]){1, 1, 1});
    for (int i = 0; i < 3; i++) tin_free(&x[i]);
    tl_table_close(t);
    tl_lake_close(lake);
}

static void test_a_bad_input_fails_alone(void)
{
    tl_lake *lake;
    tl_table *t = group_table(&lake, "group_bad");
    int64_t v0 = tl_table_version(t);
    tin x[5];
    tin_rows(&x[0], "pump-a", 0, 2);
    tin_unknown_column(&x[1]);
    tin_rows(&x[2], NULL, 0, 1); /* a null series key: the column is required */
    tin_wrong_type(&x[3]);
    tin_rows(&x[4], "pump-b", 0, 3);
    const char *ids[] = {"a", "unknown", "null", "type", "b"};
    tl_append_input in[5];
    for (int i = 0; i < 5; i++) in[i] = input_of(ids[i], &x[i]);
    tl_error err;
    CHECK_OK(tl_table_append_group(t, in, 5, NULL, &err), &err);
    CHECK_INT(tl_table_version(t), v0 + 1);
    check_ok(&in[0], 2, 2, v0 + 1);
    check_failed(&in[1], "column \"bogus\" is not in the table schema");
    check_failed(&in[2], "column \"device\" is required but row 0 is null");
    check_failed(&in[3], "column \"time\": cannot cast \"not a time\"");
    check_ok(&in[4], 3, 2, v0 + 1);
    CHECK_INT(rows_of(lake, "true"), 5);
    check_committed(t, ids, 5, (const int[]){1, 0, 0, 0, 1});
    for (int i = 0; i < 5; i++) tin_free(&x[i]);
    tl_table_close(t);
    tl_lake_close(lake);
}

static void test_a_committed_id_is_a_duplicate(void)
{
    const char *dir = "group_dup";
    tl_lake *lake;
    tl_table *t = group_table(&lake, dir);
    tin x[3];
    tin_rows(&x[0], "pump-a", 0, 2);
    tin_rows(&x[1], "pump-a", 100, 4); /* other rows, the same id: never read */
    tin_rows(&x[2], "pump-b", 0, 1);
    tl_append_input first = input_of("a", &x[0]);
    tl_error err;
    CHECK_OK(tl_table_append_group(t, &first, 1, NULL, &err), &err);
    check_ok(&first, 2, 1, tl_table_version(t));
    int64_t v1 = tl_table_version(t);
    int files = files_of(dir);

    tl_append_input again = input_of("a", &x[1]);
    CHECK_OK(tl_table_append_group(t, &again, 1, NULL, &err), &err);
    check_duplicate(&again, v1);
    CHECK_INT(tl_table_version(t), v1);
    CHECK_INT(files_of(dir), files);

    tl_append_input in[2] = {input_of("a", &x[1]), input_of("b", &x[2])};
    CHECK_OK(tl_table_append_group(t, in, 2, NULL, &err), &err);
    check_duplicate(&in[0], v1);
    check_ok(&in[1], 1, 1, v1 + 1);
    CHECK_INT(rows_of(lake, "device = 'pump-a'"), 2);
    CHECK_INT(rows_of(lake, "true"), 3);
    for (int i = 0; i < 3; i++) tin_free(&x[i]);
    tl_table_close(t);
    tl_lake_close(lake);
}

static void test_an_id_repeated_in_a_call(void)
{
    tl_lake *lake;
    tl_table *t = group_table(&lake, "group_repeat");
    int64_t v0 = tl_table_version(t);
    tin x[5];
    tin_rows(&x[0], "pump-a", 0, 2);
    tin_rows(&x[1], "pump-b", 0, 1);
    tin_rows(&x[2], "pump-a", 50, 3); /* "a" again: a duplicate of the first */
    tin_unknown_column(&x[3]);
    tin_rows(&x[4], "pump-c", 0, 2); /* "c" again, the first failed: loaded */
    tl_append_input in[5] = {input_of("a", &x[0]), input_of("b", &x[1]), input_of("a", &x[2]),
                             input_of("c", &x[3]), input_of("c", &x[4])};
    tl_error err;
    CHECK_OK(tl_table_append_group(t, in, 5, NULL, &err), &err);
    check_ok(&in[0], 2, 2, v0 + 1);
    check_ok(&in[1], 1, 2, v0 + 1);
    check_duplicate(&in[2], v0 + 1);
    check_failed(&in[3], "column \"bogus\"");
    check_ok(&in[4], 2, 1, v0 + 2);
    CHECK_INT(tl_table_version(t), v0 + 2);
    CHECK_INT(rows_of(lake, "device = 'pump-a'"), 2);
    CHECK_INT(rows_of(lake, "true"), 5);
    for (int i = 0; i < 5; i++) tin_free(&x[i]);
    tl_table_close(t);
    tl_lake_close(lake);
}

static void test_all_bad_leaves_the_table_alone(void)
{
    const char *dir = "group_all_bad";
    tl_lake *lake;
    tl_table *t = group_table(&lake, dir);
    int64_t v0 = tl_table_version(t);
    int files = files_of(dir);
    tin x[3];
    tin_unknown_column(&x[0]);
    tin_rows(&x[1], NULL, 0, 2);
    tin_rows(&x[2], "pump-a", 0, 1);
    tl_append_input in[3] = {input_of("u", &x[0]), input_of("n", &x[1]), input_of("", &x[2])};
    in[2].batch_id = "\xff\xfe"; /* not UTF-8 */
    tl_error err;
    CHECK_OK(tl_table_append_group(t, in, 3, NULL, &err), &err);
    check_failed(&in[0], "column \"bogus\"");
    check_failed(&in[1], "column \"device\" is required");
    check_failed(&in[2], "not valid UTF-8");
    CHECK_INT(tl_table_version(t), v0);
    CHECK_INT(files_of(dir), files);
    for (int i = 0; i < 3; i++) tin_free(&x[i]);
    tl_table_close(t);
    tl_lake_close(lake);
}

/* A bad call: TL_ERR_INVALID naming `what`, every outcome that error, the
 * table untouched. */
static void check_refused(tl_table *t, tl_append_input *in, size_t n, const tl_append_options *o,
                          const char *what)
{
    tl_error err = {0};
    CHECK_INT(tl_table_append_group(t, in, n, o, &err), TL_ERR_INVALID);
    if (strstr(err.message, what) == NULL)
        unit_fail(__FILE__, __LINE__, "error \"%s\" does not name %s", err.message, what);
    for (size_t i = 0; in && i < n; i++) {
        CHECK_INT(in[i].status, TL_ERR_INVALID);
        CHECK_STR(in[i].error.message, err.message);
        CHECK_INT(in[i].group, 0);
    }
}

static void test_bad_calls_are_refused(void)
{
    const char *dir = "group_bad_call";
    tl_lake *lake;
    tl_table *t = group_table(&lake, dir);
    int64_t v0 = tl_table_version(t);
    int files = files_of(dir);
    tin x;
    tin_rows(&x, "pump-a", 0, 1);
    tl_append_input in[2] = {input_of("a", &x), input_of("b", &x)};
    check_refused(NULL, in, 2, NULL, "needs a table");
    check_refused(t, NULL, 2, NULL, "got none");
    in[1].batch_id = NULL;
    check_refused(t, in, 2, NULL, "inputs[1] has no batch_id");
    in[1] = input_of("b", &x);
    in[1].schema = NULL;
    check_refused(t, in, 2, NULL, "inputs[1] has no schema");
    in[1] = input_of("b", &x);
    in[1].batches = NULL;
    check_refused(t, in, 2, NULL, "inputs[1] has 1 batches but no array");
    in[1] = input_of("b", &x);
    const char *ids[] = {"z"}, *summary[] = {"k", "v", NULL};
    tl_attachment att = {.name = "n", .data = "d", .len = 1};
    check_refused(t, in, 2, &(tl_append_options){.batch_id = "z"}, "options->batch_id");
    check_refused(t, in, 2, &(tl_append_options){.batch_ids = ids, .n_batch_ids = 1},
                  "options->batch_ids");
    check_refused(t, in, 2, &(tl_append_options){.expect_version = v0}, "options->expect_version");
    check_refused(t, in, 2, &(tl_append_options){.summary = summary}, "options->summary");
    check_refused(t, in, 2, &(tl_append_options){.attachments = &att, .attachments_len = 1},
                  "options->attachments");
    tl_error err;
    CHECK_OK(tl_table_append_group(t, NULL, 0, NULL, &err), &err); /* nothing to do */
    CHECK_INT(tl_table_version(t), v0);
    CHECK_INT(files_of(dir), files);
    check_committed(t, (const char *const[]){"a", "b"}, 2, (const int[]){0, 0});
    tin_free(&x);
    tl_table_close(t);
    tl_lake_close(lake);
}

static void test_ids_committed_meanwhile_are_duplicates(void)
{
    tl_lake *lake;
    tl_table *t = group_table(&lake, "group_meanwhile"), *other;
    tl_error err;
    CHECK_OK(tl_lake_open_table(lake, "iot.g", &other, &err), &err);
    int64_t v0 = tl_table_version(t);
    tin x[4];
    tin_rows(&x[0], "pump-a", 0, 2);
    tin_rows(&x[1], "pump-b", 0, 3);
    tin_rows(&x[2], "pump-c", 0, 1);
    tin_rows(&x[3], "pump-b", 100, 1); /* "b" from the other writer */
    tl_append_input theirs = input_of("b", &x[3]);
    CHECK_OK(tl_table_append_group(other, &theirs, 1, NULL, &err), &err);
    check_ok(&theirs, 1, 1, v0 + 1);
    /* t is still at v0: its check misses "b", its commit finds it. */
    tl_append_input in[3] = {input_of("a", &x[0]), input_of("b", &x[1]), input_of("c", &x[2])};
    CHECK_OK(tl_table_append_group(t, in, 3, NULL, &err), &err);
    check_ok(&in[0], 2, 2, v0 + 2);
    check_duplicate(&in[1], v0 + 1);
    check_ok(&in[2], 1, 2, v0 + 2);
    CHECK_INT(tl_table_version(t), v0 + 2);
    CHECK_INT(rows_of(lake, "device = 'pump-b'"), 1);
    CHECK_INT(rows_of(lake, "true"), 4);
    for (int i = 0; i < 4; i++) tin_free(&x[i]);
    tl_table_close(other);
    tl_table_close(t);
    tl_lake_close(lake);
}

static atomic_int data_puts_to_fail;

/* Fails the next data_puts_to_fail uploads of data files. */
static tl_store_fault fail_data_puts(tl_store_call call, const char *key, void *ctx)
{
    (void)ctx;
    if (call != TL_CALL_PUT || strstr(key, "/data/") == NULL) return TL_FAULT_NONE;
    return atomic_fetch_sub(&data_puts_to_fail, 1) > 0 ? TL_FAULT_FAIL : TL_FAULT_NONE;
}

static void test_a_failed_group_commits_input_by_input(void)
{
    tl_store_set_fault(fail_data_puts, NULL); /* consulted by the stores opened from now on */
    tl_lake *lake;
    tl_table *t = group_table(&lake, "group_fallback");
    int64_t v0 = tl_table_version(t);
    tin x[2];
    tin_rows(&x[0], "pump-a", 0, 2);
    tin_rows(&x[1], "pump-b", 0, 3);
    tl_append_input in[2] = {input_of("a", &x[0]), input_of("b", &x[1])};
    atomic_store(&data_puts_to_fail, 1);
    tl_error err;
    CHECK_OK(tl_table_append_group(t, in, 2, NULL, &err), &err);
    check_ok(&in[0], 2, 1, v0 + 1);
    check_ok(&in[1], 3, 1, v0 + 2);
    CHECK_INT(rows_of(lake, "true"), 5);

    atomic_store(&data_puts_to_fail, 1000); /* each alone fails too: its own error */
    for (int i = 0; i < 2; i++) tin_free(&x[i]);
    tin_rows(&x[0], "pump-c", 0, 1);
    tin_rows(&x[1], "pump-d", 0, 1);
    tl_append_input failed[2] = {input_of("c", &x[0]), input_of("d", &x[1])};
    CHECK_OK(tl_table_append_group(t, failed, 2, NULL, &err), &err);
    for (int i = 0; i < 2; i++) {
        CHECK_INT(failed[i].status, TL_ERR_STORAGE);
        CHECK(strstr(failed[i].error.message, "injected failure") != NULL);
        CHECK_INT(failed[i].group, 0);
        CHECK_INT(failed[i].result.rows, 0);
    }
    CHECK_INT(tl_table_version(t), v0 + 2);
    atomic_store(&data_puts_to_fail, 0);
    tl_store_set_fault(NULL, NULL);
    for (int i = 0; i < 2; i++) tin_free(&x[i]);
    tl_table_close(t);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_good_inputs_make_one_commit), UNIT(test_a_bad_input_fails_alone),
           UNIT(test_a_committed_id_is_a_duplicate), UNIT(test_an_id_repeated_in_a_call),
           UNIT(test_all_bad_leaves_the_table_alone), UNIT(test_bad_calls_are_refused),
           UNIT(test_ids_committed_meanwhile_are_duplicates),
           UNIT(test_a_failed_group_commits_input_by_input))
