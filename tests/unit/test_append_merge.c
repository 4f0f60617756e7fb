/* An append of several chunks whose runs overlap (src/table/append_merge.c):
 * a store failure at any data-file write or read of it (a chunk's upload,
 * the merge's opens and reads, its outputs' uploads) fails the append and leaves the
 * store exactly as it was, every file the append wrote deleted, whether the
 * chunks were held in memory or went up first; the retry with the same batch
 * id lands once. Failures are injected through the store's fault hook
 * (store_fault.h). */
#include <ftw.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_fault.h"
#include "table/table_internal.h"
#include "test_table_helpers.h"

static struct {
    atomic_int armed;
    atomic_long count, target;
    tl_store_call call;
} F;

static tl_store_fault hook(tl_store_call call, const char *key, void *ctx)
{
    (void)ctx;
    if (!atomic_load(&F.armed) || call != F.call || strstr(key, "/data/") == NULL)
        return TL_FAULT_NONE;
    return atomic_fetch_add(&F.count, 1) + 1 == atomic_load(&F.target) ? TL_FAULT_FAIL
                                                                       : TL_FAULT_NONE;
}

/* Three batches of six rows, each a chunk of its own (TIMELAKE_APPEND_CHUNK_ROWS
 * is 4), over two days and two series: the chunks' runs overlap in both
 * partitions; the last row repeats the first's keys (a later write). */
static void chunked_stream(const struct ArrowSchema *schema, struct ArrowArrayStream *s)
{
    struct ArrowArray batches[3];
    int64_t day = 1714521600000000LL; /* 2024-05-01 */
    for (int b = 0; b < 3; b++) {
        int64_t times[6];
        const char *keys[6];
        for (int i = 0; i < 6; i++) {
            int at = b == 2 && i == 5 ? 2 : 1 + b * 6 + i; /* b 0, i 1's */
            times[i] = day + (i % 2) * 86400000000LL + (int64_t)at * 1000000LL;
            keys[i] = i % 4 < 2 ? "pump-1" : "pump-2";
        }
        tbatch_time_key(&batches[b], times, keys, 6);
    }
    struct ArrowSchema copy;
    tl_error err;
    CHECK_OK(tl_schema_copy(schema, &copy, &err), &err);
    CHECK_OK(tl_stream_from_batches(&copy, batches, 3, s, &err), &err);
}

/* ---- The files under a directory, as one string ---- */

static char listing[1 << 16];

static int list_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)ftw;
    if (flag == FTW_F && strlen(listing) + strlen(path) + 2 < sizeof listing) {
        strcat(listing, path);
        strcat(listing, "\n");
    }
    return 0;
}

/* Every file of the table (nftw's order is the directory's: compared as a
 * sorted multiset would be, by count and membership). */
static char *files_of(const char *dir, int *count)
{
    listing[0] = 0;
    nftw(dir, list_one, 16, FTW_PHYS);
    *count = 0;
    for (const char *p = listing; *p; p++) *count += *p == '\n';
    return strdup(listing);
}

static bool same_files(const char *a, int na, const char *b, int nb)
{
    if (na != nb) return false;
    for (const char *p = a; *p;) {
        const char *nl = strchr(p, '\n');
        char line[1024];
        snprintf(line, sizeof line, "%.*s\n", (int)(nl - p), p);
        if (strstr(b, line) == NULL) return false;
        p = nl + 1;
    }
    return true;
}

static tl_status append_chunks(tl_table *t, const struct ArrowSchema *schema, tl_append_result *r,
                               tl_error *err)
{
    struct ArrowArrayStream s;
    chunked_stream(schema, &s);
    tl_append_options o = {.maintain = 0, .batch_id = "chunks"};
    return tl_table_append(t, &s, &o, r, err);
}

/* Fails the 1st, 2nd, ... data-file call of kind `call` until the append
 * runs through; each failed run must leave the table's files as they were. */
static void sweep(const char *name, const char *hold, tl_store_call call)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *t = ttable_create(&lake, name, "t", "device", "u", false, &schema);
    char dir[700];
    snprintf(dir, sizeof dir, "%s/%s/default/t", unit_tmpdir(), name);
    setenv("TIMELAKE_APPEND_CHUNK_ROWS", "4", 1);
    setenv("TIMELAKE_APPEND_HOLD_BYTES", hold, 1);
    int n_before, n_after, failed = 0;
    char *before = files_of(dir, &n_before);
    tl_append_result r;
    tl_error err;
    tl_status st = TL_ERR_STORAGE;
    for (long target = 1; st != TL_OK && target < 50; target++) {
        F.call = call;
        atomic_store(&F.count, 0);
        atomic_store(&F.target, target);
        atomic_store(&F.armed, 1);
        st = append_chunks(t, &schema, &r, &err);
        atomic_store(&F.armed, 0);
        tl_store_settle(t->lake->store);
        char *after = files_of(dir, &n_after);
        if (st != TL_OK) {
            failed++;
            CHECK(strstr(err.message, "injected failure") != NULL);
            CHECK_INT(tl_table_version(t), 1);
            if (!same_files(before, n_before, after, n_after))
                fprintf(stderr, "%s, call %ld: before\n%safter\n%s", name, target, before, after);
            CHECK(same_files(before, n_before, after, n_after));
        }
        free(after);
    }
    CHECK_OK(st, &err);
    CHECK(failed > 0);
    CHECK_INT(r.files, 2); /* a file a day: the runs were merged */
    CHECK_INT(r.rows, 17); /* 18 rows, one key twice */
    CHECK_INT(ttable_sql_int64(lake, "SELECT count(*) FROM t"), 17);
    /* The same batch again: nothing written, nothing committed. */
    free(before);
    before = files_of(dir, &n_before);
    CHECK_OK(append_chunks(t, &schema, &r, &err), &err);
    CHECK(r.duplicate);
    char *after = files_of(dir, &n_after);
    CHECK(same_files(before, n_before, after, n_after));
    free(after);
    free(before);
    unsetenv("TIMELAKE_APPEND_CHUNK_ROWS");
    unsetenv("TIMELAKE_APPEND_HOLD_BYTES");
    tl_table_close(t);
    tl_schema_release(&schema);
    tl_lake_close(lake);
}

static void test_a_failed_merge_leaves_nothing(void)
{
    tl_store_set_fault(hook, NULL); /* consulted by the stores opened from now on */
    sweep("held_puts", "67108864", TL_CALL_PUT);
    sweep("uploaded_puts", "0", TL_CALL_PUT);
    sweep("uploaded_opens", "0", TL_CALL_OPEN);
    sweep("uploaded_reads", "0", TL_CALL_GET_RANGE);
    tl_store_set_fault(NULL, NULL);
}

UNIT_TESTS(UNIT(test_a_failed_merge_leaves_nothing))
