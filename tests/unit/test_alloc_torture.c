/* Torture test of the write path against allocation failures, in the manner
 * of SQLite's and curl's: for each operation on the in-memory store, fail
 * the library's 1st allocation, then its 2nd, ... until it runs through.
 * After each failure:
 *   - the operation failed with TL_ERR_NOMEM and a message (or, when the
 *     allocation had a fallback, succeeded with the rows of a clean run);
 *   - no crash, no sanitizer report, and under ASan no leak (a recoverable
 *     LeakSanitizer check after each operation's runs, two thirds of the
 *     test's time when made after each run: ALLOC_TORTURE_LEAKS=each does,
 *     to find the run that leaked);
 *   - the table reads exactly as before the operation or exactly as after
 *     (a clean run's rows), through a newly opened handle;
 *   - a retry on the same handle succeeds and gives the rows of a clean
 *     run: the append's batch id adds its rows once.
 * The library's allocations are counted through ld --wrap (alloc_fail.h),
 * armed only around the operation.
 * An append of 6 rows makes about 1,100 allocations, a maintenance of two
 * partitions of three files 2,800, set_properties 300, a rollback 1,200 and
 * a rollup's refresh through SQL 9,500, a table's creation 520 and its
 * drop 126: the suite runs a sample of
 * ALLOC_TORTURE_POINTS of each (default: 60 of the append and the
 * maintenance, 12-24 of the others, for the suite's time): the first 12, then the rest
 * spread evenly, the last included; ALLOC_TORTURE_POINTS=0 runs every one (many minutes
 * under ASan; 250 of the append and of the maintenance pass, 60 of each of
 * the others, all of the drop), ALLOC_TORTURE_OP one operation. */
#include <jansson.h>
#include <stdlib.h>
#include <time.h>

#include "alloc_fail.h"
#include "core/json_text.h"
#include "formats/avro/avro_schema.h"
#include "test_table_helpers.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define HAVE_LSAN 1
#else
#define HAVE_LSAN 0
#endif

#if HAVE_LSAN
/* DuckDB's live plans and caches read as leaked in the middle of the run
 * (they hang from memory LeakSanitizer does not scan): only the library's
 * own leaks count here. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libduckdb.so\n";
}

const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
    return "print_suppressions=0";
}
#endif

/* The run's target: -1 none, 0 count only. The operations arm it around
 * the library call alone, not around making their input. */
static long pending = -1;

static void begin(void)
{
    if (pending >= 0) alloc_fail_arm(pending);
}

/* ---- A table and its rows ---- */

static tl_lake *lake;
static int64_t now_us;

typedef struct fixture {
    char table[48], rollup[48]; /* rollup: empty without one */
    tl_table *t;
    struct ArrowSchema schema;
    int64_t first_snapshot; /* after the setup's first append */
} fixture;

/* Rows `n` of batch `b`, in two partitions and two series. */
static tl_status append_batch(fixture *f, int b, int n, const tl_append_options *o,
                              tl_append_result *r, tl_error *err)
{
    struct ArrowArrayStream s;
    ttable_two_partition_stream(&f->schema, now_us, b, n, &s);
    tl_append_result ignored;
    begin();
    tl_status st = tl_table_append(f->t, &s, o, r ? r : &ignored, err);
    alloc_fail_disarm();
    return st;
}

/* A rollup of the table, then a fourth append it has not taken yet. */
static void add_stale_rollup(fixture *f, int serial)
{
    snprintf(f->rollup, sizeof f->rollup, "a%d.r", serial);
    char sql[400];
    ttable_rollup_sql(f->rollup, f->table, false, sql, sizeof sql);
    ttable_sql_ok(lake, sql);
    tl_append_options o = {.maintain = 0};
    tl_error err;
    CHECK_OK(append_batch(f, 3, 4, &o, NULL, &err), &err);
}

/* A table of three appends of 4 rows (no maintenance): each partition has
 * three small files for maintenance to compact. */
static tl_status create_table(fixture *f, tl_error *err)
{
    return ttable_create_device_table(lake, f->table, &f->schema, &f->t, err);
}

/* What the fixture has of a rollup. */
enum { NO_ROLLUP, STALE_ROLLUP, NAMED_ROLLUP /* its name alone: the operation creates it */ };

static void setup(fixture *f, bool table, int rollup)
{
    static int serial;
    memset(f, 0, sizeof *f);
    int id = serial++;
    snprintf(f->table, sizeof f->table, "a%d.t", id);
    tl_error err;
    ttable_device_schema(&f->schema);
    if (!table) return;
    CHECK_OK(create_table(f, &err), &err);
    const char *props[] = {"auto-maintain", "false", NULL};
    CHECK_OK(tl_table_set_properties(f->t, props, &err), &err);
    tl_append_options o = {.maintain = 0};
    for (int b = 0; b < 3; b++) {
        CHECK_OK(append_batch(f, b, 4, &o, NULL, &err), &err);
        if (b > 0) continue;
        tl_table_info info;
        CHECK_OK(tl_table_info_get(f->t, &info, &err), &err);
        f->first_snapshot = info.snapshot_id;
        tl_table_info_clear(&info);
    }
    if (rollup == STALE_ROLLUP) add_stale_rollup(f, id);
    if (rollup == NAMED_ROLLUP) snprintf(f->rollup, sizeof f->rollup, "a%d.r", id);
}

