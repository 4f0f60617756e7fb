/* The control plane's migrations on databases that older builds left. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "unit.h"

/* Run summaries as builds before 0dfd046 stored them, and what opening the
 * database makes of each: a table without partition keys that got rows is
 * one partition written (it said 0), and the run's total counts it. */
static const struct {
    const char *id, *before, *after;
} JOBS[] = {
    {"one-table",
     "{\"files_processed\":2,\"rows_written\":100,\"partitions_written\":0,\"run_kind\":"
     "\"incremental\",\"tables\":{\"t\":{\"run_kind\":\"incremental\",\"full_reason\":null,"
     "\"rows_written\":100,\"partitions_written\":0,\"version\":3}},\"skipped\":[],\"errors\":[]}",
     "{\"files_processed\":2,\"rows_written\":100,\"partitions_written\":1,\"run_kind\":"
     "\"incremental\",\"tables\":{\"t\":{\"run_kind\":\"incremental\",\"full_reason\":null,"
     "\"rows_written\":100,\"partitions_written\":1,\"version\":3}},\"skipped\":[],\"errors\":[]}"},
    /* Beside a partitioned table, which counted right; an odd table id. */
    {"two-tables",
     "{\"partitions_written\":3,\"tables\":{\"by day\":{\"rows_written\":10,"
     "\"partitions_written\":3},\"flat\":{\"rows_written\":5,\"partitions_written\":0}}}",
     "{\"partitions_written\":4,\"tables\":{\"by day\":{\"rows_written\":10,"
     "\"partitions_written\":3},\"flat\":{\"rows_written\":5,\"partitions_written\":1}}}"},
    /* Nothing written: 0 partitions was right. */
    {"nothing-new",
     "{\"partitions_written\":0,\"tables\":{\"t\":{\"rows_written\":0,\"partitions_written\":0}}}",
     NULL},
    /* Written by a build with the fix. */
    {"new-build",
     "{\"partitions_written\":1,\"tables\":{\"t\":{\"rows_written\":4,\"partitions_written\":1}}}",
     NULL},
    /* A failed run, a queued one, text that is not JSON, a shape not ours. */
    {"failed", "{\"error\":\"table t: storage failed\"}", NULL},
    {"queued", NULL, NULL},
    {"not-json", "{\"partitions_written\":0,", NULL},
    {"odd-shape",
     "{\"partitions_written\":\"0\",\"tables\":{\"t\":{\"rows_written\":5,\"partitions_written\":"
     "0}}}",
     NULL},
};
#define N_JOBS (sizeof JOBS / sizeof *JOBS)

static void check_summaries(karet_db *db, int mended)
{
    for (size_t i = 0; i < N_JOBS; i++) {
        json_t *row = db_query_one(db, "SELECT summary FROM jobs WHERE id = ?", "s", JOBS[i].id);
        const char *want = mended && JOBS[i].after ? JOBS[i].after : JOBS[i].before;
        const char *got = json_string_value(json_object_get(row, "summary"));
        if (row == NULL || (want == NULL) != (got == NULL) || (want && strcmp(want, got) != 0))
            unit_fail(__FILE__, __LINE__, "job %s: %s, expected %s", JOBS[i].id,
                      got ? got : "(null)", want ? want : "(null)");
        json_decref(row);
    }
}

static void test_old_run_records_count_an_unpartitioned_table(void)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/old.db", unit_tmpdir());
    karet_db *db = NULL;
    /* A database at schema version 1, as the builds before the migration
     * left it, with their run records. */
    CHECK_INT(db_open(path, &db, err, sizeof err), DB_OK);
    CHECK_INT(db_exec(db, NULL, "PRAGMA user_version = 1", ""), DB_OK);
    for (size_t i = 0; i < N_JOBS; i++)
        CHECK_INT(db_exec(db, NULL,
                          "INSERT INTO jobs (id, pipeline, status, trigger, enqueued_at, summary) "
                          "VALUES (?, 'web', 'completed', 'manual', ?, ?)",
                          "sis", JOBS[i].id, (int64_t)i, JOBS[i].before),
                  DB_OK);
    check_summaries(db, 0);
    db_close(db);

    CHECK_INT(db_open(path, &db, err, sizeof err), DB_OK);
    CHECK_INT(db_schema_version(db), 2);
    check_summaries(db, 1);
    db_close(db);
    /* Once only, and a second pass would change nothing either. */
    CHECK_INT(db_open(path, &db, err, sizeof err), DB_OK);
    check_summaries(db, 1);
    CHECK_INT(db_exec(db, NULL, "PRAGMA user_version = 1", ""), DB_OK);
    db_close(db);
    CHECK_INT(db_open(path, &db, err, sizeof err), DB_OK);
    CHECK_INT(db_schema_version(db), 2);
    check_summaries(db, 1);
    db_close(db);
}

UNIT_TESTS(UNIT(test_old_run_records_count_an_unpartitioned_table))
