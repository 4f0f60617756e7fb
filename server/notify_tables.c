#include "notify_tables.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/arrow_own.h"
#include "../cli/load.h"
#include "../karet/json_text.h"
#include "notify_group.h"
#include "notify_parse.h"

/* Inline maintenance (compaction, expiry) runs after a commit, not inside the
 * request: a request is answered once its rows are committed, and the
 * table's maintainer thread catches up meanwhile. It works through a lake and
 * table handle of its own, without the table's lock, as another writer
 * would: a compaction takes hundreds of milliseconds, and commits held up
 * behind it were most of a busy table's latency. Only its commits take the
 * lock, in turns with the requests' (turn_enter, turn_leave). */
typedef struct maintainer {
    pthread_t thread;
    bool running, pending, stop; /* pending, stop: guarded by lock */
    pthread_mutex_t lock;
    pthread_cond_t wake;
} maintainer;

typedef struct notify_table {
    char *name;
    tl_lake *lake; /* its own handle, so tables share no state but the storage */
    tl_table *table;
    tl_lake *maint_lake; /* the maintainer's handles: the same table */
    tl_table *maint_table;
    cli_loader loader; /* the table's columns, to read files straight into their types */
    bool loader_ready;
    struct ArrowSchema parse_target; /* the loader's, strings in their storage form */
    pthread_mutex_t lock;
    maintainer m;
    tl_notify_group group; /* requests waiting to commit */
    bool group_ready;
} notify_table;

/* Whether a pass did anything worth a line (a pass with nothing due is
 * most passes). */
static bool worked(const tl_maintain_report *r)
{
    return r->partitions_compacted || r->partitions_dropped || r->snapshots_expired ||
           r->objects_deleted || r->rollups_refreshed;
}

/* One JSON line for the pass, on stderr when it failed. */
static void log_maintenance(const char *table, int64_t version, const tl_maintain_report *r,
                            const char *error)
{
    json_t *j =
        json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:f}", "event", "maintained", "table", table,
                  "partitions_compacted", (json_int_t)r->partitions_compacted, "snapshots_expired",
                  (json_int_t)r->snapshots_expired, "rollups_refreshed",
                  (json_int_t)r->rollups_refreshed, "rollup_rows", (json_int_t)r->rollup_rows,
                  "version", (json_int_t)version, "ms", r->seconds * 1000);
    if (j && error[0]) json_object_set_new(j, "error", json_string(error));
    char *line = j ? kjson_dumps(j, JSON_COMPACT) : NULL;
    FILE *to = error[0] ? stderr : stdout;
    if (line) {
        fprintf(to, "%s\n", line);
        fflush(to);
    }
    free(line);
    json_decref(j);
}

/* One pass as an append's inline maintenance would run it (nothing when the
 * table's auto-maintain is off), from the maintainer's handle as it is: it
 * follows the requests' commits rather than reload. The rollups whose
 * refresh interval has passed are refreshed too, as after an append: the
 * requests' commits leave them to this pass. */
static const tl_maintain_options inline_pass = {
    .compact = 1, .retention = 1, .expire = 1, .rollups = 1, .inline_mode = 1};