static void close_fixture(fixture *f)
{
    tl_table_close(f->t);
    tl_error err;
    if (f->rollup[0]) CHECK_OK(tl_lake_drop_table(lake, f->rollup, &err), &err);
    CHECK_OK(tl_lake_drop_table(lake, f->table, &err), &err);
    tl_schema_release(&f->schema);
}

/* What a reader sees: the rows, a digest of them (order-free), the newest
 * row of each series, the data files, the property my.note, the attachment
 * karet.files, the rollups the table names (timelake.rollups), the rollup's
 * groups and the rows they count, and whether the registry of table names
 * still lists the bystander (a table no operation touches). */
typedef struct table_state {
    int64_t rows, digest, latest, files;
    bool missing; /* no such table */
    char note[16], attachment[16];
    int rollups;       /* how many timelake.rollups names */
    bool lists_rollup; /* ... the fixture's rollup among them */
    bool rollup_missing;
    int64_t groups, counted;
    bool bystander_listed;
    char error[300]; /* unreadable: why */
} table_state;

#define BYSTANDER "bystander.t"

/* The first row's two BIGINT columns of query `sql`. */
static void read_two(const char *sql, int64_t *first, int64_t *second, table_state *s)
{
    struct ArrowArrayStream out;
    tl_error err;
    if (tl_lake_sql(lake, sql, NULL, &out, NULL, &err) != TL_OK) {
        snprintf(s->error, sizeof s->error, "%.280s", err.message);
        return;
    }
    struct ArrowArray a;
    if (out.get_next(&out, &a) != 0 || a.release == NULL) {
        snprintf(s->error, sizeof s->error, "%.280s", out.get_last_error(&out));
    } else {
        *first = ((const int64_t *)a.children[0]->buffers[1])[0];
        *second = ((const int64_t *)a.children[1]->buffers[1])[0];
        a.release(&a);
    }
    out.release(&out);
}

static void read_rows(const char *name, table_state *s)
{
    char sql[300];
    snprintf(sql, sizeof sql,
             "SELECT count(*), coalesce(sum(hash(device, time) %% 1000000007), 0)::BIGINT FROM %s",
             name);
    read_two(sql, &s->rows, &s->digest, s);
}

static void read_rollup(const char *name, table_state *s)
{
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT count(*), coalesce(sum(n), 0)::BIGINT FROM %s", name);
    read_two(sql, &s->groups, &s->counted, s);
}

/* Counts the names of list "ns.a,ns.b" and looks for `name` among them. */
static void read_rollups(const char *list, const char *name, table_state *s)
{
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        s->rollups++;
        s->lists_rollup |= len > 0 && n == len && strncmp(p, name, len) == 0;
        p += end ? n + 1 : n;
    }
}

static void read_note(const tl_table *t, const char *rollup, table_state *s)
{
    char **props = NULL;
    tl_error err;
    if (tl_table_properties(t, &props, &err) != TL_OK) {
        snprintf(s->error, sizeof s->error, "properties: %.270s", err.message);
        return;
    }
    for (char **p = props; p[0] && p[1]; p += 2) {
        if (strcmp(p[0], "my.note") == 0) snprintf(s->note, sizeof s->note, "%s", p[1]);
        if (strcmp(p[0], "timelake.rollups") == 0) read_rollups(p[1], rollup, s);
    }
    tl_strings_free(props);
}

/* The attachment a replace commits, as the current snapshot names it. */
static void read_attachment(tl_table *t, table_state *s)
{
    void *data = NULL;
    size_t len = 0;
    tl_error err;
    tl_status st = tl_table_attachment(t, "karet.files", &data, &len, &err);
    if (st == TL_OK)
        snprintf(s->attachment, sizeof s->attachment, "%.*s", (int)len, (const char *)data);
    else if (st != TL_ERR_NOT_FOUND)
        snprintf(s->error, sizeof s->error, "attachment: %.270s", err.message);
    tl_free(data);
}

static void read_registry(table_state *s)
{
    char **names = NULL;
    tl_error err;
    if (tl_lake_list_tables(lake, &names, &err) != TL_OK) {
        snprintf(s->error, sizeof s->error, "list tables: %.270s", err.message);
        return;
    }
    for (char **p = names; *p; p++) s->bystander_listed |= strcmp(*p, BYSTANDER) == 0;
    tl_strings_free(names);
}

static bool rollup_exists(const char *rollup, table_state *s)
{
    tl_table *t = NULL;
    tl_error err;
    tl_status st = tl_lake_open_table(lake, rollup, &t, &err);
    tl_table_close(t);
    if (st != TL_OK && st != TL_ERR_NOT_FOUND)
        snprintf(s->error, sizeof s->error, "open rollup: %.270s", err.message);
    return st == TL_OK;
}

