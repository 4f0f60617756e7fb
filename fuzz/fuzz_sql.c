/* libFuzzer target: the SQL entry point, tl_lake_sql, over query text, with
 * the whole path live: DuckDB's parse (json_serialize_sql), our syntax-tree
 * walk (table references, pruning predicates, time literals, newest-row
 * shapes), the AST cache, the view registration and DuckDB running the query
 * over a small local lake created once per process (a dedup time-series table
 * with duplicates and out-of-order times across three appends, and a plain
 * table). The text guesser (sql_guess.c, used only for remote lakes) and the
 * time-literal parser are driven directly on the same text.
 *
 * Checks beyond the sanitizers: a failure is TL_ERR_QUERY, TL_ERR_NOT_FOUND
 * (unknown table) or TL_ERR_INVALID (a name no table can have), with a
 * message; a success yields a well-formed stream.
 *
 * DuckDB is not instrumented: coverage guides on our code only. Queries that
 * run long inside DuckDB (range(1e12)) are interrupted by a watchdog, so that
 * libFuzzer's -timeout still catches a hang in our code. */
#include <ftw.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arrow/array.h"
#include "formats/csv/csv_reader.h"
#include "query/engine.h"
#include "query/sql_guess.h"
#include "query/sql_plan_time.h"
#include "query/statement_cache.h"
#include "timelake.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define WATCHDOG_MS 1500

static tl_lake *lake;
static pthread_mutex_t dog_mu = PTHREAD_MUTEX_INITIALIZER;
static struct timespec run_started; /* tv_sec 0: no query running */

static const char *const readings_csv[] = {
    /* out of order, duplicates of (series, time) within and across appends */
    "time,device_id,temp,site\n"
    "2024-03-01T00:10:00Z,dev-1,1.5,0\n2024-03-01T00:00:00Z,dev-1,1.0,0\n"
    "2024-03-02T08:00:00Z,dev-2,-3.25,1\n2024-03-01T00:10:00Z,dev-1,2.5,2\n"
    "2024-03-03T23:59:59Z,dev-3,,1\n2024-03-01T12:00:00Z,dev-2,7,\n",
    "time,device_id,temp,site\n"
    "2024-03-01T00:00:00Z,dev-1,9.0,0\n2024-03-02T08:00:00Z,dev-2,10,2\n"
    "2024-02-28T01:02:03.456789Z,dev-4,0,0\n2024-03-05T00:00:00Z,dev-1,4,1\n",
    "time,device_id,temp,site\n"
    "2024-03-05T00:00:00Z,dev-1,44,1\n2024-03-03T23:59:59Z,dev-3,33,\n",
};

static void die(const char *what, const tl_error *err)
{
    fprintf(stderr, "fuzz_sql setup: %s: %s\n", what, err ? err->message : "");
    abort();
}

static void append_csv(tl_table *t, const char *csv, const struct ArrowSchema *target)
{
    tl_error err = {0};
    tl_text_input *in;
    struct ArrowArrayStream s;
    tl_append_result res;
    if (tl_text_input_open_memory((const uint8_t *)csv, strlen(csv), "seed.csv", &in, &err) ||
        tl_csv_stream_open(in, &(tl_csv_options){0}, target, &s, &err) ||
        tl_table_append(t, &s, NULL, &res, &err))
        die("appending", &err);
}

static void make_schema(struct ArrowSchema *s, const char *const *formats, const char *const *names,
                        int n)
{
    if (tl_schema_init(s, "+s", "", 0, n, NULL)) abort();
    for (int i = 0; i < n; i++)
        if (tl_schema_init(s->children[i], formats[i], names[i], i == 0 ? 0 : ARROW_FLAG_NULLABLE,
                           0, NULL))
            abort();
}

static void create_tables(void)
{
    tl_error err = {0};
    tl_table *t;
    struct ArrowSchema schema;
    make_schema(&schema, (const char *const[]){"tsu:UTC", "u", "g", "i"},
                (const char *const[]){"time", "device_id", "temp", "site"}, 4);
    const char *key[] = {"device_id"};
    tl_table_options o = {.time_column = "time",
                          .series_key = key,
                          .series_key_len = 1,
                          .dedup = -1,
                          .ingest_time = -1};
    if (tl_lake_create_table(lake, "iot.readings", &schema, &o, &t, &err)) die("create", &err);
    for (size_t i = 0; i < sizeof readings_csv / sizeof *readings_csv; i++)
        append_csv(t, readings_csv[i], &schema);
    tl_table_close(t);
    tl_schema_release(&schema);

    make_schema(&schema, (const char *const[]){"l", "u"}, (const char *const[]){"a", "b"}, 2);
    if (tl_lake_create_table(lake, "default.notes", &schema, NULL, &t, &err)) die("create", &err);
    append_csv(t, "a,b\n1,x\n2,\n3,\"y\"\"z\"\n", &schema);
    tl_table_close(t);
    tl_schema_release(&schema);
}

