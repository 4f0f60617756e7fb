/* Torture test of every writing operation against store failures, in the
 * manner of SQLite's and curl's: for each operation, on the in-memory and on
 * the local store, fail its 1st store call, then its 2nd, ... until it runs
 * through, first as a plain failure (the call is not made) and then as a
 * lost answer (a write made, then reported failed). After each one:
 *   - the operation failed with an error naming the injected failure (or,
 *     when the failure came after its commit point and was only reported,
 *     succeeded, with the failure in its report where it has one);
 *   - the tables read exactly as before the operation or exactly as after
 *     (a clean run's rows), through the same lake and, on the local store,
 *     through another lake reading storage (a memory lake lives in its handle);
 *   - every object the failure left that no table references is one orphan
 *     cleanup deletes (maintenance with a zero safety window), and deleting
 *     them changes no table's rows;
 *   - a retry with no failure succeeds and gives the rows of a clean run:
 *     an append with a batch id adds its rows once.
 *   - objects the failure left that cleanup keeps are a bug when no table
 *     moved to a new version.
 * Store calls are counted through the store's fault hook (store_fault.h).
 * A third variant is an outage: from the failed call on, every call fails
 * (the failure's own cleanup too).
 * Every call of every operation in the three ways is about 1,470 runs, two
 * minutes of CPU under ASan: the suite runs a sample of about 100 chosen
 * where the bugs were (see torture()); TORTURE_POINTS=0 runs them all,
 * TORTURE_POINTS=N N of each sweep spread evenly; TORTURE_SWEEPS picks
 * among "flo" (failed, lost, outage), TORTURE_OP="maintain" and
 * TORTURE_STORE=memory|local one operation or store. */
#include <ftw.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "store/store_fault.h"
#include "table/table_internal.h"
#include "test_table_helpers.h"

/* ---- The fault hook: fail store call number `target` ---- */

#define N_CALLS (TL_CALL_SYNC + 1)
#define ONLY_ANY (-1)
#define ONLY_WRITES (-2)

static struct {
    atomic_int armed;
    atomic_long count;
    long target; /* 0: count only */
    int only;    /* count only calls of this kind (tl_store_call), or ONLY_* */
    atomic_long by_kind[N_CALLS];
    tl_store_fault mode;
    bool outage;     /* from the target on, every call fails (the store is down) */
    bool outage_run; /* the last run was one (kept after disarm) */
    atomic_int down; /* the outage began */
    atomic_int fired;
    bool wrote;     /* the call failed writes */
    char what[400]; /* the call failed */
} F;

static tl_store_fault hook(tl_store_call call, const char *key, void *ctx)
{
    (void)ctx;
    if (!atomic_load(&F.armed)) return TL_FAULT_NONE;
    if (atomic_load(&F.down)) return TL_FAULT_FAIL;
    atomic_fetch_add(&F.by_kind[call], 1);
    if (F.only == ONLY_WRITES ? !tl_store_call_writes(call) : F.only >= 0 && F.only != (int)call)
        return TL_FAULT_NONE;
    long n = atomic_fetch_add(&F.count, 1) + 1;
    if (n != F.target) return TL_FAULT_NONE;
    atomic_store(&F.fired, 1);
    F.wrote = tl_store_call_writes(call);
    snprintf(F.what, sizeof F.what, "%s %s", tl_store_call_name(call), key);
    if (F.outage) atomic_store(&F.down, 1);
    return F.mode;
}

static void arm(long target, tl_store_fault mode, int only)
{
    atomic_store(&F.count, 0);
    atomic_store(&F.fired, 0);
    atomic_store(&F.down, 0);
    for (int i = 0; i < N_CALLS; i++) atomic_store(&F.by_kind[i], 0);
    F.target = target;
    F.mode = mode;
    F.only = only;
    F.what[0] = '\0';
    atomic_store(&F.armed, 1);
}

static void disarm(void)
{
    atomic_store(&F.armed, 0);
    F.outage = false;
}

/* ---- A lake, a table and its rows ---- */

/* One lake per store for the whole test (a lake's first query starts its
 * DuckDB, which costs more than a run); each run has tables of its own in
 * a namespace of its own, dropped after it. The local store's second lake
 * reads what storage holds, as another process would. */
static tl_lake *lakes[2], *readers[2];
static char locations[2][700];

typedef struct fixture {
    bool local;
    const char *location;
    tl_lake *lake, *reader;
    char ns[32], table[48], rollup[48];
    tl_table *t;
    struct ArrowSchema schema;
    int64_t first_snapshot; /* after the setup's first append */
} fixture;

static int64_t now_us;

/* Rows `n` of batch `b`: in two partitions (one cold, which retention
 * drops) and two series. */