static void read_latest(const char *name, table_state *s)
{
    struct ArrowArrayStream out;
    tl_latest_report report = {{0}};
    tl_error err;
    if (tl_lake_latest_report(lake, name, &out, &report, &err) != TL_OK) {
        snprintf(s->error, sizeof s->error, "latest: %.270s", err.message);
        return;
    }
    struct ArrowArray a;
    while (out.get_next(&out, &a) == 0 && a.release) {
        s->latest += a.length;
        a.release(&a);
    }
    out.release(&out);
    if (report.warning[0]) snprintf(s->error, sizeof s->error, "latest: %.270s", report.warning);
}

/* Through a newly opened handle, as another user of the lake would. */
static table_state read_state(const char *name, const char *rollup)
{
    table_state s = {0};
    tl_table *t = NULL;
    tl_table_info info;
    tl_error err;
    read_registry(&s);
    tl_status st = tl_lake_open_table(lake, name, &t, &err);
    if (st == TL_ERR_NOT_FOUND) {
        s.missing = true;
        return s;
    }
    if (st != TL_OK || tl_table_info_get(t, &info, &err) != TL_OK) {
        snprintf(s.error, sizeof s.error, "open: %.280s", err.message);
        tl_table_close(t);
        return s;
    }
    s.files = info.files;
    tl_table_info_clear(&info);
    read_note(t, rollup, &s);
    if (!s.error[0]) read_attachment(t, &s);
    tl_table_close(t);
    if (!s.error[0]) read_rows(name, &s);
    if (!s.error[0]) read_latest(name, &s);
    if (!s.error[0] && rollup[0]) s.rollup_missing = !rollup_exists(rollup, &s);
    if (!s.error[0] && rollup[0] && !s.rollup_missing) read_rollup(rollup, &s);
    return s;
}

static bool same_rows(const table_state *a, const table_state *b)
{
    return !a->error[0] && !b->error[0] && a->missing == b->missing && a->rows == b->rows &&
           a->digest == b->digest && a->latest == b->latest && strcmp(a->note, b->note) == 0 &&
           strcmp(a->attachment, b->attachment) == 0 && a->rollups == b->rollups &&
           a->lists_rollup == b->lists_rollup && a->rollup_missing == b->rollup_missing &&
           a->groups == b->groups && a->counted == b->counted && a->bystander_listed &&
           b->bystander_listed;
}

static bool same_state(const table_state *a, const table_state *b)
{
    return same_rows(a, b) && a->files == b->files;
}

/* ---- Operations ---- */

typedef struct op {
    const char *name;
    tl_status (*run)(fixture *f, tl_error *err);
    bool no_table; /* the fixture has the table's name and schema alone */
    int rollup;    /* NO_ROLLUP, STALE_ROLLUP (has not taken the last append), NAMED_ROLLUP */
    long points;   /* in the default sample (the suite's time); 0: only when named */
    long tail;     /* ... and as many of the last allocations each */
    long also[10]; /* ... and these, where bugs were (0: none) */
    /* An append with inline maintenance: a failure in its maintenance leaves
     * the append committed alone (more files; a retry is a duplicate). */
    bool maintains;
} op;

/* The report of the last append an operation made. */
static tl_append_result last_append;

static tl_status run_append_batch_id(fixture *f, tl_error *err)
{
    tl_append_options o = {.maintain = 0, .batch_id = "batch-7"};
    return append_batch(f, 7, 6, &o, NULL, err);
}

/* An overwrite with a batch id and an attachment, as Karet's pipeline runs
 * do: the retry is a duplicate when the failed run committed after all. */
static tl_status run_replace(fixture *f, tl_error *err)
{
    tl_attachment files = {"karet.files", "[\"a.csv\"]", 9};
    tl_append_options o = {
        .maintain = 0, .batch_id = "run-7", .attachments = &files, .attachments_len = 1};
    struct ArrowArrayStream s;
    ttable_two_partition_stream(&f->schema, now_us, 7, 6, &s);
    tl_append_result r;
    begin();
    tl_status st = tl_table_replace(f->t, &s, &o, &r, err);
    alloc_fail_disarm();
    return st;
}

/* An append of three chunks (TIMELAKE_APPEND_CHUNK_ROWS) of four rows whose
 * runs overlap in both partitions: the first chunk encoded, the others held
 * as rows (append_hold.c), merged per partition (append_merge.c). */
