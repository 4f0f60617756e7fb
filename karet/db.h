/* The service's control plane: one SQLite database (WAL) in the data folder,
 * brought to the newest schema by numbered migrations when it opens.
 *
 * Queries go through two calls that bind their arguments from a format
 * string, one letter an argument: 's' text (NULL binds NULL), 'i' int64_t,
 * 'd' double. Rows come back as a JSON array of objects keyed by column name
 * (integers, reals, text, null), which the API serves nearly as they are.
 * Every call is serialised on one connection; db_lock / db_unlock group
 * several into one transaction. */
#ifndef KARET_DB_H
#define KARET_DB_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef struct karet_db karet_db;

enum { DB_OK = 0, DB_ERR = -1, DB_CONSTRAINT = -2 };

/* Opens (creating) the database at path and migrates it. On failure err
 * says why and *out is NULL. */
int db_open(const char *path, karet_db **out, char *err, size_t errlen);
void db_close(karet_db *db);

/* The schema version the migrations reached. */
int db_schema_version(karet_db *db);

/* Runs one statement; *changes (may be NULL) gets the rows it changed.
 * DB_CONSTRAINT when a unique or primary key refused it. */
int db_exec(karet_db *db, int64_t *changes, const char *sql, const char *fmt, ...);
/* Runs a query; returns its rows (caller owns) or NULL on error. */
json_t *db_query(karet_db *db, const char *sql, const char *fmt, ...);
/* The first row of a query, or NULL when none (or on error). */
json_t *db_query_one(karet_db *db, const char *sql, const char *fmt, ...);

/* A transaction over several calls (the lock is recursive). */
void db_begin(karet_db *db);
int db_commit(karet_db *db);
void db_rollback(karet_db *db);

/* The last error message (thread-local copy). */
const char *db_error(void);

#endif