static void *maintain_loop(void *arg)
{
    notify_table *x = arg;
    maintainer *m = &x->m;
    pthread_mutex_lock(&m->lock);
    for (;;) {
        while (!m->pending && !m->stop) pthread_cond_wait(&m->wake, &m->lock);
        if (m->stop) break;
        m->pending = false; /* commits made from now on call for another pass */
        pthread_mutex_unlock(&m->lock);
        tl_maintain_report r = {0};
        tl_error err = {0};
        char error[TL_ERROR_MESSAGE_MAX] = "";
        /* From the commits made since by the other handle: their parse, not a
         * reload (a listing and a JSON parse after each commit). */
        pthread_mutex_lock(&x->lock);
        tl_status st = tl_table_follow(x->maint_table, x->table, &err);
        pthread_mutex_unlock(&x->lock);
        if (st == TL_OK) st = tl_table_maintain(x->maint_table, &inline_pass, &r, &err);
        if (st != TL_OK)
            snprintf(error, sizeof error, "%s", err.message[0] ? err.message : tl_status_name(st));
        /* The ingest handle takes the pass's commits as parsed here (each
         * one already at once, turn_leave; again now, should a copy there
         * have failed): behind them, its next commit would lose the race
         * for the version, then reload the metadata from storage (a JSON
         * parse of every snapshot) and write its manifests again, under the
         * table's lock. A handle already ahead is left as it is (a failed
         * copy too: it reloads as before). Before the log line, so that a
         * load logged after it has seen the pass. */
        pthread_mutex_lock(&x->lock);
        tl_table_follow(x->table, x->maint_table, &err);
        pthread_mutex_unlock(&x->lock);
        int64_t version = tl_table_version(x->maint_table);
        if (worked(&r) || error[0]) log_maintenance(x->name, version, &r, error);
        pthread_mutex_lock(&m->lock);
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

/* The maintainer's commits take turns with the requests' group commits
 * under the table's lock, from the requests' latest version: neither loses a
 * race for a version to the other (a lost race costs a back-off, a reload of
 * the metadata and the commit's writes and fsyncs again; on a disk, behind a
 * compaction's, about 100 ms). Its merge and file writes go on without the
 * lock (tl_table_set_commit_turns). */
static void turn_enter(tl_table *maint, void *ctx)
{
    notify_table *x = ctx;
    tl_error err = {0};
    pthread_mutex_lock(&x->lock);
    tl_table_follow(maint, x->table, &err); /* a failed copy: the race as before */
}

static void turn_leave(tl_table *maint, void *ctx)
{
    notify_table *x = ctx;
    tl_error err = {0};
    tl_table_follow(x->table, maint, &err); /* the next group commit builds on it */
    pthread_mutex_unlock(&x->lock);
}

static tl_status maintainer_start(notify_table *x, tl_error *err)
{
    tl_table_set_commit_turns(x->maint_table, turn_enter, turn_leave, x);
    maintainer *m = &x->m;
    if (pthread_create(&m->thread, NULL, maintain_loop, x) != 0)
        return cli_error_set(err, TL_ERR_INTERNAL, "cannot start the maintenance thread");
    m->running = true;
    x->loader.maintain = 0; /* the maintainer's job */
    return TL_OK;
}

/* Lets a pass in progress finish; what is still pending is left to the next
 * start (or the next append's inline maintenance). */
static void maintainer_stop(maintainer *m)
{
    if (m->running) {
        pthread_mutex_lock(&m->lock);
        m->stop = true;
        pthread_cond_signal(&m->wake);
        pthread_mutex_unlock(&m->lock);
        pthread_join(m->thread, NULL);
    }
    pthread_mutex_destroy(&m->lock);
    pthread_cond_destroy(&m->wake);
}

static void maintainer_poke(maintainer *m)
{
    pthread_mutex_lock(&m->lock);
    m->pending = true;
    pthread_cond_signal(&m->wake);
    pthread_mutex_unlock(&m->lock);
}

struct tl_notify_tables {
    notify_table *items;
    int n;
};

/* The loader's columns with flat strings and binaries as the table stores
 * them (64-bit offsets): a parsed file's columns are then already in the
 * append's storage form, and its group commit borrows them where it would
 * cast a copy (tl_append_prepare_borrow). */
static tl_status storage_target(const struct ArrowSchema *target, struct ArrowSchema *out,
                                tl_error *err)
{
    if (cli_schema_copy(target, out) != 0) return cli_error_nomem(err);
    for (int64_t i = 0; i < out->n_children; i++) {
        struct ArrowSchema *f = out->children[i], large = *f;
        large.format = strcmp(f->format, "u") == 0 ? "U" : strcmp(f->format, "z") == 0 ? "Z" : NULL;
        if (large.format == NULL) continue;
        /* A copy of the field under the large format (its name, flags and
         * metadata copied too) takes the field's place. */
        struct ArrowSchema copy;
        if (cli_schema_copy(&large, &copy) != 0) {
            cli_schema_release(out);
            return cli_error_nomem(err);
        }
        cli_schema_release(f);
        *f = copy;
    }
    return TL_OK;
}

static tl_status open_one(notify_table *t, const char *lake, const char *const *options,
                          const char *name, tl_error *err)
{
    pthread_mutex_init(&t->lock, NULL);
    pthread_mutex_init(&t->m.lock, NULL);
    pthread_cond_init(&t->m.wake, NULL);
    t->name = strdup(name);
    if (t->name == NULL) return cli_error_nomem(err);
    CLI_TRY(tl_lake_open(lake, options, &t->lake, err));
    CLI_TRY(tl_lake_open_table(t->lake, name, &t->table, err));
    CLI_TRY(cli_loader_init(&t->loader, t->table, NULL, err));
    t->loader_ready = true;
    CLI_TRY(storage_target(&t->loader.target, &t->parse_target, err));
    CLI_TRY(tl_lake_open(lake, options, &t->maint_lake, err));
    CLI_TRY(tl_lake_open_table(t->maint_lake, name, &t->maint_table, err));
    CLI_TRY(maintainer_start(t, err));
    tl_notify_group_init(&t->group, t->table, &t->lock, t->loader.maintain);
    t->group_ready = true;
    return TL_OK;
}

static notify_table *find(tl_notify_tables *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->items[i].name, name) == 0) return &t->items[i];
    return NULL;
}