static tl_status run_append_chunks(fixture *f, tl_error *err)
{
    struct ArrowArray batches[3];
    int64_t old_day = (now_us / 86400000000LL - 60) * 86400000000LL;
    for (int b = 0; b < 3; b++) {
        int64_t times[4];
        const char *keys[4];
        for (int i = 0; i < 4; i++) {
            int64_t base = i % 2 ? now_us - 3 * 3600000000LL : old_day;
            times[i] = base + (int64_t)(100 + b * 4 + i) * 1000000LL;
            keys[i] = i < 2 ? "pump-1" : "pump-2";
        }
        tbatch_time_key(&batches[b], times, keys, 4);
    }
    struct ArrowSchema copy;
    struct ArrowArrayStream s;
    CHECK_OK(tl_schema_copy(&f->schema, &copy, err), err);
    CHECK_OK(tl_stream_from_batches(&copy, batches, 3, &s, err), err);
    tl_append_options o = {.maintain = 0, .batch_id = "chunks-7"};
    tl_append_result r;
    setenv("TIMELAKE_APPEND_CHUNK_ROWS", "4", 1);
    begin();
    tl_status st = tl_table_append(f->t, &s, &o, &r, err);
    alloc_fail_disarm();
    unsetenv("TIMELAKE_APPEND_CHUNK_ROWS");
    return st;
}

/* An append whose inline compaction is due (the fixture's old day is cold,
 * with three files) and its expiry (the fixture's snapshots are older than
 * snapshot-retention), both folded into its commit: the memory store folds
 * only when no head is written. The properties are set before the counting. */
static tl_status run_append_maintained(fixture *f, tl_error *err)
{
    const char *props[] = {"head-format", "none", "snapshot-retention", "0s", "min-snapshots",
                           "2",           NULL};
    TL_TRY(tl_table_set_properties(f->t, props, err));
    tl_append_options o = {.maintain = 1, .batch_id = "batch-7"};
    memset(&last_append, 0, sizeof last_append);
    return append_batch(f, 7, 6, &o, &last_append, err);
}

static tl_status run_maintain(fixture *f, tl_error *err)
{
    tl_maintain_options o = {.compact = 1};
    tl_maintain_report r;
    begin();
    tl_status st = tl_table_maintain(f->t, &o, &r, err);
    alloc_fail_disarm();
    return st;
}

static tl_status run_set_properties(fixture *f, tl_error *err)
{
    const char *props[] = {"retention", "90d", "my.note", "x", NULL};
    begin();
    tl_status st = tl_table_set_properties(f->t, props, err);
    alloc_fail_disarm();
    return st;
}

static tl_status run_rollback(fixture *f, tl_error *err)
{
    begin();
    tl_status st = tl_table_rollback(f->t, f->first_snapshot, err);
    alloc_fail_disarm();
    return st;
}

/* Compacts the three small files of each partition and sets the format
 * version and the snapshots' keeping, each step a commit. */
static tl_status run_upgrade(fixture *f, tl_error *err)
{
    tl_upgrade_options o = {.compact = 1};
    tl_upgrade_report r = {0};
    begin();
    tl_status st = tl_table_upgrade(f->t, &o, &r, err);
    alloc_fail_disarm();
    if (st == TL_OK) tl_upgrade_report_clear(&r);
    return st;
}

/* Runs one statement under the armed failures and drains its result. */
static tl_status run_sql_armed(const char *sql, tl_error *err)
{
    struct ArrowArrayStream s;
    begin();
    tl_status st = tl_lake_sql(lake, sql, NULL, &s, NULL, err);
    alloc_fail_disarm();
    if (st == TL_OK) ttable_drain(&s);
    return st;
}

/* The rollup's table, its rows, then the raw table's list of rollups: a
 * failure must undo what was made. The retry (IF NOT EXISTS) finds the
 * rollup a failed call made after all. */
static tl_status run_rollup_create(fixture *f, tl_error *err)
{
    char sql[400];
    ttable_rollup_sql(f->rollup, f->table, pending < 0, sql, sizeof sql);
    return run_sql_armed(sql, err);
}

/* Through SQL, as a user refreshes; the library's status as it returns it. */
static tl_status run_rollup_refresh(fixture *f, tl_error *err)
{
    char sql[100];
    snprintf(sql, sizeof sql, "REFRESH MATERIALIZED ROLLUP %s", f->rollup);
    return run_sql_armed(sql, err);
}

static tl_status run_create(fixture *f, tl_error *err)
{
    tl_table_close(f->t);
    f->t = NULL;
    begin();
    tl_status st = create_table(f, err);
    alloc_fail_disarm();
    /* A retry finds the table the failed call created after all. */
    return st == TL_ERR_EXISTS && pending < 0 ? TL_OK : st;
}

static tl_status run_drop(fixture *f, tl_error *err)
{
    begin();
    tl_status st = tl_lake_drop_table(lake, f->table, err);
    alloc_fail_disarm();
    return st;
}

