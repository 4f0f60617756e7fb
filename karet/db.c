#include "db.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct karet_db {
    sqlite3 *conn;
    pthread_mutex_t lock; /* recursive: a transaction holds it across calls */
};

static _Thread_local char last_error[512];

const char *db_error(void)
{
    return last_error;
}

static void set_error(sqlite3 *conn, const char *what)
{
    snprintf(last_error, sizeof last_error, "%s: %s", what, conn ? sqlite3_errmsg(conn) : "?");
}

/* A member t of a run summary's "tables" that wrote rows and counted no
 * partition (paths through the summary, which is valid JSON, never fail). */
#define UNPARTITIONED_WRITTEN                                                                      \
    "t.type = 'object' AND json_extract(summary, t.fullkey || '.partitions_written') = 0 AND "     \
    "json_extract(summary, t.fullkey || '.rows_written') > 0"

/* Each migration moves the schema from version i to i + 1; they only ever
 * get appended, so a database made by any older build opens. */
static const char *const MIGRATIONS[] = {
    /* 1: the control plane of the first release */
    "CREATE TABLE pipelines ("
    "  slug TEXT PRIMARY KEY, name TEXT NOT NULL, created_at INTEGER NOT NULL,"
    "  live_version INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE config_versions ("
    "  pipeline TEXT NOT NULL REFERENCES pipelines(slug) ON DELETE CASCADE,"
    "  version INTEGER NOT NULL, config TEXT NOT NULL, author TEXT NOT NULL,"
    "  note TEXT, created_at INTEGER NOT NULL, PRIMARY KEY (pipeline, version));"
    "CREATE TABLE jobs ("
    "  id TEXT PRIMARY KEY, pipeline TEXT NOT NULL, status TEXT NOT NULL,"
    "  trigger TEXT NOT NULL, full INTEGER NOT NULL DEFAULT 0,"
    "  attempts INTEGER NOT NULL DEFAULT 0, config_version INTEGER,"
    "  enqueued_at INTEGER NOT NULL, started_at INTEGER, completed_at INTEGER,"
    "  not_before INTEGER NOT NULL DEFAULT 0, summary TEXT, progress TEXT, error TEXT);"
    "CREATE INDEX jobs_by_pipeline ON jobs (pipeline, enqueued_at DESC, id DESC);"
    "CREATE INDEX jobs_by_status ON jobs (status, enqueued_at);"
    "CREATE TABLE users ("
    "  username TEXT PRIMARY KEY COLLATE NOCASE, role TEXT NOT NULL,"
    "  password_hash TEXT NOT NULL, created_at INTEGER NOT NULL,"
    "  bootstrap INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE sessions ("
    "  token_hash TEXT PRIMARY KEY,"
    "  username TEXT NOT NULL REFERENCES users(username) ON DELETE CASCADE,"
    "  created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL);"
    "CREATE INDEX sessions_by_user ON sessions (username);"
    "CREATE TABLE saved_queries ("
    "  pipeline TEXT NOT NULL REFERENCES pipelines(slug) ON DELETE CASCADE,"
    "  id TEXT NOT NULL, name TEXT NOT NULL, sql TEXT NOT NULL,"
    "  created_at INTEGER NOT NULL, PRIMARY KEY (pipeline, id));",
    /* 2: run records of builds before 0dfd046 said 0 partitions written for
     * a table without partition keys that got rows; such a table is one
     * partition. A table with partition keys that got rows always counted
     * one or more, so 0 beside rows written marks the others. The run's
     * total grows by the tables mended. A summary that is not JSON, or not
     * of that shape, is left as it is. */
    "UPDATE jobs SET summary = json_set(summary, '$.partitions_written',"
    "  json_extract(summary, '$.partitions_written') + (SELECT count(*)"
    "    FROM json_each(summary, '$.tables') t WHERE " UNPARTITIONED_WRITTEN "),"
    "  '$.tables', (SELECT json_group_object(t.key, CASE WHEN " UNPARTITIONED_WRITTEN
    "    THEN json_set(t.value, '$.partitions_written', 1) ELSE t.value END)"
    "    FROM json_each(summary, '$.tables') t))"
    " WHERE CASE WHEN json_valid(summary) THEN"
    "  json_type(summary, '$.partitions_written') = 'integer' AND"
    "  json_type(summary, '$.tables') = 'object' AND EXISTS (SELECT 1"
    "    FROM json_each(summary, '$.tables') t WHERE " UNPARTITIONED_WRITTEN ") END;",
};
#define N_MIGRATIONS ((int)(sizeof MIGRATIONS / sizeof MIGRATIONS[0]))

static int exec_plain(sqlite3 *conn, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(conn, sql, NULL, NULL, &msg) == SQLITE_OK) return DB_OK;
    snprintf(last_error, sizeof last_error, "%s", msg ? msg : "sqlite error");
    sqlite3_free(msg);
    return DB_ERR;
}

static int migrate(karet_db *db)
{
    int have = db_schema_version(db);
    if (have > N_MIGRATIONS) {
        snprintf(last_error, sizeof last_error,
                 "the database is at schema version %d, newer than this karet (%d): use a "
                 "newer karet",
                 have, N_MIGRATIONS);
        return DB_ERR;
    }
    for (int v = have; v < N_MIGRATIONS; v++) {
        char bump[64];
        snprintf(bump, sizeof bump, "PRAGMA user_version = %d;", v + 1);
        if (exec_plain(db->conn, "BEGIN IMMEDIATE") != DB_OK) return DB_ERR;
        if (exec_plain(db->conn, MIGRATIONS[v]) != DB_OK || exec_plain(db->conn, bump) != DB_OK) {
            exec_plain(db->conn, "ROLLBACK");
            return DB_ERR;
        }
        if (exec_plain(db->conn, "COMMIT") != DB_OK) return DB_ERR;
    }
    return DB_OK;
}