tl_status tl_notify_tables_open(const char *lake, const char *const *options,
                                const char *const *names, int n, tl_notify_tables **out,
                                tl_error *err)
{
    tl_notify_tables *t = calloc(1, sizeof *t);
    if (t == NULL || (t->items = calloc(n ? (size_t)n : 1, sizeof *t->items)) == NULL) {
        free(t);
        return cli_error_nomem(err);
    }
    tl_status st = TL_OK;
    for (int i = 0; i < n && st == TL_OK; i++) {
        if (find(t, names[i])) continue;
        st = open_one(&t->items[t->n++], lake, options, names[i], err);
        if (st != TL_OK) cli_error_prefix(err, "table %s: ", names[i]);
    }
    if (st != TL_OK) {
        tl_notify_tables_free(t);
        return st;
    }
    *out = t;
    return TL_OK;
}

void tl_notify_tables_free(tl_notify_tables *t)
{
    if (t == NULL) return;
    for (int i = 0; i < t->n; i++) {
        notify_table *x = &t->items[i];
        maintainer_stop(&x->m);
        if (x->group_ready) tl_notify_group_destroy(&x->group);
        if (x->loader_ready) cli_loader_free(&x->loader);
        cli_schema_release(&x->parse_target);
        tl_table_close(x->table);
        tl_lake_close(x->lake);
        tl_table_close(x->maint_table);
        tl_lake_close(x->maint_lake);
        free(x->name);
        pthread_mutex_destroy(&x->lock);
    }
    free(t->items);
    free(t);
}

/* Files up to this size are parsed before they join the table's group
 * commit, so that concurrent requests for one table parse in parallel and
 * commit together; larger files stream under the table's lock, alone, their
 * memory bounded by the append's chunks. */
#define PARSE_AHEAD_BYTES (16u << 20)

/* TIMELAKE_NOTIFY_PARSE_AHEAD_BYTES overrides it, for tests of the streaming path. */
uint64_t tl_notify_tables_parse_ahead_bytes(void)
{
    const char *v = getenv("TIMELAKE_NOTIFY_PARSE_AHEAD_BYTES");
    return v && v[0] ? strtoull(v, NULL, 10) : PARSE_AHEAD_BYTES;
}