/* The rollback's allocation 350 (of 1,197) is where jansson 2.14's
 * json_loadb of the metadata returned a string with a character missing
 * instead of failing (the manifest list's name came back as
 * snap-<id>--<uuid>.avro), and the rollback committed metadata naming a file
 * that does not exist: tl_json_loadb now throws away a document parsed
 * while an allocation failed.
 * The rollup create's allocations 690-738 and 1629 are where its parse took
 * a failed copy (of a name, of a width's text, of the AT clause's query) for
 * something the user wrote: "a bad alias", "isn't an aggregate", "not a fixed
 * width", "the value is no snapshot id" instead of out of memory. Its 2715th
 * is where jansson's json_dumps lost an object's key it could not write and
 * returned malformed JSON (DuckDB refused the query's tree).
 * The upgrade's 39th and 912th, the rollup create's 51st, 813th and 1674th
 * and the creation's 246th (and the maintenance's 39th in its full sweep)
 * are where jansson 2.14's lexer lost a string's closing quote and read and
 * wrote past it (a SEGV, an assert, or a heap ASan found damaged later):
 * skipped until tl_json_loadb failed every allocation after the first
 * failed one of a parse. */
static const op ops[] = {
    {"append with batch id", run_append_batch_id, false, NO_ROLLUP, 60, 0, {0}, false},
    {"append with inline maintenance due",
     run_append_maintained,
     false,
     NO_ROLLUP,
     24,
     0,
     {0},
     true},
    {"replace", run_replace, false, NO_ROLLUP, 20, 0, {0}, false},
    {"append of three chunks merged", run_append_chunks, false, NO_ROLLUP, 40, 0, {0}, false},
    {"maintain", run_maintain, false, NO_ROLLUP, 60, 0, {0}, false},
    {"upgrade", run_upgrade, false, NO_ROLLUP, 20, 0, {39, 912}, false},
    {"set_properties", run_set_properties, false, NO_ROLLUP, 20, 0, {0}, false},
    {"rollback", run_rollback, false, NO_ROLLUP, 20, 0, {0}, false},
    {"rollup create",
     run_rollup_create,
     false,
     NAMED_ROLLUP,
     20,
     0,
     {51, 690, 697, 705, 715, 813, 1629, 1674, 2715},
     false},
    {"rollup refresh", run_rollup_refresh, false, STALE_ROLLUP, 24, 0, {0}, false},
    {"create table", run_create, true, NO_ROLLUP, 12, 0, {246}, false},
    /* Its last allocations rewrite the registry of table names: a name that
     * could not be added there (allocation 127 of 134) dropped another table
     * from it. */
    {"drop table", run_drop, false, NO_ROLLUP, 12, 8, {0}, false},
};

/* ---- The torture loop ---- */

typedef struct baseline {
    table_state before, after;
    long allocations;
} baseline;

static long runs, absorbed;

static void report(const op *o, long n, const char *fmt, const char *detail)
{
    fprintf(stderr, "  [%s, allocation %ld failed] ", o->name, n);
    fprintf(stderr, fmt, detail);
    fputc('\n', stderr);
}

static void describe(const table_state *s, char *out, size_t size)
{
    snprintf(out, size,
             "%s%lld rows, %lld latest, %lld files, note '%s', attachment '%s', %d rollups%s, "
             "%s%lld groups of %lld, %s %s",
             s->missing ? "no table, " : "", (long long)s->rows, (long long)s->latest,
             (long long)s->files, s->note, s->attachment, s->rollups,
             s->lists_rollup ? " (its own among them)" : "", s->rollup_missing ? "no rollup, " : "",
             (long long)s->groups, (long long)s->counted,
             s->bystander_listed ? "bystander listed" : "BYSTANDER NOT LISTED", s->error);
}

/* Whether LeakSanitizer finds memory nothing points to any more (it prints
 * the allocations). */
static bool leaked(void)
{
#if HAVE_LSAN
    return __lsan_do_recoverable_leak_check() != 0;
#else
    return false;
#endif
}

static bool leak_check_each_run;

/* One run with allocation n failed, and every check; false after a leak
 * (LeakSanitizer would report it again in every later run). */