static tl_status write_batch(fixture *f, bool replace, int b, int n, const tl_append_options *o,
                             tl_append_result *r, tl_error *err)
{
    struct ArrowArrayStream s;
    ttable_two_partition_stream(&f->schema, now_us, b, n, &s);
    tl_append_result ignored;
    return replace ? tl_table_replace(f->t, &s, o, r ? r : &ignored, err)
                   : tl_table_append(f->t, &s, o, r ? r : &ignored, err);
}

static tl_status append_batch(fixture *f, int b, int n, const tl_append_options *o,
                              tl_append_result *r, tl_error *err)
{
    return write_batch(f, false, b, n, o, r, err);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static void open_lakes(void)
{
    tl_error err;
    snprintf(locations[0], sizeof locations[0], "memory://torture");
    snprintf(locations[1], sizeof locations[1], "%s/torture", unit_tmpdir());
    for (int i = 0; i < 2; i++) CHECK_OK(tl_lake_open(locations[i], NULL, &lakes[i], &err), &err);
    CHECK_OK(tl_lake_open(locations[1], NULL, &readers[1], &err), &err);
}

static void close_lakes(void)
{
    for (int i = 0; i < 2; i++) {
        tl_lake_close(lakes[i]);
        tl_lake_close(readers[i]);
    }
    nftw(locations[1], rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void lake_only(fixture *f, bool local, int id)
{
    static int serial;
    (void)id;
    memset(f, 0, sizeof *f);
    f->local = local;
    f->location = locations[local];
    f->lake = lakes[local];
    f->reader = readers[local];
    snprintf(f->ns, sizeof f->ns, "t%d", serial++);
    snprintf(f->table, sizeof f->table, "%s.t", f->ns);
    snprintf(f->rollup, sizeof f->rollup, "%s.r", f->ns);
    ttable_device_schema(&f->schema);
}

static void create_table(fixture *f, tl_error *err_out)
{
    tl_error err = {0};
    tl_status st = ttable_create_device_table(f->lake, f->table, &f->schema, &f->t, &err);
    if (err_out) *err_out = err;
    if (err_out) err_out->code = st;
    if (err_out == NULL) CHECK_OK(st, &err);
}

static void set_props(fixture *f, const char *const *props)
{
    tl_error err;
    CHECK_OK(tl_table_set_properties(f->t, props, &err), &err);
}

/* The table most operations start from: three appends of 4 rows (no
 * maintenance), so each partition has three small files, the table three
 * snapshots and manifests that the next commit merges. */
static void setup_table(fixture *f, bool local, int id)
{
    lake_only(f, local, id);
    create_table(f, NULL);
    const char *props[] = {"commit.manifest.min-count-to-merge", "2", "auto-maintain", "false",
                           NULL};
    set_props(f, props);
    tl_append_options o = {.maintain = 0};
    tl_error err;
    for (int b = 0; b < 3; b++) {
        CHECK_OK(append_batch(f, b, 4, &o, NULL, &err), &err);
        if (b == 0) {
            tl_table_info info;
            CHECK_OK(tl_table_info_get(f->t, &info, &err), &err);
            f->first_snapshot = info.snapshot_id;
            tl_table_info_clear(&info);
        }
    }
}

static void setup_rollup(fixture *f, bool local, int id)
{
    setup_table(f, local, id);
    char sql[400];
    ttable_rollup_sql(f->rollup, f->table, false, sql, sizeof sql);
    ttable_sql_ok(f->lake, sql);
}

/* Drops the run's tables and removes what is left of its namespace. */
static void close_fixture(fixture *f)
{
    tl_table_close(f->t);
    tl_error err;
    CHECK_OK(tl_lake_drop_table(f->lake, f->rollup, &err), &err);
    CHECK_OK(tl_lake_drop_table(f->lake, f->table, &err), &err);
    tl_schema_release(&f->schema);
    if (f->local) {
        char dir[800];
        snprintf(dir, sizeof dir, "%s/%s", f->location, f->ns);
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    }
}

/* What a reader sees of one table: whether it exists, its rows and a
 * digest of them (order-free). */
typedef struct table_state {
    int exists;                   /* 1, 0 (not found), -1 (unreadable: message in error) */
    int64_t rows, digest, latest; /* latest: rows of tl_lake_latest */
    int64_t version;              /* not compared: the commits of a clean run may differ */
    char error[300];
} table_state;

/* The newest row of each series, from the last-value index: an index
 * missing or unreadable (bypassed, with a warning) is damage too. */
static void read_latest(tl_lake *lake, const char *name, table_state *s)
{
    struct ArrowArrayStream out;
    tl_latest_report report = {{0}};
    tl_error err;
    if (tl_lake_latest_report(lake, name, &out, &report, &err) != TL_OK) {
        s->exists = -1;
        snprintf(s->error, sizeof s->error, "latest: %.270s", err.message);
        return;
    }
    struct ArrowArray a;
    while (out.get_next(&out, &a) == 0 && a.release) {
        s->latest += a.length;
        a.release(&a);
    }
    out.release(&out);
    if (report.warning[0]) {
        s->exists = -1;
        snprintf(s->error, sizeof s->error, "latest: %.270s", report.warning);
    }
}

static table_state read_state(tl_lake *lake, const char *name, const char *digest_sql)
{
    table_state s = {0};
    tl_error err;
    tl_table *t = NULL;
    tl_status st = tl_lake_open_table(lake, name, &t, &err);
    if (st == TL_OK) s.version = tl_table_version(t);
    tl_table_close(t);
    if (st == TL_ERR_NOT_FOUND) return s;
    char sql[600];
    snprintf(sql, sizeof sql, "SELECT count(*), coalesce(sum(%s), 0)::BIGINT FROM %s", digest_sql,
             name);
    struct ArrowArrayStream out;
    if (st == TL_OK) st = tl_lake_sql(lake, sql, NULL, &out, NULL, &err);
    if (st != TL_OK) {
        s.exists = -1;
        snprintf(s.error, sizeof s.error, "%.280s", err.message);
        return s;
    }
    struct ArrowSchema schema;
    struct ArrowArray a;
    CHECK(out.get_schema(&out, &schema) == 0);
    if (out.get_next(&out, &a) != 0 || a.release == NULL) {
        s.exists = -1;
        snprintf(s.error, sizeof s.error, "%.280s", out.get_last_error(&out));
    } else {
        s.exists = 1;
        s.rows = ((const int64_t *)a.children[0]->buffers[1])[0];
        s.digest = ((const int64_t *)a.children[1]->buffers[1])[0];
        a.release(&a);
    }
    schema.release(&schema);
    out.release(&out);
    if (s.exists == 1) read_latest(lake, name, &s);
    return s;
}

#define N_TABLES 2
static const char *const digests[N_TABLES] = {"hash(device, time) % 1000000007",
                                              "hash(device, bucket, n) % 1000000007"};

typedef struct lake_state {
    table_state t[N_TABLES];
} lake_state;

static const char *table_name(const fixture *f, int i)
{
    return i == 0 ? f->table : f->rollup;
}

static lake_state read_lake(const fixture *f, tl_lake *lake)
{
    lake_state s;
    for (int i = 0; i < N_TABLES; i++) s.t[i] = read_state(lake, table_name(f, i), digests[i]);
    return s;
}

static bool same_state(const lake_state *a, const lake_state *b)
{
    for (int i = 0; i < N_TABLES; i++)
        if (a->t[i].exists != b->t[i].exists || a->t[i].rows != b->t[i].rows ||
            a->t[i].digest != b->t[i].digest || a->t[i].latest != b->t[i].latest)
            return false;
    return true;
}

/* Whether every table is at the version it had (nothing committed). */
static bool same_versions(const lake_state *a, const lake_state *b)
{
    for (int i = 0; i < N_TABLES; i++)
        if (a->t[i].exists != b->t[i].exists || a->t[i].version != b->t[i].version) return false;
    return true;
}

static void describe(const lake_state *s, char *out, size_t size)
{
    static const char *const names[N_TABLES] = {"table", "rollup"};
    size_t k = 0;
    for (int i = 0; i < N_TABLES && k < size; i++)
        k += (size_t)snprintf(out + k, size - k, "%s: %s%lld rows %s; ", names[i],
                              s->t[i].exists == 1 ? ""
                              : s->t[i].exists    ? "UNREADABLE "
                                                  : "none ",
                              (long long)s->t[i].rows, s->t[i].error);
}

/* ---- Objects in storage ---- */

typedef struct object_set {
    char **keys;
    size_t n;
} object_set;

static object_set *walk_target;
static size_t walk_root_len;

static int walk_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)ftw;
    if (flag != FTW_F) return 0;
    object_set *o = walk_target;
    o->keys = realloc(o->keys, (o->n + 1) * sizeof *o->keys);
    o->keys[o->n++] = strdup(path + walk_root_len + 1);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every object of the run's namespace, sorted, once the deletions the
 * lake queued are done; locally every file (temporaries too, which no
 * listing shows). */
static object_set list_objects(fixture *f)
{
    object_set o = {0};
    tl_store_settle(f->lake->store);
    char prefix[40];
    snprintf(prefix, sizeof prefix, "%s/", f->ns);
    if (f->local) {
        char dir[800];
        snprintf(dir, sizeof dir, "%s/%s", f->location, f->ns);
        walk_target = &o;
        walk_root_len = strlen(f->location);
        nftw(dir, walk_one, 16, FTW_PHYS);
    } else {
        tl_object *objs = NULL;
        size_t n = 0;
        tl_error err;
        CHECK_OK(tl_lake_list_objects(f->lake, prefix, 1, &objs, &n, &err), &err);
        o.keys = calloc(n + 1, sizeof *o.keys);
        for (size_t i = 0; i < n; i++) o.keys[o.n++] = strdup(objs[i].key);
        tl_objects_free(objs, n);
    }
    if (o.n) qsort(o.keys, o.n, sizeof *o.keys, cmp_str);
    return o;
}

static bool has_key(const object_set *o, const char *key)
{
    return o->n && bsearch(&key, o->keys, o->n, sizeof *o->keys, cmp_str) != NULL;
}

static void free_objects(object_set *o)
{
    for (size_t i = 0; i < o->n; i++) free(o->keys[i]);
    free(o->keys);
    memset(o, 0, sizeof *o);
}

/* ---- Operations ---- */

typedef struct op {
    const char *name;
    void (*setup)(fixture *f, bool local, int id);
    tl_status (*run)(fixture *f, bool retry, tl_error *err);
    /* The operation may end TL_OK even when a call failed (the failure came
     * after its commit point and is reported elsewhere, or not at all). */
    bool ok_after_commit;
    /* In an outage it may leave an intermediate state (several commits, whose
     * undoing fails too), which the retry must complete. */
    bool half_in_outage;
} op;

/* The append's report of its inline maintenance, checked after a failure. */
static tl_append_result last_append;

static tl_status run_append(fixture *f, bool retry, tl_error *err)
{
    (void)retry;
    tl_append_options o = {.maintain = 0};
    return append_batch(f, 7, 6, &o, &last_append, err);
}

static tl_status run_append_batch_id(fixture *f, bool retry, tl_error *err)
{
    (void)retry;
    tl_append_options o = {.maintain = 0, .batch_id = "batch-7"};
    return append_batch(f, 7, 6, &o, &last_append, err);
}

static tl_status run_append_maintained(fixture *f, bool retry, tl_error *err)
{
    (void)retry;
    tl_append_options o = {.maintain = 1, .batch_id = "batch-7"};
    return append_batch(f, 7, 6, &o, &last_append, err);
}

/* An append of three chunks (TIMELAKE_APPEND_CHUNK_ROWS) whose runs overlap
 * in both partitions, with a row of the first chunk written again in the
 * last: the runs are merged per partition at the end of the stream
 * (src/table/append_merge.c), from memory or, with hold "0", from the
 * store they went up to first. */
static tl_status append_chunks(fixture *f, const char *hold, tl_error *err)
{
    struct ArrowArray batches[3];
    int64_t old_day = (now_us / 86400000000LL - 60) * 86400000000LL;
    for (int b = 0; b < 3; b++) {
        int64_t times[6];
        const char *keys[6];
        for (int i = 0; i < 6; i++) {
            int64_t base = i % 2 ? now_us - 3 * 3600000000LL : old_day;
            int at = b == 2 && i == 5 ? 1 : 100 + b * 6 + i; /* the last row: the first's again */
            times[i] = base + (int64_t)at * 1000000LL;
            keys[i] = i % 4 < 2 ? "pump-1" : "pump-2";
        }
        tbatch_time_key(&batches[b], times, keys, 6);
    }
    struct ArrowSchema copy;
    struct ArrowArrayStream s;
    CHECK_OK(tl_schema_copy(&f->schema, &copy, err), err);
    CHECK_OK(tl_stream_from_batches(&copy, batches, 3, &s, err), err);
    setenv("TIMELAKE_APPEND_CHUNK_ROWS", "4", 1);
    setenv("TIMELAKE_APPEND_HOLD_BYTES", hold, 1);
    tl_append_options o = {.maintain = 0, .batch_id = "chunks-7"};
    tl_status st = tl_table_append(f->t, &s, &o, &last_append, err);
    unsetenv("TIMELAKE_APPEND_CHUNK_ROWS");
    unsetenv("TIMELAKE_APPEND_HOLD_BYTES");
    /* One file a partition: the three runs of each were merged. */
    if (st == TL_OK && !last_append.duplicate) CHECK_INT(last_append.files, 2);
    return st;
}

static tl_status run_append_chunks(fixture *f, bool retry, tl_error *err)
{
    (void)retry;
    return append_chunks(f, "67108864", err);
}

static tl_status run_append_chunks_uploaded(fixture *f, bool retry, tl_error *err)
{
    (void)retry;
    return append_chunks(f, "0", err);
}

static void setup_maintain(fixture *f, bool local, int id)
{
    setup_table(f, local, id);
    /* Drops the old partition, compacts the new one, expires snapshots. */
    const char *props[] = {"retention", "30d", "min-snapshots", "1", "max-snapshots", "2", NULL};
    set_props(f, props);
}

/* setup_table's, each append with a batch id, and its three snapshots
 * older than snapshot-retention: the append's inline expiry is due with
 * its compaction (locally both are folded into its commit, on the memory
 * store each commits on its own), and moves their batch ids to a ledger. */
static void setup_expiring(fixture *f, bool local, int id)
{
    lake_only(f, local, id);
    create_table(f, NULL);
    const char *props[] = {"commit.manifest.min-count-to-merge", "2", "auto-maintain", "false",
                           NULL};
    set_props(f, props);
    tl_error err;
    for (int b = 0; b < 3; b++) {
        char batch_id[16];
        snprintf(batch_id, sizeof batch_id, "old-%d", b);
        tl_append_options o = {.maintain = 0, .batch_id = batch_id};
        CHECK_OK(append_batch(f, b, 4, &o, NULL, &err), &err);
    }
    const char *expiry[] = {"snapshot-retention", "0s", "min-snapshots", "2", NULL};
    set_props(f, expiry);
}

/* A replace with an attachment and a batch id (what Karet's runs do). */
static tl_status run_replace(fixture *f, bool retry, tl_error *err)
{
    (void)retry;
    tl_attachment read = {"karet.files", "[\"a.csv\"]", 9};
    tl_append_options o = {
        .maintain = 0, .batch_id = "run-7", .attachments = &read, .attachments_len = 1};
    return write_batch(f, true, 7, 6, &o, &last_append, err);
}

static tl_status run_maintain_only(fixture *f, bool retry, tl_error *err)
{
    (void)retry;
    tl_maintain_report r;
    return tl_table_maintain(f->t, NULL, &r, err);
}

static tl_status run_rollback(fixture *f, bool retry, tl_error *err)
{
    (void)retry;
    return tl_table_rollback(f->t, f->first_snapshot, err);
}

static tl_status run_set_properties(fixture *f, bool retry, tl_error *err)
{
    (void)retry;
    const char *props[] = {"retention", "90d", "my.note", "x", NULL};
    return tl_table_set_properties(f->t, props, err);
}

static tl_status run_upgrade(fixture *f, bool retry, tl_error *err)
{
    (void)retry;
    tl_upgrade_options o = {.compact = 1};
    tl_upgrade_report r = {0};
    tl_status st = tl_table_upgrade(f->t, &o, &r, err);
    if (st == TL_OK) tl_upgrade_report_clear(&r);
    return st;
}

static void setup_empty(fixture *f, bool local, int id)
{
    lake_only(f, local, id);
}

static tl_status run_create(fixture *f, bool retry, tl_error *err)
{
    tl_table_close(f->t);
    f->t = NULL;
    create_table(f, err);
    /* A retry finds the table the failed call created after all. */
    if (retry && err->code == TL_ERR_EXISTS) return TL_OK;
    return err->code;
}

/* Eleven versions, the last three appends: in byte order v10 and v11 come
 * before v2, and v9 has fewer rows than v11. */
static void setup_drop(fixture *f, bool local, int id)
{
    setup_table(f, local, id);
    tl_append_options o = {.maintain = 0};
    tl_error err;
    for (int i = 0; i < 6; i++) {
        char n[8];
        snprintf(n, sizeof n, "%d", i);
        const char *props[] = {"my.n", n, NULL};
        if (i < 3)
            set_props(f, props);
        else
            CHECK_OK(append_batch(f, 3 + i, 2, &o, NULL, &err), &err);
    }
}

static tl_status run_drop(fixture *f, bool retry, tl_error *err)
{
    (void)retry;
    return tl_lake_drop_table(f->lake, f->table, err);
}

static tl_status sql_status(fixture *f, const char *sql, tl_error *err)
{
    struct ArrowArrayStream s;
    TL_TRY(tl_lake_sql(f->lake, sql, NULL, &s, NULL, err));
    struct ArrowArray a;
    tl_status st = TL_OK;
    for (;;) {
        if (s.get_next(&s, &a) != 0) {
            st = tl_error_set(err, TL_ERR_QUERY, "%s", s.get_last_error(&s));
            break;
        }
        if (a.release == NULL) break;
        a.release(&a);
    }
    s.release(&s);
    return st;
}

static tl_status run_rollup_create(fixture *f, bool retry, tl_error *err)
{
    char sql[400];
    ttable_rollup_sql(f->rollup, f->table, retry, sql, sizeof sql);
    return sql_status(f, sql, err);
}

static void setup_rollup_stale(fixture *f, bool local, int id)
{
    setup_rollup(f, local, id);
    tl_append_options o = {.maintain = 0};
    tl_error err;
    CHECK_OK(append_batch(f, 5, 4, &o, NULL, &err), &err);
}

static tl_status run_rollup_refresh(fixture *f, bool retry, tl_error *err)
{
    (void)retry;
    char sql[100];
    snprintf(sql, sizeof sql, "REFRESH MATERIALIZED ROLLUP %s", f->rollup);
    return sql_status(f, sql, err);
}

static tl_status run_rollup_drop(fixture *f, bool retry, tl_error *err)
{
    (void)retry;
    char sql[100];
    snprintf(sql, sizeof sql, "DROP MATERIALIZED ROLLUP IF EXISTS %s", f->rollup);
    return sql_status(f, sql, err);
}

static const op ops[] = {
    {"append", setup_table, run_append, false, false},
    {"append with batch id", setup_table, run_append_batch_id, false, false},
    {"append with inline maintenance", setup_table, run_append_maintained, true, false},
    {"append with inline compaction and expiry", setup_expiring, run_append_maintained, true,
     false},
    {"append of overlapping chunks", setup_table, run_append_chunks, false, false},
    {"append of overlapping chunks, uploaded first", setup_table, run_append_chunks_uploaded, false,
     false},
    {"replace", setup_table, run_replace, false, false},
    {"maintain", setup_maintain, run_maintain_only, false, false},
    {"rollback", setup_table, run_rollback, false, false},
    {"set_properties", setup_table, run_set_properties, false, false},
    {"upgrade", setup_table, run_upgrade, false, false},
    {"create table", setup_empty, run_create, false, false},
    {"drop table", setup_drop, run_drop, false, false},
    /* Its table, then its rows, then the raw table's list: in an outage the
     * drop that undoes them fails too; CREATE again completes the rollup. */
    {"rollup create", setup_table, run_rollup_create, false, true},
    /* A refresh compacts the rollup after its commit, as an append's inline
     * maintenance does; SQL has no report to show that step's failure in. */
    {"rollup refresh", setup_rollup_stale, run_rollup_refresh, true, false},
    {"rollup drop", setup_rollup, run_rollup_drop, false, false},
};

/* ---- The torture loop ---- */

/* The objects of `after` not in `before`. */
static object_set added_objects(const object_set *before, const object_set *after)
{
    object_set o = {0};
    o.keys = calloc(after->n + 1, sizeof *o.keys);
    for (size_t i = 0; i < after->n; i++)
        if (!has_key(before, after->keys[i])) o.keys[o.n++] = strdup(after->keys[i]);
    return o;
}

/* Orphan cleanup with no safety window on every table of the lake. */
static void clean_orphans(fixture *f)
{
    setenv("TIMELAKE_ORPHAN_WINDOW", "0s", 1);
    tl_maintain_options only_expire = {.expire = 1};
    for (int i = 0; i < N_TABLES; i++) {
        tl_table *t = NULL;
        tl_error err;
        if (tl_lake_open_table(f->lake, table_name(f, i), &t, &err) != TL_OK) continue;
        tl_maintain_report r;
        CHECK_OK(tl_table_maintain(t, &only_expire, &r, &err), &err);
        tl_table_close(t);
    }
    unsetenv("TIMELAKE_ORPHAN_WINDOW");
}

static void report(const op *o, const fixture *f, const char *mode, long n, const char *what,
                   const char *fmt, const char *detail)
{
    fprintf(stderr, "  [%s, %s store, %s call %ld: %s] ", o->name, f->local ? "local" : "memory",
            mode, n, what);
    fprintf(stderr, fmt, detail);
    fputc('\n', stderr);
}

typedef struct baseline {
    lake_state before, after;
    long calls, writes, by_kind[N_CALLS];
} baseline;

static long runs;
static bool outage_next; /* the next run's failure is an outage */

/* One run of the operation with call n failed (mode), and every check. */
static void torture_once(const op *o, bool local, const baseline *b, long n, tl_store_fault mode,
                         int only)
{
    fixture f;
    const char *mode_name = mode == TL_FAULT_LOST ? "lost answer of"
                            : outage_next         ? "outage from"
                                                  : "failed";
    o->setup(&f, local, 1);
    object_set before = list_objects(&f);
    tl_error err;
    err.code = TL_OK;
    err.message[0] = '\0';
    memset(&last_append, 0, sizeof last_append);
    arm(n, mode, only);
    F.outage = F.outage_run = outage_next;
    runs++;
    tl_status st = o->run(&f, false, &err);
    disarm();
    char what[400];
    snprintf(what, sizeof what, "%s", F.what);
    if (!atomic_load(&F.fired)) { /* fewer calls than the baseline's: nothing to check */
        close_fixture(&f);
        free_objects(&before);
        return;
    }
    char desc[1200];
    if (st == TL_OK) {
        /* Reported, or repaired (the parent's index rebuilt), or a hint or
         * head object that readers check and do without, or the registry of
         * table names, which create and drop keep as a convenience only. */
        bool reported = strstr(last_append.maintenance_error, "injected") != NULL ||
                        last_append.warning[0] || strstr(what, "version-hint.text") ||
                        strstr(what, "timelake-c-head") || strstr(what, "timelake-tables.json");
        /* A failed read may have a fallback (a listing for a missing hint, a
         * read-back that says nothing either way); a failed write may not
         * go unsaid (a failed removal leaves an orphan). A lost answer may
         * be found out (the create of a table reads its version back). */
        if (!o->ok_after_commit && !reported && F.wrote && mode == TL_FAULT_FAIL &&
            !strstr(what, "remove")) {
            report(o, &f, mode_name, n, what, "succeeded%s", " although a write failed");
            CHECK(!F.wrote);
        }
    } else if (strstr(err.message, "injected failure") == NULL) {
        {
            char m[1100];
            snprintf(m, sizeof m, "(%d) %s", (int)st, err.message);
            report(o, &f, mode_name, n, what, "error does not name the failure: %s", m);
        }
        CHECK(strstr(err.message, "injected failure") != NULL);
    }
    /* Before or after, through this lake and through a new one. */
    lake_state now = read_lake(&f, f.lake);
    bool is_before = same_state(&now, &b->before), is_after = same_state(&now, &b->after);
    if (!is_before && !is_after && !(F.outage_run && o->half_in_outage)) {
        describe(&now, desc, sizeof desc);
        report(o, &f, mode_name, n, what, "neither before nor after: %s", desc);
        CHECK(is_before || is_after);
    }
    if (st == TL_OK && !is_after) {
        describe(&now, desc, sizeof desc);
        report(o, &f, mode_name, n, what, "succeeded but reads %s", desc);
        CHECK(is_after);
    }
    if (f.reader) { /* another lake, reading what storage holds */
        tl_store_settle(f.lake->store);
        lake_state again = read_lake(&f, f.reader);
        if (!same_state(&again, &now)) {
            describe(&again, desc, sizeof desc);
            report(o, &f, mode_name, n, what, "another lake reads %s", desc);
            CHECK(same_state(&again, &now));
        }
    }
    /* Orphans: deletable by cleanup, and deleting them loses nothing. */
    object_set after = list_objects(&f);
    object_set added = added_objects(&before, &after);
    clean_orphans(&f);
    object_set cleaned = list_objects(&f);
    lake_state post = read_lake(&f, f.lake);
    if (!same_state(&post, &now)) {
        describe(&post, desc, sizeof desc);
        report(o, &f, mode_name, n, what, "orphan cleanup changed the tables: %s", desc);
        CHECK(same_state(&post, &now));
    }
    for (size_t i = 0; i < added.n; i++)
        if (has_key(&cleaned, added.keys[i]) && same_versions(&now, &b->before) &&
            !(f.local && strstr(added.keys[i], "version-hint.text"))) {
            report(o, &f, mode_name, n, what, "left %s, which cleanup keeps", added.keys[i]);
            CHECK(!same_versions(&now, &b->before));
        }
    /* A retry gives the rows of a clean run (an append without batch id that
     * landed is not retried: it would add its rows again, as asked). */
    bool plain_append = o->run == run_append;
    if (!(plain_append && is_after)) {
        tl_table_close(f.t);
        f.t = NULL;
        tl_lake_open_table(f.lake, f.table, &f.t, &err);
        st = o->run(&f, true, &err);
        if (st != TL_OK) {
            report(o, &f, mode_name, n, what, "retry failed: %s", err.message);
            CHECK_OK(st, &err);
        }
        lake_state retried = read_lake(&f, f.lake);
        if (!same_state(&retried, &b->after)) {
            describe(&retried, desc, sizeof desc);
            report(o, &f, mode_name, n, what, "retried, reads %s", desc);
            CHECK(same_state(&retried, &b->after));
        }
    }
    /* Whatever the failure left, later maintenance works. */
    for (int i = 0; i < N_TABLES; i++) {
        tl_table *t = NULL;
        tl_maintain_options no_retention = {.compact = 1, .expire = 1, .rollups = 1};
        tl_maintain_report r;
        if (tl_lake_open_table(f.lake, table_name(&f, i), &t, &err) == TL_OK &&
            tl_table_maintain(t, &no_retention, &r, &err) != TL_OK) {
            report(o, &f, mode_name, n, what, "then maintain fails: %s", err.message);
            CHECK(false);
        }
        tl_table_close(t);
    }
    free_objects(&before);
    free_objects(&after);
    free_objects(&added);
    free_objects(&cleaned);
    close_fixture(&f);
}

/* A clean run: the states before and after, and how many calls it makes. */
static baseline measure(const op *o, bool local)
{
    baseline b = {0};
    fixture f;
    o->setup(&f, local, 0);
    b.before = read_lake(&f, f.lake);
    tl_error err;
    arm(0, TL_FAULT_NONE, ONLY_ANY);
    CHECK_OK(o->run(&f, false, &err), &err);
    disarm();
    b.calls = atomic_load(&F.count);
    for (int i = 0; i < N_CALLS; i++) {
        b.by_kind[i] = atomic_load(&F.by_kind[i]);
        if (tl_store_call_writes((tl_store_call)i)) b.writes += b.by_kind[i];
    }
    b.after = read_lake(&f, f.lake);
    /* The inline compaction is due (and the expiry, setup_expiring's);
     * locally (no head) they are folded into the append's commit: one
     * version, one conditional create. */
    bool expires = o->setup == setup_expiring;
    if (o->run == run_append_maintained)
        CHECK(last_append.maintenance.partitions_compacted == 1 &&
              (last_append.maintenance.snapshots_expired > 0) == expires &&
              b.by_kind[TL_CALL_PUT_IF_ABSENT] == (local     ? 1
                                                   : expires ? 3
                                                             : 2));
    close_fixture(&f);
    return b;
}

/* Calls number 1..calls (of the kinds `only` counts), at most max_points
 * of them spread evenly, the first and the last included. */
static void torture_sweep(const op *o, bool local, const baseline *b, long calls, long max_points,
                          tl_store_fault mode, int only)
{
    long points = calls < max_points || max_points <= 0 ? calls : max_points;
    for (long i = 0; i < points; i++) {
        long n = points > 1 ? 1 + i * (calls - 1) / (points - 1) : calls;
        torture_once(o, local, b, n, mode, only);
    }
}

static void torture(const op *o, bool local)
{
    baseline b = measure(o, local);
    fprintf(stderr, "%s on the %s store: %ld calls, %ld writes\n", o->name,
            local ? "local" : "memory", b.calls, b.writes);
    const char *env = getenv("TORTURE_POINTS");
    if (env) { /* every call (0), or that many of each sweep */
        const char *sweeps = getenv("TORTURE_SWEEPS"); /* of "flo": failed, lost, outage */
        if (sweeps == NULL) sweeps = "flo";
        if (strchr(sweeps, 'f'))
            torture_sweep(o, local, &b, b.calls, atol(env), TL_FAULT_FAIL, ONLY_ANY);
        if (strchr(sweeps, 'l'))
            torture_sweep(o, local, &b, b.writes, atol(env), TL_FAULT_LOST, ONLY_WRITES);
        outage_next = strchr(sweeps, 'o') != NULL;
        if (outage_next)
            torture_sweep(o, local, &b, b.writes, atol(env), TL_FAULT_FAIL, ONLY_WRITES);
        outage_next = false;
        return;
    }
    /* The suite's sample (TORTURE_POINTS=0 runs them all, in minutes):
     * every commit point (conditional create) with its answer lost; on the
     * memory store also failed, the first four removals (a drop's order,
     * the files a failed commit deletes), the first and the last read and
     * a write before the commit, and an outage from the second conditional
     * create on. The local store's runs wait for the disk. */
    long creates = b.by_kind[TL_CALL_PUT_IF_ABSENT], removes = b.by_kind[TL_CALL_REMOVE];
    torture_sweep(o, local, &b, creates, 0, TL_FAULT_LOST, TL_CALL_PUT_IF_ABSENT);
    if (local) return;
    torture_sweep(o, local, &b, removes < 4 ? removes : 4, 0, TL_FAULT_FAIL, TL_CALL_REMOVE);
    torture_sweep(o, local, &b, creates, 0, TL_FAULT_FAIL, TL_CALL_PUT_IF_ABSENT);
    torture_sweep(o, local, &b, b.by_kind[TL_CALL_GET], 2, TL_FAULT_FAIL, TL_CALL_GET);
    torture_sweep(o, local, &b, b.by_kind[TL_CALL_PUT], 1, TL_FAULT_FAIL, TL_CALL_PUT);
    outage_next = true; /* the store down from the second conditional create on */
    if (creates > 0)
        torture_once(o, local, &b, creates > 1 ? 2 : 1, TL_FAULT_FAIL, TL_CALL_PUT_IF_ABSENT);
    outage_next = false;
}

static void test_torture(void)
{
    now_us = (int64_t)time(NULL) * 1000000LL;
    tl_store_set_fault(hook, NULL);
    open_lakes();
    const char *only = getenv("TORTURE_OP");
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        if (only && strcmp(only, ops[i].name) != 0) continue;
        const char *store = getenv("TORTURE_STORE"); /* "memory" or "local": only that one */
        if (!store || strcmp(store, "memory") == 0) torture(&ops[i], false);
        if (!store || strcmp(store, "local") == 0) torture(&ops[i], true);
    }
    close_lakes();
    tl_store_set_fault(NULL, NULL);
    fprintf(stderr, "%ld runs with a failure\n", runs);
}

UNIT_TESTS(UNIT(test_torture))