int db_open(const char *path, karet_db **out, char *err, size_t errlen)
{
    *out = NULL;
    karet_db *db = calloc(1, sizeof *db);
    if (db == NULL) return snprintf(err, errlen, "out of memory"), DB_ERR;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&db->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    int rc = sqlite3_open_v2(
        path, &db->conn, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "cannot open %s: %s", path,
                 db->conn ? sqlite3_errmsg(db->conn) : "out of memory");
        db_close(db);
        return DB_ERR;
    }
    sqlite3_busy_timeout(db->conn, 10000);
    if (exec_plain(db->conn, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                             "PRAGMA foreign_keys = ON;") != DB_OK ||
        migrate(db) != DB_OK) {
        snprintf(err, errlen, "%s: %s", path, last_error);
        db_close(db);
        return DB_ERR;
    }
    *out = db;
    return DB_OK;
}

void db_close(karet_db *db)
{
    if (db == NULL) return;
    sqlite3_close(db->conn);
    pthread_mutex_destroy(&db->lock);
    free(db);
}

int db_schema_version(karet_db *db)
{
    json_t *row = db_query_one(db, "PRAGMA user_version", "");
    int v = row ? (int)json_integer_value(json_object_get(row, "user_version")) : 0;
    json_decref(row);
    return v;
}

static int bind_args(sqlite3_stmt *st, const char *fmt, va_list ap)
{
    for (int i = 0; fmt[i]; i++) {
        int rc;
        if (fmt[i] == 's') {
            const char *s = va_arg(ap, const char *);
            rc = s ? sqlite3_bind_text(st, i + 1, s, -1, SQLITE_TRANSIENT)
                   : sqlite3_bind_null(st, i + 1);
        } else if (fmt[i] == 'i') {
            rc = sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
        } else if (fmt[i] == 'd') {
            rc = sqlite3_bind_double(st, i + 1, va_arg(ap, double));
        } else {
            snprintf(last_error, sizeof last_error, "bad bind format '%c'", fmt[i]);
            return DB_ERR;
        }
        if (rc != SQLITE_OK) return DB_ERR;
    }
    return DB_OK;
}

static json_t *column_value(sqlite3_stmt *st, int c)
{
    switch (sqlite3_column_type(st, c)) {
    case SQLITE_INTEGER:
        return json_integer((json_int_t)sqlite3_column_int64(st, c));
    case SQLITE_FLOAT:
        return json_real(sqlite3_column_double(st, c));
    case SQLITE_NULL:
        return json_null();
    default:
        return json_stringn((const char *)sqlite3_column_text(st, c),
                            (size_t)sqlite3_column_bytes(st, c));
    }
}

/* Prepares, binds, steps to the end; collects rows when rows != NULL. */
static int run(karet_db *db, const char *sql, const char *fmt, va_list ap, json_t *rows,
               int64_t *changes)
{
    sqlite3_stmt *st = NULL;
    pthread_mutex_lock(&db->lock);
    int status = DB_ERR;
    if (sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL) != SQLITE_OK) {
        set_error(db->conn, "prepare");
        goto done;
    }
    if (bind_args(st, fmt, ap) != DB_OK) {
        set_error(db->conn, "bind");
        goto done;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (rows == NULL) continue;
        json_t *row = json_object();
        for (int c = 0; c < sqlite3_column_count(st); c++)
            json_object_set_new(row, sqlite3_column_name(st, c), column_value(st, c));
        json_array_append_new(rows, row);
    }
    if (rc != SQLITE_DONE) {
        set_error(db->conn, "step");
        status = (rc & 0xff) == SQLITE_CONSTRAINT ? DB_CONSTRAINT : DB_ERR;
        goto done;
    }
    if (changes) *changes = sqlite3_changes64(db->conn);
    status = DB_OK;
done:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&db->lock);
    return status;
}

int db_exec(karet_db *db, int64_t *changes, const char *sql, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int st = run(db, sql, fmt, ap, NULL, changes);
    va_end(ap);
    return st;
}

json_t *db_query(karet_db *db, const char *sql, const char *fmt, ...)
{
    json_t *rows = json_array();
    va_list ap;
    va_start(ap, fmt);
    int st = run(db, sql, fmt, ap, rows, NULL);
    va_end(ap);
    if (st != DB_OK) {
        json_decref(rows);
        return NULL;
    }
    return rows;
}

json_t *db_query_one(karet_db *db, const char *sql, const char *fmt, ...)
{
    json_t *rows = json_array();
    va_list ap;
    va_start(ap, fmt);
    int st = run(db, sql, fmt, ap, rows, NULL);
    va_end(ap);
    json_t *row = st == DB_OK ? json_incref(json_array_get(rows, 0)) : NULL;
    json_decref(rows);
    return row;
}

void db_begin(karet_db *db)
{
    pthread_mutex_lock(&db->lock);
    exec_plain(db->conn, "BEGIN IMMEDIATE");
}

int db_commit(karet_db *db)
{
    int st = exec_plain(db->conn, "COMMIT");
    if (st != DB_OK) exec_plain(db->conn, "ROLLBACK");
    pthread_mutex_unlock(&db->lock);
    return st;
}

void db_rollback(karet_db *db)
{
    exec_plain(db->conn, "ROLLBACK");
    pthread_mutex_unlock(&db->lock);
}