static bool torture_once(const op *o, const baseline *b, long n)
{
    fixture f;
    setup(&f, !o->no_table, o->rollup);
    tl_error err = {0};
    pending = n;
    runs++;
    tl_status st = o->run(&f, &err);
    pending = -1;
    char desc[600];
    if (!alloc_fail_fired()) { /* fewer allocations than the baseline's */
        close_fixture(&f);
        return true;
    }
    table_state now = read_state(f.table, f.rollup);
    /* The append stood, its maintenance failed and said so: not compacted. */
    bool alone = o->maintains && st == TL_OK && last_append.maintenance_error[0];
    bool is_before = same_state(&now, &b->before),
         is_after = alone ? same_rows(&now, &b->after) : same_state(&now, &b->after);
    if (st == TL_OK) {
        absorbed++;
        if (!is_after) {
            describe(&now, desc, sizeof desc);
            report(o, n, "succeeded but reads %s", desc);
            CHECK(is_after);
        }
    } else {
        if (st != TL_ERR_NOMEM || !err.message[0]) {
            char m[400];
            snprintf(m, sizeof m, "(%s) %.300s", tl_status_name(st), err.message);
            report(o, n, "not an out-of-memory error: %s", m);
            CHECK(st == TL_ERR_NOMEM && err.message[0]);
        }
        if (!is_before && !is_after) {
            describe(&now, desc, sizeof desc);
            report(o, n, "neither before nor after: %s", desc);
            CHECK(is_before || is_after);
        }
    }
    /* The retry, on the handle that saw the failure, as its user would. */
    tl_error retry_err = {0};
    st = o->run(&f, &retry_err);
    if (st != TL_OK) {
        report(o, n, "retry failed: %s", retry_err.message);
        CHECK_OK(st, &retry_err);
    }
    table_state retried = read_state(f.table, f.rollup);
    /* After an append that stood alone the retry is a duplicate: it maintains nothing. */
    bool retried_ok = alone && last_append.duplicate ? same_rows(&retried, &b->after)
                                                     : same_state(&retried, &b->after);
    if (!retried_ok) {
        describe(&retried, desc, sizeof desc);
        report(o, n, "retried, reads %s", desc);
        CHECK(retried_ok);
    }
    close_fixture(&f);
    if (leak_check_each_run && leaked()) {
        report(o, n, "%s", "leaked memory (LeakSanitizer's report above)");
        CHECK(false);
        return false;
    }
    return true;
}

/* A clean run: the states before and after and how many allocations. */
static baseline measure(const op *o)
{
    baseline b = {0};
    fixture f;
    setup(&f, !o->no_table, o->rollup);
    b.before = read_state(f.table, f.rollup);
    tl_error err;
    int64_t version = o->maintains ? tl_table_version(f.t) : 0;
    pending = 0;
    CHECK_OK(o->run(&f, &err), &err);
    pending = -1;
    b.allocations = alloc_fail_count();
    /* It compacts and expires, in the append's own version (the
     * properties' is one more). */
    if (o->maintains)
        CHECK(last_append.maintenance.partitions_compacted == 1 &&
              last_append.maintenance.snapshots_expired > 0 && !last_append.maintenance_error[0] &&
              tl_table_version(f.t) == version + 2);
    b.after = read_state(f.table, f.rollup);
    CHECK(!b.before.error[0] && !b.after.error[0]);
    CHECK(!same_state(&b.before, &b.after)); /* or a failure could not show */
    close_fixture(&f);
    return b;
}

/* Allocation n failed, unless it comes before ALLOC_TORTURE_FROM (to go on
 * with a sweep after a crash, which ALLOC_TORTURE_TRACE finds: it names
 * each allocation before its run). */
static bool run_point(const op *o, const baseline *b, long n)
{
    const char *from = getenv("ALLOC_TORTURE_FROM");
    if (from && n < atol(from)) return true;
    if (getenv("ALLOC_TORTURE_TRACE")) fprintf(stderr, "  [%s] allocation %ld\n", o->name, n);
    return torture_once(o, b, n);
}

static void torture(const op *o)
{
    baseline b = measure(o);
    const char *env = getenv("ALLOC_TORTURE_POINTS");
    long max_points = env ? atol(env) : o->points ? o->points : 60;
    long calls = b.allocations;
    long points = calls < max_points || max_points <= 0 ? calls : max_points;
    /* The first allocations each (the table's reload and listing: a leak
     * there hid between the even points), then the rest spread evenly. */
    long head = points < 16 ? points / 2 : 12, rest = points - head;
    fprintf(stderr, "%s: %ld allocations, %ld of them failed in turn\n", o->name, calls, points);
    for (long i = 0; i < points; i++) {
        long n = i < head   ? i + 1
                 : rest > 1 ? head + 1 + (i - head) * (calls - head - 1) / (rest - 1)
                            : calls;
        if (!run_point(o, &b, n)) return;
    }
    for (long n = calls - (points < calls ? o->tail : 0) + 1; n < calls; n++)
        if (!run_point(o, &b, n)) return;
    for (size_t i = 0; points < calls && i < sizeof o->also / sizeof o->also[0]; i++)
        if (o->also[i] > 0 && !run_point(o, &b, o->also[i])) return;
    if (!leak_check_each_run && leaked()) {
        fprintf(stderr,
                "  [%s] leaked memory (LeakSanitizer's report above; "
                "ALLOC_TORTURE_LEAKS=each finds the run)\n",
                o->name);
        CHECK(false);
    }
}

/* ---- JSON text: all of it or none ---- */

/* jansson allocates through the library's counting hook once the library
 * has read JSON: as in every process that writes a table. */
static void install_json_hook(void)
{
    json_error_t je;
    bool nomem;
    json_decref(tl_json_loadb("{}", 2, 0, &je, &nomem));
}

/* The library's parse: each allocation failed in turn, out of memory or
 * the document read exactly. jansson's own json_loadb returned strings
 * short of a character, and unescaping a string whose closing quote was
 * lost it read and wrote past its buffers or hit an assert. */