/* Reads the whole file (or the bytes at data) into batches of the table's columns. */
static tl_status parse_ahead(notify_table *x, const char *path, const uint8_t *data, size_t len,
                             const char *format, tl_notify_member *m, tl_error *err)
{
    if (data)
        return tl_notify_parse_memory(data, len, path, format, &x->parse_target, &m->schema,
                                      &m->batches, &m->n_batches, err);
    return tl_notify_parse_file(path, format, &x->parse_target, &m->schema, &m->batches,
                                &m->n_batches, err);
}

static void member_free(tl_notify_member *m)
{
    for (size_t i = 0; i < m->n_batches; i++) cli_array_release(&m->batches[i]);
    free(m->batches);
    cli_schema_release(&m->schema);
}

/* Parses the file, then commits it with whatever else is waiting for the table. */
static tl_status append_grouped(notify_table *x, const char *path, const uint8_t *data, size_t len,
                                const char *format, const char *batch_id, tl_append_result *out,
                                int *group, tl_error *err)
{
    tl_notify_member m;
    memset(&m, 0, sizeof m);
    m.batch_id = batch_id; /* announced as coming by the caller */
    tl_status st = parse_ahead(x, path, data, len, format, &m, err);
    if (st != TL_OK) tl_notify_group_gone(&x->group);
    if (st == TL_OK) {
        tl_notify_group_commit(&x->group, &m);
        st = m.status;
        *out = m.result;
        *group = m.group;
        if (st != TL_OK && err) *err = m.err;
    }
    member_free(&m);
    return st;
}

tl_status tl_notify_tables_has_batch(tl_notify_tables *t, const char *name, const char *batch_id,
                                     bool wait, int *out, int64_t *version, tl_error *err)
{
    notify_table *x = find(t, name);
    if (x == NULL) return cli_error_set(err, TL_ERR_INTERNAL, "table %s was not opened", name);
    if (!wait && pthread_mutex_trylock(&x->lock) != 0) {
        *out = -1;
        *version = 0;
        return TL_OK;
    }
    if (wait) pthread_mutex_lock(&x->lock);
    tl_status st = tl_table_batches_committed(x->table, &batch_id, 1, out, err);
    *version = tl_table_version(x->table);
    pthread_mutex_unlock(&x->lock);
    return st;
}

tl_status tl_notify_tables_coming(tl_notify_tables *t, const char *name, tl_error *err)
{
    notify_table *x = find(t, name);
    if (x == NULL) return cli_error_set(err, TL_ERR_INTERNAL, "table %s was not opened", name);
    tl_notify_group_coming(&x->group);
    return TL_OK;
}

void tl_notify_tables_gone(tl_notify_tables *t, const char *name)
{
    notify_table *x = find(t, name);
    if (x) tl_notify_group_gone(&x->group);
}

tl_status tl_notify_tables_append(tl_notify_tables *t, const char *name, const char *path,
                                  const uint8_t *data, size_t len, const char *format,
                                  const char *batch_id, tl_append_result *out, int *group,
                                  tl_error *err)
{
    notify_table *x = find(t, name);
    if (x == NULL) return cli_error_set(err, TL_ERR_INTERNAL, "table %s was not opened", name);
    tl_status st;
    *group = 1;
    if (data != NULL || cli_file_size(path) <= tl_notify_tables_parse_ahead_bytes()) {
        st = append_grouped(x, path, data, len, format, batch_id, out, group, err);
    } else {
        pthread_mutex_lock(&x->lock);
        x->loader.format = format;
        st = cli_loader_append(&x->loader, &path, 1, batch_id, out, err);
        pthread_mutex_unlock(&x->lock);
    }
    if (st == TL_OK && !out->duplicate && out->rows > 0 && x->m.running) maintainer_poke(&x->m);
    return st;
}