/* Interrupts a query DuckDB has been running for too long. */
static void *watchdog(void *unused)
{
    (void)unused;
    for (;;) {
        usleep(100 * 1000);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        pthread_mutex_lock(&dog_mu);
        tl_query_engine *e = lake ? lake->query : NULL;
        long ms = (now.tv_sec - run_started.tv_sec) * 1000 +
                  (now.tv_nsec - run_started.tv_nsec) / 1000000;
        if (run_started.tv_sec && ms > WATCHDOG_MS && e && e->conn) duckdb_interrupt(e->conn);
        pthread_mutex_unlock(&dog_mu);
    }
    return NULL;
}

static void set_running(bool on)
{
    pthread_mutex_lock(&dog_mu);
    if (on)
        clock_gettime(CLOCK_MONOTONIC, &run_started);
    else
        run_started.tv_sec = 0;
    pthread_mutex_unlock(&dog_mu);
}

static char lake_dir[] = "/tmp/tl-fuzz-sql-XXXXXX";

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* At exit: the lake and its directory go. */
static void teardown(void)
{
    pthread_mutex_lock(&dog_mu);
    tl_lake *l = lake;
    lake = NULL;
    pthread_mutex_unlock(&dog_mu);
    tl_lake_close(l);
    nftw(lake_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void setup(void)
{
    char *dir = lake_dir;
    if (mkdtemp(dir) == NULL) abort();
    atexit(teardown);
    tl_error err = {0};
    if (tl_lake_open(dir, NULL, &lake, &err)) die("opening the lake", &err);
    create_tables();
    /* Bounds what one query may take of the machine (before the engine's
     * configuration is locked), and starts the engine. */
    tl_query_engine_settings = "SET threads = 1; SET memory_limit = '512MB'";
    tl_statement_cache_off = true; /* libFuzzer's leak check after each input (statement_cache.h) */
    struct ArrowArrayStream s;
    if (tl_lake_sql(lake, "SELECT 1", NULL, &s, NULL, &err)) die("first query", &err);
    s.release(&s);
    pthread_t dog;
    if (pthread_create(&dog, NULL, watchdog, NULL) != 0) abort();
    pthread_detach(dog);
}

/* Reads a result to the end, checking its shape (any Arrow type may come
 * back, nested ones too: the batches are checked against the schema, not
 * viewed). */
static void drain(struct ArrowArrayStream *s)
{
    struct ArrowSchema schema;
    if (s->get_schema(s, &schema) != 0) abort(); /* a result that opened has a schema */
    for (;;) {
        struct ArrowArray a;
        if (s->get_next(s, &a) != 0 || a.release == NULL) break;
        if (a.n_children != schema.n_children || a.length < 0) abort();
        for (int64_t i = 0; i < a.n_children; i++)
            if (a.children[i]->length != a.length) abort();
        a.release(&a);
    }
    schema.release(&schema);
    s->release(s);
}

static void check_error(tl_status st, const tl_error *err, const char *query)
{
    if (st == TL_ERR_QUERY || st == TL_ERR_NOT_FOUND || st == TL_ERR_INVALID) {
        if (err->message[0] != '\0') return;
        fprintf(stderr, "error %d without a message for: %s\n", (int)st, query);
    } else {
        fprintf(stderr, "unexpected status %d (%s) for: %s\n", (int)st, err->message, query);
    }
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (lake == NULL) setup();
    char *query = malloc(size + 1);
    if (query == NULL) return 0;
    memcpy(query, data, size);
    query[size] = '\0'; /* text after a NUL is not part of the C string */

    tl_strlist names = {0};
    if (tl_sql_guess_tables(query, 4, &names) == 0 && names.len > 4) abort();
    tl_strlist_free(&names);
    int64_t us;
    (void)tl_sql_parse_time(query, &us);

    /* The odd sizes resolve unqualified names in another namespace. */
    tl_error err = {0};
    struct ArrowArrayStream out;
    tl_query_stats stats;
    set_running(true);
    tl_status st = tl_lake_sql(lake, query, size & 1 ? "iot" : NULL, &out, &stats, &err);
    if (st == TL_OK) drain(&out);
    set_running(false);
    if (st != TL_OK) check_error(st, &err, query);
    free(query);
    return 0;
}