static void test_json_parse_whole_or_none(void)
{
    /* Strings whose closing quote is the byte their saved text grows for
     * (16, 32, 64: the buffer keeps its size from token to token), escapes. */
    static const char doc[] =
        "{\"abcdefghijklmn\":\"abcdefghijklmnopqrstuvwxyz0123\","
        "\"k\":\"abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz\","
        "\"location\":\"s3://bucket/warehouse/ns/t/metadata/snap-4242-1-0f0e0d0c.avro\","
        "\"escaped\":\"a\\\"b\\\\c\\n\\u00e9\\ud83d\\ude00 the rest of a longer line\","
        "\"n\":[1,-2,3.5,1e3,9007199254740993],\"nested\":{\"k\":[{\"a\":\"x\\ty\"},null,true]}}";
    json_error_t je;
    bool nomem;
    json_t *clean = tl_json_loadb(doc, strlen(doc), 0, &je, &nomem);
    CHECK(clean != NULL);
    long failed = 0;
    for (long n = 1;; n++) {
        alloc_fail_arm(n);
        json_t *j = tl_json_loadb(doc, strlen(doc), 0, &je, &nomem);
        alloc_fail_disarm();
        bool fired = alloc_fail_fired();
        if (j ? !json_equal(j, clean) : !nomem)
            fprintf(stderr, "  [JSON parse, allocation %ld failed] %s\n", n,
                    j ? "read another document" : je.text);
        CHECK(j ? json_equal(j, clean) : nomem && fired);
        json_decref(j);
        if (!fired) break;
        failed++;
    }
    CHECK(failed > 20);
    json_decref(clean);
}

/* An Avro schema of a manifest's kind: nested records, field ids. */
static const char avro_schema_text[] =
    "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
    "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
    "{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,"
    "\"field-id\":1},"
    "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":["
    "{\"name\":\"file_path\",\"type\":\"string\",\"doc\":\"Location URI\",\"field-id\":100},"
    "{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"
    "{\"name\":\"lower_bounds\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{"
    "\"type\":\"record\",\"name\":\"k126_v127\",\"fields\":["
    "{\"name\":\"key\",\"type\":\"int\",\"field-id\":126},"
    "{\"name\":\"value\",\"type\":\"bytes\",\"field-id\":127}]},"
    "\"logicalType\":\"map\"}],\"default\":null,\"field-id\":125}]},\"field-id\":2}]}";

/* The Avro schema a manifest or a manifest list carries in its header, each
 * allocation of its printing failed in turn: out of memory and nothing
 * appended, or all of it. jansson's json_dumps left out an object's key it
 * could not write (a field without its name or field id): every manifest
 * written with that schema in the process (the printed text is cached)
 * would have had a schema no reader takes. */
static void test_avro_schema_text_whole_or_none(void)
{
    install_json_hook();
    tl_avro_schema *schema = NULL;
    tl_error err;
    CHECK_OK(tl_avro_schema_parse(avro_schema_text, strlen(avro_schema_text), &schema, &err), &err);
    tl_buf full = {0};
    CHECK_OK(tl_avro_schema_print(schema, &full, &err), &err);
    long failed = 0;
    for (long n = 1;; n++) {
        tl_buf out = {0};
        CHECK(tl_buf_append_str(&out, "head:") == 0);
        alloc_fail_arm(n);
        tl_status st = tl_avro_schema_print(schema, &out, &err);
        alloc_fail_disarm();
        bool fired = alloc_fail_fired();
        if (st == TL_OK &&
            !(out.len == full.len + 5 && memcmp(out.data + 5, full.data, full.len) == 0))
            fprintf(stderr, "  [avro schema, allocation %ld failed] wrote %s\n", n,
                    (char *)out.data);
        CHECK(st == TL_OK
                  ? out.len == full.len + 5 && memcmp(out.data + 5, full.data, full.len) == 0
                  : st == TL_ERR_NOMEM && out.len == 5);
        tl_buf_free(&out);
        if (!fired) break;
        failed++;
    }
    CHECK(failed > 10); /* or the text was not written through the counted allocator */
    tl_buf_free(&full);
    tl_avro_schema_free(schema);
}

/* The library's dump itself (metadata, manifests' JSON, the registry, GCS
 * request bodies, the notification server's and the CLI's lines). */
static void test_json_dump_whole_or_none(void)
{
    install_json_hook();
    json_t *j = json_loads(avro_schema_text, 0, NULL);
    CHECK(j != NULL);
    size_t flags = JSON_COMPACT | JSON_PRESERVE_ORDER;
    char *full = tl_json_dumps(j, flags);
    CHECK(full != NULL);
    long failed = 0;
    for (long n = 1;; n++) {
        alloc_fail_arm(n);
        char *text = tl_json_dumps(j, flags);
        alloc_fail_disarm();
        bool fired = alloc_fail_fired();
        CHECK(text == NULL ? fired : strcmp(text, full) == 0);
        free(text);
        if (!fired) break;
        failed++;
    }
    CHECK(failed > 5);
    free(full);
    json_decref(j);
}

/* ---- SET, RESET and SHOW: out of memory, not a syntax error ---- */

/* How many of the lake's session settings read_dedup is false and true. */
static void read_dedup_setting(tl_lake *l, int64_t *is_false, int64_t *is_true)
{
    table_state s = {0};
    tl_lake *saved = lake;
    lake = l;
    read_two("SELECT count(*) FILTER (WHERE value = 'false'), count(*) FILTER (WHERE value = "
             "'true') FROM information_schema.df_settings WHERE name = 'timelake.read_dedup'",
             is_false, is_true, &s);
    lake = saved;
    CHECK(!s.error[0]);
}

/* Each allocation of each statement failed in turn: done, or out of memory
 * with the setting as before or as after. A name the statement's reading
 * could not copy was a syntax error ("SET needs a setting"). */
static void test_settings_statements_out_of_memory(void)
{
    static const struct {
        const char *sql;
        int after; /* read_dedup after it: 0 false, 1 true (as before), 2 unset */
    } stmts[] = {
        {"SET timelake.read_dedup = false", 0},
        {"SET SESSION timelake.read_dedup TO false", 0},
        {"RESET timelake.read_dedup", 2},
        {"RESET ALL", 2},
        {"SHOW timelake.read_dedup", 1},
        {"SHOW COLUMNS FROM s.t", 1},
        {"DESCRIBE s.t", 1},
    };
    tl_lake *l = NULL;
    tl_error err;
    CHECK_OK(tl_lake_open("memory://settings-nomem", NULL, &l, &err), &err);
    fixture f = {.table = "s.t"};
    ttable_device_schema(&f.schema);
    CHECK_OK(ttable_create_device_table(l, f.table, &f.schema, &f.t, &err), &err);
    tl_table_close(f.t);
    tl_schema_release(&f.schema);
    long failed = 0;
    const char *env = getenv("ALLOC_TORTURE_POINTS");
    bool all = env && atol(env) == 0;
    for (size_t i = 0; i < sizeof stmts / sizeof stmts[0]; i++) {
        long calls = 0;
        for (long n = 1, k = 0; calls == 0 || n <= calls; n++) {
            /* The statement's own reading comes first: its first 40
             * allocations each, then 10 of the query's spread evenly. */
            if (calls > 0 && n > 40 && !all) {
                if (k == 10) break;
                n = 40 + (++k) * (calls - 40) / 10;
            }
            ttable_sql_ok(l, "SET timelake.read_dedup = true"); /* the state before */
            struct ArrowArrayStream out;
            alloc_fail_arm(calls == 0 ? 0 : n);
            tl_status st = tl_lake_sql(l, stmts[i].sql, NULL, &out, NULL, &err);
            alloc_fail_disarm();
            bool fired = alloc_fail_fired();
            if (st == TL_OK) ttable_drain(&out);
            if (st != TL_OK && (st != TL_ERR_NOMEM || !err.message[0]))
                fprintf(stderr, "  [%s, allocation %ld failed] (%s) %s\n", stmts[i].sql, n,
                        tl_status_name(st), err.message);
            CHECK(st == TL_OK || (st == TL_ERR_NOMEM && err.message[0]));
            int64_t is_false = 0, is_true = 0;
            read_dedup_setting(l, &is_false, &is_true);
            int now = is_false == 1 ? 0 : is_true == 1 ? 1 : 2, after = stmts[i].after;
            CHECK(st == TL_OK ? now == after : now == 1 || now == after);
            if (calls == 0) { /* the clean run, counting */
                calls = alloc_fail_count();
                n = 0;
                continue;
            }
            if (!fired) break;
            failed++;
        }
    }
    CHECK(failed > 50);
    tl_lake_close(l);
    CHECK(!leaked());
}

static void test_alloc_torture(void)
{
    now_us = (int64_t)time(NULL) * 1000000LL;
    tl_error err;
    CHECK_OK(tl_lake_open("memory://alloc-torture", NULL, &lake, &err), &err);
    fixture bystander = {.table = BYSTANDER};
    ttable_device_schema(&bystander.schema);
    CHECK_OK(create_table(&bystander, &err), &err);
    tl_table_close(bystander.t);
    tl_schema_release(&bystander.schema);
    CHECK(!leaked());
    const char *each = getenv("ALLOC_TORTURE_LEAKS");
    leak_check_each_run = each && strcmp(each, "each") == 0;
    const char *only = getenv("ALLOC_TORTURE_OP");
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (only ? strcmp(only, ops[i].name) == 0 : ops[i].points > 0) torture(&ops[i]);
    tl_lake_close(lake);
    fprintf(stderr, "%ld runs with a failed allocation, %ld of them succeeded anyway\n", runs,
            absorbed);
}

UNIT_TESTS(UNIT(test_json_parse_whole_or_none), UNIT(test_json_dump_whole_or_none),
           UNIT(test_avro_schema_text_whole_or_none), UNIT(test_settings_statements_out_of_memory),
           UNIT(test_alloc_torture))
