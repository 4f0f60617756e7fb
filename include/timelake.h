/*
 * timelake.h -- the one public header of libtimelake.
 *
 * Timelake keeps time series as Apache Iceberg v2 tables of Parquet files in a
 * warehouse: a local directory or an object-store bucket.
 *
 * Conventions (the same for every call):
 *   - Every fallible call returns a tl_status. TL_OK is 0.
 *   - The last argument is a tl_error* the caller provides; it may be NULL. On
 *     failure it receives the status and a message that names the problem.
 *   - Output parameters come just before the error and are named `out`.
 *   - Handles are opaque. Each *_open / *_create has a matching *_close / *_free.
 *   - Data crosses the API only as Arrow C data interface structs. Ownership of
 *     each struct is written beside every call.
 *   - Strings returned as `const char *` belong to the handle they came from
 *     and stay valid until that handle is closed (or, for a table, refreshed).
 *   - A handle may be used by one thread at a time; distinct handles may be
 *     used from distinct threads concurrently.
 */
#ifndef TIMELAKE_H
#define TIMELAKE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TIMELAKE_VERSION "0.1.0"

/* ---- Arrow C data interface (exactly as the Arrow specification defines it) ---- */

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
    /* Array type description */
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;

    /* Release callback */
    void (*release)(struct ArrowSchema *);
    /* Opaque producer-specific data */
    void *private_data;
};

struct ArrowArray {
    /* Array data description */
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;

    /* Release callback */
    void (*release)(struct ArrowArray *);
    /* Opaque producer-specific data */
    void *private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
    /* Callbacks providing stream functionality */
    int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
    int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
    const char *(*get_last_error)(struct ArrowArrayStream *);

    /* Release callback */
    void (*release)(struct ArrowArrayStream *);

    /* Opaque producer-specific data */
    void *private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

/* ---- Status codes and errors ---- */

/* Each code maps onto one exception of the Python package. */
typedef enum tl_status {
    TL_OK = 0,
    TL_ERR_NOT_FOUND = 1, /* the table (or object) does not exist   -> KeyError */
    TL_ERR_EXISTS = 2,    /* creating something that already exists -> FileExistsError */
    TL_ERR_INVALID = 3,   /* invalid input, option or configuration -> ValueError */
    TL_ERR_STORAGE = 4,   /* the storage failed                     -> RuntimeError */
    TL_ERR_QUERY = 5,     /* a query failed to plan or run          -> RuntimeError */
    TL_ERR_CONFLICT = 6,  /* a commit could not be rebased          -> RuntimeError */
    TL_ERR_NOMEM = 7,     /* out of memory                          -> MemoryError */
    TL_ERR_INTERNAL = 8   /* a bug in timelake                      -> RuntimeError */
} tl_status;

#define TL_ERROR_MESSAGE_MAX 1024

/* Filled in by a failing call. The caller owns it (usually on the stack). */
typedef struct tl_error {
    tl_status code;
    char message[TL_ERROR_MESSAGE_MAX];
} tl_error;

/* A short static name of a status ("not found", "invalid", ...). */
const char *tl_status_name(tl_status status);

/* ---- Numbers as text ---- */

/* Room for any text of tl_double_text, with its NUL. */
#define TL_DOUBLE_TEXT_SIZE 32

/* Writes into out (the caller's, size bytes) the shortest decimal text that
 * reads back (strtod) as exactly v, laid out as Python's repr: "0.1" (not
 * 0.10000000000000001), "2.0", "1e+16", "1.5e-07", "-0.0"; "nan", "inf" and
 * "-inf" for the values JSON cannot hold. The text is NUL-terminated, cut to
 * size - 1 bytes when longer (TL_DOUBLE_TEXT_SIZE always suffices); size 0
 * writes nothing (out may then be NULL). Returns the length of the whole text, as snprintf does.
 * Allocates nothing, and any thread may call it. */
size_t tl_double_text(double v, char *out, size_t size);

/* ---- Lakes ---- */

typedef struct tl_lake tl_lake;
typedef struct tl_table tl_table;

/* Opens a warehouse. `location` is a local path or a file://, s3://, gs:// or
 * az:// URL. `options` is NULL or a NULL-terminated array of key, value string
 * pairs (storage options, named as the reference names them: aws_region,
 * aws_endpoint, google_service_account, azure_storage_account_key, ...), and
 * for any lake timelake_index_cache_bytes (tl_index_cache_counts) and
 * timelake_query_threads (1 to 1024: the threads of this handle's SQL
 * engine; without it, one per processor; 1 where the caller runs queries on
 * threads of its own); an unknown key is TL_ERR_INVALID. The strings are
 * copied.
 * On success *out is a new handle: close it with tl_lake_close. */
tl_status tl_lake_open(const char *location, const char *const *options, tl_lake **out,
                       tl_error *err);

/* Closes a lake. Tables opened from it must be closed first. NULL is a no-op. */
void tl_lake_close(tl_lake *lake);

/* The normalized URL of the warehouse (for example file:///data/lake). Owned by the lake. */
const char *tl_lake_location(const tl_lake *lake);

/* Session settings for every later query of this lake handle (tl_lake_query,
 * tl_lake_sql): NULL-terminated name, value pairs (copied), each a setting
 * whose levels include "session" (tl_setting_at), in any spelling. A query's
 * own tl_sql_options.settings override them; they override the tables' own
 * properties. Replaces what an earlier call set; NULL clears them.
 * TL_ERR_INVALID, with nothing changed, for an unknown setting, a bad value
 * or one a session cannot set. */
tl_status tl_lake_set_settings(tl_lake *lake, const char *const *settings, tl_error *err);

/* What the lake's read cache of immutable objects (data files, manifests:
 * on by default for object stores, see the storage options cache_memory and
 * cache_dir) did since the lake was opened. */
typedef struct tl_cache_counts {
    int64_t memory_hits;   /* reads answered from memory */
    int64_t disk_hits;     /* reads answered from the cache_dir folder */
    int64_t misses;        /* reads that went to the store */
    int64_t bytes_fetched; /* bytes those reads fetched */
} tl_cache_counts;

/* Fills *out and returns 1, or returns 0 (and leaves *out alone) when the
 * lake has no read cache (a local lake, or both layers turned off). */
int tl_lake_cache_stats(const tl_lake *lake, tl_cache_counts *out);

/* The last-value indexes a lake's table handles keep in memory: each handle
 * keeps the index its last commit wrote, so that its next append merges with
 * it instead of reading the file again. All of them share one budget: the
 * lake's own when the lake option timelake_index_cache_bytes is given (any
 * lake, local too; 0 keeps none), else the process's, 64 MiB shared by every
 * lake opened without it. When the budget is exceeded the index kept longest
 * ago is dropped first, and its handle's next append reads the file. */
typedef struct tl_index_cache_counts {
    int64_t bytes;       /* memory the kept indexes hold now */
    int64_t limit_bytes; /* the budget */
    int64_t indexes;     /* indexes kept now (at most one per open table handle) */
    int64_t hits;        /* appends that merged with a kept index */
    int64_t misses;      /* appends that read their parent's index file instead */
    int64_t dropped;     /* kept indexes let go for the budget (or larger than it) */
} tl_index_cache_counts;

/* Fills *out with the counts of the lake's budget since it was made (the
 * process's budget: every lake's that shares it). */
void tl_lake_index_cache_stats(const tl_lake *lake, tl_index_cache_counts *out);

/* The contract of a new table. Zero-initialise, then set what you need. */
typedef struct tl_table_options {
    const char *time_column;       /* NULL: a plain table without time partitioning */
    const char *const *series_key; /* column names, series_key_len of them */
    size_t series_key_len;
    const char *chunk;             /* "hour", "day" or "month"; NULL means "day" */
    const char *retention;         /* a duration such as "90d"; NULL keeps everything */
    int dedup;                     /* 1 on, 0 off, -1 the default (on for time-series tables) */
    int ingest_time;               /* 1 on, 0 off, -1 the default (on for time-series tables) */
    const char *const *properties; /* NULL or NULL-terminated key, value pairs */
    /* Partitions by column values besides the time partition (which stays first):
     * partition_by_len entries (at most 4), each "col" (the column's value: a string,
     * integer, boolean or date column) or "day(col)", "month(col)", "year(col)" of a
     * date or timestamp column. Data files go under Hive-style folders
     * (data/region=eu/d_month=2026-11/...). In a time-series table with dedup on,
     * only series-key columns may be partitions (a series must stay in one). */
    const char *const *partition_by;
    size_t partition_by_len;
} tl_table_options;

/* Creates table `name` ("namespace.table", or "table" in namespace "default").
 * `schema` is borrowed (a struct schema; the caller still releases it).
 * `options` may be NULL for a plain table.
 * Errors: TL_ERR_EXISTS if it exists; TL_ERR_INVALID for a bad name, schema or option.
 * On success *out is a new table handle at version 1: close it with tl_table_close. */
tl_status tl_lake_create_table(tl_lake *lake, const char *name, const struct ArrowSchema *schema,
                               const tl_table_options *options, tl_table **out, tl_error *err);

/* Opens table `name` at its latest version. TL_ERR_NOT_FOUND if it does not exist.
 * On success *out is a new handle: close it with tl_table_close. */
tl_status tl_lake_open_table(tl_lake *lake, const char *name, tl_table **out, tl_error *err);

/* Lists the tables as "namespace.table", sorted. On success *out is a
 * NULL-terminated array the caller frees with tl_strings_free. */
tl_status tl_lake_list_tables(tl_lake *lake, char ***out, tl_error *err);

/* Frees a NULL-terminated string array returned by the library. NULL is a no-op. */
void tl_strings_free(char **strings);

/* Drops a table and deletes all its files. Dropping a missing table does nothing. */
tl_status tl_lake_drop_table(tl_lake *lake, const char *name, tl_error *err);

/* ---- Settings ----
 *
 * A table's settings are its table properties named "timelake.<name>"
 * (kebab-case). Wherever a setting is named (table properties at create,
 * tl_table_set_properties, session settings), any spelling finds it: with or
 * without the "timelake." prefix (set_properties and sessions), dashes or
 * underscores, any case ("timelake.read_dedup" is "timelake.read-dedup"). */

typedef struct tl_setting_info {
    const char *name;          /* kebab-case, without the "timelake." prefix */
    const char *values;        /* what it takes: "true or false", "duration", ... */
    const char *default_value; /* its value when nothing sets it, as text ("" for none) */
    /* Where it may be set, comma-separated: "create" (the create options),
     * "table" (a table property), "session" (tl_sql_options.settings),
     * "call" (an argument of one call); "" when Timelake sets it itself. */
    const char *levels;
    const char *description; /* one or two sentences */
} tl_setting_info;

/* The i-th setting Timelake knows (0, 1, ...), or NULL past the last. Static. */
const tl_setting_info *tl_setting_at(size_t i);

/* ---- Objects: files in a lake that are not tables' own ---- */

/* Keys are relative to the lake's location ("pipelines/web/events/x.ndjson").
 * A key is refused with TL_ERR_INVALID, naming it, when it is empty, longer
 * than 1024 bytes, starts or ends with '/', holds "//", a "." or ".." segment
 * or a control character. A prefix follows the same rules but may be empty
 * (the whole lake) and may end with '/'. */

/* Frees memory the library returned for the caller to free (object bytes,
 * attachments). NULL is a no-op. */
void tl_free(void *p);

typedef struct tl_object {
    /* Relative to the lake's location; a folder (one-level listing) ends in '/'. */
    char *key;
    uint64_t size; /* 0 for a folder */
    /* Last modification, Unix ms (0 when the store does not say, and for a folder). */
    int64_t modified_ms;
    /* Changes whenever the object is replaced: the store's ETag (S3, Azure; quotes
     * removed), GCS's generation; locally derived from device, inode, size and
     * mtime in ns. NULL for a folder. */
    char *etag;
} tl_object;

/* Lists the objects whose keys start with `prefix` (NULL or "": every object).
 * recursive = 1: every object under prefix. recursive = 0: one level: the
 * objects with no '/' in their key after the prefix, and each deeper folder
 * once, as an entry "prefix.../" (a folder exists while an object lies under it).
 * Sorted by key (byte order). On success *out (NULL when none) and *out_len are
 * the caller's: free them with tl_objects_free. */
tl_status tl_lake_list_objects(tl_lake *lake, const char *prefix, int recursive, tl_object **out,
                               size_t *out_len, tl_error *err);
/* Frees what tl_lake_list_objects returned. NULL is a no-op. */
void tl_objects_free(tl_object *objects, size_t len);

/* Size, modification time and etag of one object. TL_ERR_NOT_FOUND when it
 * does not exist (a folder is no object). On success the caller clears *out
 * with tl_object_clear. */
tl_status tl_lake_stat_object(tl_lake *lake, const char *key, tl_object *out, tl_error *err);
/* Frees the strings of *object and zeroes it. NULL is a no-op. */
void tl_object_clear(tl_object *object);

/* Reads a whole object (never from the lake's read cache: objects may change).
 * TL_ERR_NOT_FOUND when it does not exist. On success *out (never NULL, even
 * for an empty object) holds *out_len bytes; free it with tl_free. */
tl_status tl_lake_get_object(tl_lake *lake, const char *key, void **out, size_t *out_len,
                             tl_error *err);

/* Creates or replaces an object atomically: readers see the old bytes or the
 * new ones. `data` is borrowed (may be NULL when len is 0). Durable when it
 * returns (locally: fsynced). Large objects go up in parts on object stores
 * (the storage options multipart_threshold and multipart_part_size). */
tl_status tl_lake_put_object(tl_lake *lake, const char *key, const void *data, size_t len,
                             tl_error *err);

/* Deletes an object. A missing object is TL_OK. */
tl_status tl_lake_delete_object(tl_lake *lake, const char *key, tl_error *err);

/* A streaming upload of one object, for bodies too large to hold in memory.
 * Nothing is visible at the key until finish, which replaces any object there
 * atomically; abort (or any failure) leaves nothing behind. On object stores
 * the bytes go up in one request below the storage option multipart_threshold
 * (default 64 MiB) and otherwise as a multipart upload (S3), blocks (Azure) or
 * part objects composed at finish (GCS: named "<key>.tl-part-*" while the
 * upload runs), multipart_part_size bytes each, multipart_concurrency at once. */
typedef struct tl_object_writer tl_object_writer;

/* On success *out is a new writer: end it with tl_object_writer_finish or
 * tl_object_writer_abort. The lake must stay open until then. */
tl_status tl_object_writer_open(tl_lake *lake, const char *key, tl_object_writer **out,
                                tl_error *err);
/* Adds len bytes (borrowed; copied or sent before it returns). After a failed
 * write every later write and the finish fail with the same error. */
tl_status tl_object_writer_write(tl_object_writer *writer, const void *data, size_t len,
                                 tl_error *err);
/* Completes the object (durable when it returns). Frees the writer, on
 * success and on failure alike; on failure the key keeps what it held before. */
tl_status tl_object_writer_finish(tl_object_writer *writer, tl_error *err);
/* Abandons the upload and frees the writer; nothing is left. NULL is a no-op. */
void tl_object_writer_abort(tl_object_writer *writer);

/* A read of one object in chunks, from its start (never from the read
 * cache), for objects too large to hold in memory: the first read learns the
 * object's size together with its first bytes (one round trip), each later
 * one is a ranged read of the bytes that follow. */
typedef struct tl_object_reader tl_object_reader;

/* On success *out is a new reader (no request is made yet): free it with
 * tl_object_reader_close. The lake must stay open until then. TL_ERR_INVALID
 * for a bad key. */
tl_status tl_object_reader_open(tl_lake *lake, const char *key, tl_object_reader **out,
                                tl_error *err);
/* Reads the next bytes into the caller's buf: up to `size`, fewer only at
 * the object's end, *out_len of them (0 once the end is reached).
 * TL_ERR_NOT_FOUND when the object does not exist. After a failure the
 * reader can only be closed. */
tl_status tl_object_reader_read(tl_object_reader *reader, void *buf, size_t size, size_t *out_len,
                                tl_error *err);
/* The object's size as its first read found it; -1 before that read. */
int64_t tl_object_reader_size(const tl_object_reader *reader);
/* Frees the reader. NULL is a no-op. */
void tl_object_reader_close(tl_object_reader *reader);

/* ---- Tables ---- */

/* Closes a table handle. NULL is a no-op. */
void tl_table_close(tl_table *table);

/* "namespace.table". Owned by the handle. */
const char *tl_table_name(const tl_table *table);
/* The table's root URL. Owned by the handle. */
const char *tl_table_location(const tl_table *table);
/* The metadata version this handle is at (N of metadata/vN.metadata.json). */
int64_t tl_table_version(const tl_table *table);

/* Exports the table's schema. *out is filled and owned by the caller, who must
 * call out->release(out). */
tl_status tl_table_schema(const tl_table *table, struct ArrowSchema *out, tl_error *err);

/* Reloads the latest committed version. */
tl_status tl_table_refresh(tl_table *table, tl_error *err);

/* The table's properties at the handle's version, as a NULL-terminated array
 * of key, value strings in the metadata's order. On success the caller frees
 * *out with tl_strings_free. */
tl_status tl_table_properties(const tl_table *table, char ***out, tl_error *err);

/* Changes table properties in one commit of new metadata (no new snapshot).
 * `changes` is a NULL-terminated array of key, value pairs (borrowed); a NULL
 * value removes the key (the setting returns to its default). A Timelake
 * setting may be named in any spelling, with or without the "timelake."
 * prefix (a key without a dot is a setting); other keys with a dot are
 * Iceberg or user properties and are stored as given. TL_ERR_INVALID, with
 * nothing committed, for an unknown setting, a bad value, or a setting fixed
 * at creation or set by Timelake itself. On a lost race the change is made
 * again on the winner's version; TL_ERR_CONFLICT when that keeps failing.
 * On success the handle is at the new version. */
tl_status tl_table_set_properties(tl_table *table, const char *const *changes, tl_error *err);

/* ---- Maintenance ---- */

typedef struct tl_maintain_options {
    int compact;   /* rewrite small or overlapping files, sorted and deduplicated */
    int retention; /* drop whole partitions older than the table's retention */
    int expire;    /* expire old snapshots and delete unreferenced objects */
    int rollups;   /* refresh the table's rollups (see CREATE MATERIALIZED ROLLUP) */
    /* 1: one pass as an append's inline maintenance runs it, for a process
     * that appends with maintain 0 and maintains on a thread of its own.
     * Nothing at all when the table's auto-maintain setting is off. Works
     * from the handle's version (no reload: see tl_table_follow), repairs
     * no index, and of the steps asked for: retention; compaction of size
     * tiers of small files and of cold partitions only, as
     * timelake.compact-min-files and timelake.compact-cold-after call for;
     * the rollups whose refresh interval has passed; expiry by the
     * snapshots' age, and by their count only once it is 20 past
     * timelake.max-snapshots, with no listing of storage for orphans.
     * Objects it stops naming may still be being deleted when it returns.
     * 0: maintenance in full, as described below. */
    int inline_mode;
} tl_maintain_options;

typedef struct tl_maintain_report {
    int64_t partitions_compacted;
    int64_t files_rewritten;
    int64_t files_written;
    int64_t rows_rewritten;
    int64_t duplicates_removed;
    int64_t partitions_dropped;
    int64_t snapshots_expired;
    int64_t objects_deleted;
    int64_t rollups_refreshed; /* rollups of the table that took new rows */
    int64_t rollup_rows;       /* rows those refreshes wrote */
    double seconds;
    /* Non-empty when maintenance repaired the table: the current snapshot's
     * last-value index was missing or unreadable and was rebuilt from the
     * data files, in a commit of its own (say so to the user). */
    char warning[TL_ERROR_MESSAGE_MAX];
} tl_maintain_report;

/* Runs maintenance in the order retention, compaction, rollup refresh,
 * expiry. `options` may be NULL (everything on, in full). Each step that
 * changes the table is its own commit; on success the handle is at the
 * latest version (with inline_mode: at the version its last commit made,
 * or where it was) and *out says what was done (also on failure: what was
 * done before it). The rollups of the table (its property timelake.rollups)
 * are refreshed narrowest first, each a commit of its own. */
tl_status tl_table_maintain(tl_table *table, const tl_maintain_options *options,
                            tl_maintain_report *out, tl_error *err);

/* ---- Two handles of one table in one process ---- */

/* Brings `table` to the version of `other`, another handle of the same
 * table (from any lake handle), when other's is newer: from a copy of
 * other's parsed metadata, with no storage request (metadata files are
 * immutable). Otherwise `table` stays as it is (it never goes back; a
 * dropped `other` is not followed). For a process that commits through one
 * handle and maintains through another (an ingest thread and a maintenance
 * thread): each takes the commits the other made as it made them, instead
 * of reading them back; commits of other writers are found as ever, by the
 * commit that races them. TL_ERR_INVALID, `table` unchanged, when `other`
 * is a handle of another table (its name or location differs). Both
 * handles are borrowed and used by the call: no other thread may use
 * either meanwhile. */
tl_status tl_table_follow(tl_table *table, const tl_table *other, tl_error *err);

/* Called around a commit attempt: see tl_table_set_commit_turns. */
typedef void (*tl_turn_fn)(tl_table *table, void *ctx);

/* Makes the commits of maintenance through `table` take turns with the
 * commits of the process's other handles of the table, rather than race
 * them for versions (a lost race costs a back-off, a reload and the
 * commit's writes again). `enter` is called before and `leave` after each
 * attempt of each commit of maintenance (retention, compaction, index
 * repair and snapshot expiry, by tl_table_maintain or by an append's inline
 * maintenance after its commit; tl_table_upgrade's rewrites; never the
 * commit of an append), on the thread committing, with the handle and
 * `ctx`; a failed attempt is left too, and a retry entered again. The
 * files a compaction writes are written before its turn. `enter` typically
 * takes the lock the other handle's commits are made under and brings
 * `table` up to date, tl_table_follow(table, other); `leave` may let the
 * other handle take the commit, tl_table_follow(other, table), and
 * releases the lock. Only tl_table_follow and tl_table_version may be
 * called on `table` inside them, and neither may wait on this handle's own
 * work. NULL enter and leave (the default): no turns. ctx is borrowed
 * until the handle is closed or the turns are set again. */
void tl_table_set_commit_turns(tl_table *table, tl_turn_fn enter, tl_turn_fn leave, void *ctx);

/* Makes snapshot `snapshot_id` (tl_table_info.snapshot_id of an earlier
 * version) the current one again, in one commit of new metadata: queries and
 * appends then see the table as it was at that snapshot. The later snapshots
 * stay in the history (a rollback to one of them undoes this) until snapshot
 * expiry removes them. Rolling back a table past the snapshot its rollups were
 * refreshed from makes their next refresh start over. TL_ERR_NOT_FOUND when
 * the table has no such snapshot. On success the handle is at the new version. */
tl_status tl_table_rollback(tl_table *table, int64_t snapshot_id, tl_error *err);

typedef struct tl_upgrade_options {
    int dry_run; /* only report the steps */
    int compact; /* rewrite unsorted or small files, as tl_table_maintain does */
    /* How long every snapshot is kept after the upgrade (a duration; NULL:
     * "7d"), so that tl_table_rollback(snapshot_before) can undo it. */
    const char *keep_snapshots;
} tl_upgrade_options;

typedef struct tl_upgrade_report {
    char **steps;            /* NULL-terminated, empty when the table was current */
    int64_t version_before;  /* the handle's version when the upgrade started */
    int64_t snapshot_before; /* the current snapshot then; 0 when it had none */
    /* The table property timelake.keep-snapshots-until the upgrade set (Unix
     * ms); 0 when nothing changed or on a dry run. */
    int64_t keep_snapshots_until_ms;
} tl_upgrade_report;

/* Brings a table to the current format, each step a commit: the format
 * version property (timelake.format-version), the last-value index of a
 * time-series table that has none, sorted and compacted files (with
 * options->compact), the head object of a table in an object store. The
 * steps are named in *out as the reference names them ("set table format
 * 0.1.0 → 0.3.0", "build the last-value index", "rewrite 3 unsorted or small
 * files in 1 partitions", "write the head object"). `options` may be NULL
 * (compact, keep snapshots 7d). TL_ERR_INVALID for a bad keep_snapshots,
 * with nothing done. On success (the caller clears *out with
 * tl_upgrade_report_clear) the handle is at the latest version. */
tl_status tl_table_upgrade(tl_table *table, const tl_upgrade_options *options,
                           tl_upgrade_report *out, tl_error *err);
void tl_upgrade_report_clear(tl_upgrade_report *report);

/* A small object committed atomically with an append's or replace's rows:
 * uploaded with the commit's files as an immutable object in the table's
 * metadata/ folder and named in the snapshot summary under `name` (its URL).
 * An attachment is inherited: every later snapshot (appends, replaces,
 * compaction and retention commits that do not give one of that name) keeps
 * naming it, and snapshot expiry and orphan cleanup keep every attachment a
 * live snapshot names. `name` follows the rules of summary keys. */
typedef struct tl_attachment {
    const char *name;
    const void *data;
    size_t len;
} tl_attachment;

typedef struct tl_append_options {
    const char *batch_id; /* NULL: no idempotency key */
    int maintain;         /* 1 run, 0 skip, -1 follow the table's auto-maintain setting */
    /* Instead of batch_id, several idempotency keys for one commit (say one
     * per file of a group; borrowed, each valid UTF-8): the commit records
     * them all; it is a duplicate (nothing written) when every one was
     * committed before, and TL_ERR_CONFLICT (nothing written) when some were
     * and some not. One id is the same as batch_id. */
    const char *const *batch_ids;
    size_t n_batch_ids;
    /* Compare-and-swap: > 0, the commit lands only if the table is still at this
     * metadata version (tl_table_version); otherwise TL_ERR_CONFLICT and nothing
     * is written (no rebase onto a concurrent commit). 0: none. */
    int64_t expect_version;
    /* NULL or NULL-terminated key, value pairs (valid UTF-8) put into the new
     * snapshot's summary, this snapshot's only. Keys timelake.* and Iceberg's
     * own (operation, added-*, deleted-*, removed-*, total-*, ...) are refused. */
    const char *const *summary;
    /* Objects committed with the data (borrowed): see tl_attachment. */
    const struct tl_attachment *attachments;
    size_t attachments_len;
} tl_append_options;

typedef struct tl_append_result {
    int64_t rows;     /* rows committed (0 for a duplicate batch) */
    int64_t files;    /* data files written */
    int64_t bytes;    /* bytes of data files written */
    int64_t version;  /* the table version after the append */
    double commit_ms; /* wall time of the whole append */
    int attempts;     /* commit attempts (1 without contention) */
    int duplicate;    /* 1 when batch_id was already committed and nothing was written */
    int maintained;   /* 1 when inline maintenance ran after the commit: see maintenance */
    tl_maintain_report maintenance;
    /* Non-empty when inline maintenance failed after the append committed: the
     * rows are in the table; run tl_table_maintain later. */
    char maintenance_error[TL_ERROR_MESSAGE_MAX];
    /* Non-empty when the append committed but had to repair something: the
     * parent's last-value index was missing or unreadable and was rebuilt
     * from the data files (say so to the user). */
    char warning[TL_ERROR_MESSAGE_MAX];
} tl_append_result;

/* Appends the rows of `stream` as one atomic commit.
 * `stream` is consumed: the library reads it to the end and releases it, on
 * success and on failure alike. `options` may be NULL.
 * Columns are matched by name and cast to the table's types; missing nullable
 * columns become nulls; an unknown column, a null in a required column or an
 * impossible cast is TL_ERR_INVALID, and then nothing is written.
 * A batch's own offset and length select its rows (row i is each column's
 * row offset + i, as Arrow lays out a struct); a column shorter than that,
 * or a batch row that is null as a whole, is TL_ERR_INVALID too.
 * On success the handle advances to the new version and *out is filled. */
tl_status tl_table_append(tl_table *table, struct ArrowArrayStream *stream,
                          const tl_append_options *options, tl_append_result *out, tl_error *err);

/* Which of ids[0..n) the table has committed as batch ids, as of the
 * handle's version (by its current snapshot or an ancestor, expired or not:
 * the ancestry, then the batch ledger's ids of that line), in one
 * pass for all of them: out[i] is set to 1 or 0 (out has n elements,
 * caller-owned). For checking many batches before reading any of their data,
 * as `timelake import` does. */
tl_status tl_table_batches_committed(tl_table *table, const char *const *ids, size_t n, int *out,
                                     tl_error *err);

/* One input of tl_table_append_group: its rows, given by the caller, and
 * its own outcome, filled by the call. */
typedef struct tl_append_input {
    /* Given (all borrowed, only read, for the call only: the caller still
     * releases them after). */
    const char *batch_id;             /* its idempotency key, required */
    const struct ArrowSchema *schema; /* a struct schema of its columns */
    const struct ArrowArray *batches; /* n_batches struct arrays of schema */
    size_t n_batches;
    /* Filled: TL_OK (committed now, or a duplicate) or why it failed. */
    tl_status status;
    tl_error error;          /* when status != TL_OK; else its message is empty */
    tl_append_result result; /* of the commit that took it; rows are its own */
    int group;               /* inputs in that commit (0: none of its rows committed) */
} tl_append_input;

/* Group commit: appends the rows of inputs[0..n) in one commit that records
 * every input's batch id, each input keeping its own outcome, as if each had
 * been appended alone with its batch_id, for the price of one commit (its
 * data files, manifest, metadata and syncs). For a front end that queues the
 * appends arriving while a commit is under way (the notification server).
 *
 * Per input, in inputs[i].status, .error, .result and .group:
 *   - a batch_id the table committed before: a duplicate (status TL_OK,
 *     result.duplicate 1, result.rows 0, group 0); nothing of it is read or
 *     written.
 *   - rows that do not fit the table (an unknown column, an impossible cast,
 *     a null in a required column, a bad batch: whatever tl_table_append
 *     refuses), or a batch_id that is not valid UTF-8: that input fails alone
 *     (TL_ERR_INVALID, the error naming the problem), nothing of it
 *     committed; the others commit without it.
 *   - the rest go into one commit: status TL_OK, result that commit's
 *     (version, files, bytes, commit_ms, attempts, maintenance), except
 *     result.rows, the input's own rows; group how many inputs it took.
 *     When another writer commits some of their ids meanwhile, the commit is
 *     tried again without those (then duplicates), a few rounds, then each
 *     input alone; when the group commit fails otherwise (storage, memory),
 *     each input is committed alone for its own outcome.
 *   - an input repeating an earlier input's batch_id (one object sent twice)
 *     is taken after it, in a later commit of the same call: a duplicate
 *     when the earlier one committed, else loaded if it can be.
 *
 * Columns already in the table's storage form are read in place, not
 * copied, while the commit lays its rows out; the rows of all n inputs are
 * held at once, so the caller bounds n (the server takes up to 64).
 * `options` may be NULL (maintain -1); only options->maintain applies, to
 * each commit: batch_id, batch_ids, expect_version, summary or attachments
 * set is TL_ERR_INVALID naming the field, with nothing done.
 *
 * Returns TL_OK when every input has its outcome (which may be an error).
 * A bad call (table NULL, inputs NULL with n > 0, an input without batch_id
 * or schema, or with batches NULL and n_batches > 0; named in *err) is
 * TL_ERR_INVALID, and memory for the call's bookkeeping running out is
 * TL_ERR_NOMEM: both with nothing done and every input's outcome that error.
 * The handle advances with each commit, as with tl_table_append. */
tl_status tl_table_append_group(tl_table *table, tl_append_input *inputs, size_t n,
                                const tl_append_options *options, tl_error *err);

/* Passes through the rows of `in` whose values of `columns` (key columns of
 * the table, 1 to 32) occur in no row of the table, NULL equal to NULL, and
 * counts the others in *dropped (may be NULL). Rows of `in` that repeat a
 * key among themselves are all kept: only the table is looked up. The
 * input's key columns are cast to the table's types (a value that cannot
 * be is TL_ERR_INVALID naming the column). Only those columns are read, of
 * only the files whose partition values and column bounds can hold an
 * input key, and of those only the row groups whose statistics can: keys
 * that grow with time (timestamps, dates, sequence numbers) leave the newest
 * files to read, so the cost follows the new rows, not the table's size.
 * As of the handle's version. `in` is consumed (read to its end and
 * released, on failure too); on success *out is a stream over the kept
 * rows, in their order and with in's schema, owned by the caller. */
tl_status tl_table_filter_new_keys(tl_table *table, const char *const *columns, size_t columns_len,
                                   struct ArrowArrayStream *in, struct ArrowArrayStream *out,
                                   int64_t *dropped, tl_error *err);

/* Replaces every row of the table with the rows of `stream`, as one Iceberg
 * "overwrite" snapshot: readers see the old table or the new one, never a mix.
 * An empty stream empties the table. Ownership, options and result as
 * tl_table_append (batch ids, expect_version, summary and attachments
 * included). On a lost race without expect_version it rebases like an append:
 * the new rows replace whatever the winner left. */
tl_status tl_table_replace(tl_table *table, struct ArrowArrayStream *stream,
                           const tl_append_options *options, tl_append_result *out, tl_error *err);

/* Replaces every row of the table AND its columns and partitioning, in one
 * Iceberg "overwrite" snapshot, for rebuilding a table whose definition
 * changed: readers see the old table (old columns, old rows) or the new one,
 * never a missing or empty table; a failure (a bad row, a lost race with
 * expect_version) leaves the table exactly as it was, with no stray files.
 * The table keeps its identity (UUID, location, properties) and history:
 * earlier snapshots stay readable by time travel under their own schema.
 *
 * `schema` (borrowed, a struct schema; the caller still releases it) is the
 * new columns, in order. A column whose name the table has, of the same type
 * or a widening of it (int32 to int64, float32 to float64), continues that
 * column (Iceberg keeps its field id); any other column is new (a new field
 * id, even where a column of that name but another type was). Columns left
 * out are dropped. Struct, list and map columns follow the same rules at
 * every level (Iceberg's): a struct continues a struct, its fields matched
 * by name (new ones get fresh ids, in Iceberg's order; left-out ones are
 * dropped); a list continues a list whose element continues; a map a map of
 * the same key type whose value continues. A new required field inside a
 * column that continues is refused (TL_ERR_INVALID naming its path, "s.c"):
 * the rows written before have no value for it. `partition_by` (partition_by_len entries, borrowed)
 * is the new partitioning, as tl_table_options.partition_by says (NULL or 0: none); a time-series
 * table keeps its time partition first, and its time column, series key and ingest-time column
 * (leave that one out of `schema`). The table's metadata gets a new schema (or an earlier one with
 * exactly these fields becomes current again) and a new default partition
 * spec (likewise), with partition field ids kept where a field continues.
 *
 * `stream` is then read as tl_table_replace reads it, against the new
 * columns; ownership, options and result as tl_table_replace (batch ids,
 * expect_version, summary, attachments). On a lost race without
 * expect_version the change is made again on the winner's version;
 * TL_ERR_CONFLICT when the winner changed the schema or partitioning too.
 * TL_ERR_INVALID, with nothing written, for a bad schema or partition_by
 * entry (named) or a row that does not fit the new columns. On success the
 * handle is at the new version (tl_table_schema gives the new columns). */
tl_status tl_table_replace_schema(tl_table *table, const struct ArrowSchema *schema,
                                  const char *const *partition_by, size_t partition_by_len,
                                  struct ArrowArrayStream *stream, const tl_append_options *options,
                                  tl_append_result *out, tl_error *err);

/* The attachment `name` as the handle's current snapshot names it. On success
 * *out (never NULL) holds *out_len bytes: free it with tl_free.
 * TL_ERR_NOT_FOUND when the snapshot names none of that name. */
tl_status tl_table_attachment(tl_table *table, const char *name, void **out, size_t *out_len,
                              tl_error *err);

/* ---- SQL ---- */

typedef struct tl_query_stats {
    int64_t files_total;      /* data files of the tables the query reads */
    int64_t files_read;       /* ... left after pruning */
    int64_t row_groups_total; /* row groups of the files read */
    int64_t row_groups_read;  /* ... left after pruning */
    int64_t bytes_read;
    int truncated; /* tl_lake_query: 1 when max_rows cut the result short */
} tl_query_stats;

/* Runs SQL over the lake's tables. Unqualified table names resolve in
 * `namespace_` (NULL means "default"). On success *out is a stream the caller
 * owns and releases; `stats` may be NULL. Errors: TL_ERR_NOT_FOUND for an
 * unknown table, TL_ERR_QUERY for any other failure to plan or run. The same
 * as tl_lake_query with only a namespace. */
tl_status tl_lake_sql(tl_lake *lake, const char *query, const char *namespace_,
                      struct ArrowArrayStream *out, tl_query_stats *stats, tl_error *err);

/* A relation a query may read besides the lake's tables. */
typedef struct tl_sql_input {
    const char *name;                /* as the query names it (unqualified; case folds) */
    struct ArrowArrayStream *stream; /* its rows: a struct of strings, integers, floats,
                                        bools, dates, timestamps or binary */
} tl_sql_input;

typedef struct tl_sql_options {
    const char *namespace_;     /* unqualified table names resolve here; NULL: "default" */
    const tl_sql_input *inputs; /* NULL, or inputs_len relations visible to this query
                                   only, by name (over a table of the same name); each
                                   may be scanned more than once */
    size_t inputs_len;
    int only_namespace; /* 1: tables of other namespaces are refused, and so are
                           DuckDB's catalog functions (duckdb_tables() ...) */
    int64_t max_rows;   /* > 0: the result stops after this many rows
                           (stats->truncated says whether it was cut) */
    int64_t timeout_ms; /* > 0: the query stops after this long, an error */
    /* NULL, or NULL-terminated name, value pairs: session settings for this
     * query (tl_setting_at; those whose levels include "session", such as
     * read-dedup, newest-first, version-check-interval), in any spelling.
     * Each overrides the tables' own property. An unknown setting, a bad
     * value or one a session cannot set is TL_ERR_INVALID. */
    const char *const *settings;
} tl_sql_options;

/* Runs one SELECT query over the lake's tables and the inputs. `options` may
 * be NULL. Every input stream is consumed: read to its end and released,
 * on success and on failure alike. Only the lake's tables and the inputs can
 * be read: never files, other databases or extensions. On success *out is a
 * stream the caller owns and releases (its rows are in memory: the query
 * has run); `stats` may be NULL (given, it costs reading the footers of
 * local files the query reads). Errors: TL_ERR_INVALID for bad options or
 * an input that cannot be read (named); TL_ERR_NOT_FOUND for an unknown
 * table, or one outside the namespace with only_namespace; TL_ERR_QUERY for
 * any other failure to plan or run, "timed out" when timeout_ms passed. */
tl_status tl_lake_query(tl_lake *lake, const char *query, const tl_sql_options *options,
                        struct ArrowArrayStream *out, tl_query_stats *stats, tl_error *err);

/* The newest row of every series of `table`, from its last-value index. On
 * success *out is a stream the caller owns and releases. An index that is
 * missing or is not an index is bypassed: the rows are computed from the data
 * files, as SQL does (tl_lake_latest_report says so). */
tl_status tl_lake_latest(tl_lake *lake, const char *table, struct ArrowArrayStream *out,
                         tl_error *err);

/* What tl_lake_latest_report noticed. */
typedef struct tl_latest_report {
    /* Non-empty when the current snapshot's last-value index was missing or
     * unreadable and the rows were computed from the data files instead. A
     * read writes nothing: the next append or tl_table_maintain rebuilds the
     * index. Say so to the user. */
    char warning[TL_ERROR_MESSAGE_MAX];
} tl_latest_report;

/* tl_lake_latest, and *report (may be NULL; filled on success) says whether
 * the index had to be bypassed. */
tl_status tl_lake_latest_report(tl_lake *lake, const char *table, struct ArrowArrayStream *out,
                                tl_latest_report *report, tl_error *err);

/* ---- Reading CSV, TSV and NDJSON into typed columns ----
 *
 * For pipelines: chosen columns of a text file, each read from a CSV header
 * name or an NDJSON path and typed, streamed as Arrow batches. A gzip file
 * (by its magic bytes) is decompressed; a truncated or corrupt one is an
 * error, never a partial read.
 *
 * Lenient reading (what pipelines want; strict is the default):
 *   - a value that does not fit its column's type becomes null, and is
 *     counted and recorded (see tl_read_report); strict: an error;
 *   - NDJSON: a line that is not JSON, or not an object, is skipped, counted
 *     and recorded (a half-written last line is normal); strict: an error;
 *   - CSV: a row with more or fewer fields than the header is skipped,
 *     counted and recorded; strict: an error.
 * Either way: CSV has a header row; every column must be in it (else an
 * error naming the missing ones); other header columns are ignored; an
 * empty field is null. NDJSON: blank lines are ignored; a path the line
 * does not have is null; a file whose first line starts with '[' (one JSON
 * array) is an error. How values are typed is in the README. */

typedef struct tl_read_column {
    const char *name; /* output column name */
    const char *path; /* CSV: header name; NDJSON: dotted path with [n] indexes
                         ("a.b[0].c"); NULL: the name */
    const char *type; /* "string" (Arrow utf8), "int64", "float64" (or "number"),
                         "bool", "date" (date32) */
} tl_read_column;

typedef struct tl_read_options {
    const char *format;            /* "csv", "tsv", "ndjson" (or "jsonl", "json"); NULL: from the
                                      name (.csv .tsv .ndjson .jsonl .json, each maybe + .gz) */
    const char *name;              /* the file's name: for the format and for messages */
    const tl_read_column *columns; /* at least one; names distinct */
    size_t columns_len;
    int lenient;        /* 1: see above; 0: strict */
    int64_t batch_rows; /* rows per batch; 0: 65536 */
} tl_read_options;

typedef struct tl_reader tl_reader;

/* Opens a reader over `len` bytes at `data`, borrowed until tl_reader_close.
 * `options` and what it points to are copied. CSV reads its header here: a
 * missing column, an empty file, a bad option, path or type is
 * TL_ERR_INVALID naming it. On success *out is closed with tl_reader_close. */
tl_status tl_reader_open(const void *data, size_t len, const tl_read_options *options,
                         tl_reader **out, tl_error *err);

/* The rows as a stream: a struct of the columns, in the order given. Once
 * per reader. *out borrows the reader: release it before tl_reader_close.
 * A failure while streaming (strict: the first bad value or line; either
 * way: a corrupt gzip stream) fails get_next, whose get_last_error names the
 * file and line. */
tl_status tl_reader_stream(tl_reader *reader, struct ArrowArrayStream *out, tl_error *err);

/* One value nulled or one line skipped. */
typedef struct tl_read_problem {
    int64_t line;        /* 1-based line of the file (of the record's first line) */
    const char *column;  /* the column of a nulled value; NULL for a skipped line */
    const char *message; /* what was wrong */
} tl_read_problem;

#define TL_READ_PROBLEMS_KEPT 100

typedef struct tl_read_report {
    int64_t lines;                   /* lines of the file read so far */
    int64_t rows;                    /* rows streamed */
    int64_t lines_skipped;           /* lines (CSV: records) skipped */
    int64_t values_nulled;           /* values that did not fit their type */
    const tl_read_problem *problems; /* the first TL_READ_PROBLEMS_KEPT, in file order */
    size_t problems_len;
} tl_read_report;

/* What was read so far (complete once the stream has ended). Everything it
 * points to is owned by the reader and valid until tl_reader_close. */
void tl_reader_report(const tl_reader *reader, tl_read_report *out);

/* Closes a reader (its stream must be released first). NULL is a no-op. */
void tl_reader_close(tl_reader *reader);

/* ---- Data files: CSV, TSV, NDJSON and Parquet as Arrow streams ----
 *
 * Whole files read into typed batches (types inferred, or taken from a
 * schema such as a table's) and batches written out as files: what a front
 * end needs to load files into tables and to save query results. Formats are
 * named "csv", "tsv", "ndjson" (or "jsonl", "json") and "parquet". Text
 * files that start with gzip's magic bytes are decompressed; a truncated or
 * corrupt one is an error, never a partial read. */

/* The canonical name ("csv", "tsv", "ndjson" or "parquet", static) of
 * `format` when given, else of `path` by its extension (.csv .tsv .tab
 * .ndjson .jsonl .json, each maybe + .gz; .parquet .pq) into *out.
 * TL_ERR_INVALID naming an unknown format or extension (or with both NULL). */
tl_status tl_data_format(const char *format, const char *path, const char **out, tl_error *err);

/* Told how many bytes of the file have been read so far (gzip: compressed). */
typedef void (*tl_progress_fn)(void *ctx, uint64_t bytes_read);

typedef struct tl_data_read_options {
    const char *format; /* as tl_data_format names them; NULL: from the path */
    /* NULL: the columns and their types are inferred from the file (the first
     * batch of a text file). Else a struct schema (borrowed, read during the
     * call only): text columns are parsed straight into its fields' types,
     * every column of a CSV header must be one of its fields, a required field
     * the file lacks (or a null in one) is an error; Parquet keeps its own
     * types and is checked for the required fields only. */
    const struct ArrowSchema *columns;
    int64_t batch_rows;      /* text: rows per batch; 0: 65536 (Parquet: a row group each) */
    tl_progress_fn progress; /* NULL, or called after each batch */
    void *progress_ctx;
} tl_data_read_options;

/* Opens the file at `path` ("-": standard input, which needs options->format)
 * as a stream of struct batches. `options` may be NULL. Reads the header (and
 * a text file's first batch) here: TL_ERR_NOT_FOUND for a missing file,
 * TL_ERR_INVALID naming the file (and line and column) for an unknown format,
 * malformed data or a value that does not fit its column. On success *out is
 * the caller's: release it with out->release(out). A failure while streaming
 * fails get_next, whose get_last_error names the file and line. */
tl_status tl_data_read_file(const char *path, const tl_data_read_options *options,
                            struct ArrowArrayStream *out, tl_error *err);

/* The same over `len` bytes at `data` (borrowed: they must outlive the
 * stream), named `name` in messages: text formats only, options->format
 * required (Parquet, or no format, is TL_ERR_INVALID). */
tl_status tl_data_read_memory(const void *data, size_t len, const char *name,
                              const tl_data_read_options *options, struct ArrowArrayStream *out,
                              tl_error *err);

/* A writer of batches as one file: CSV or TSV (RFC 4180 quoting, a header
 * row, nulls as empty fields), NDJSON (one object per row, keys in column
 * order), or Parquet (zstd, the whole file built in memory and written at
 * finish). Text values print as DuckDB's shell prints them (nested ones as
 * {'a': 1} and [1, 2]); in NDJSON numbers and booleans are bare, nested
 * values are objects and arrays, anything else a string. */
typedef struct tl_data_writer tl_data_writer;

/* Opens a writer of `format` to `f` (borrowed: the caller keeps it open until
 * finish or abort, then flushes and closes it) for batches of `schema` (a
 * struct schema, borrowed, read during the call only). TL_ERR_INVALID for an
 * unknown format, or a column the format cannot hold (named). On success *out
 * is ended with tl_data_writer_finish or tl_data_writer_abort. */
tl_status tl_data_writer_open(FILE *f, const char *format, const struct ArrowSchema *schema,
                              tl_data_writer **out, tl_error *err);

/* Adds the rows of `batch` (a struct array of the schema; borrowed, the
 * caller releases it). Text formats write them now, all or nothing: a batch
 * that fails writes nothing (nor the header, which goes out with the first
 * batch written). TL_ERR_INVALID for a batch that does not fit the schema,
 * TL_ERR_STORAGE when f fails; after a failure only abort is left. */
tl_status tl_data_writer_write(tl_data_writer *w, const struct ArrowArray *batch, tl_error *err);

/* Writes what is left (Parquet: the whole file) and frees the writer, on
 * success and on failure alike. f is neither flushed nor closed. */
tl_status tl_data_writer_finish(tl_data_writer *w, tl_error *err);

/* Frees the writer; what it wrote to f stays. NULL is a no-op. */
void tl_data_writer_abort(tl_data_writer *w);

/* The values of `batch` (a struct array of `schema`, both borrowed) as text,
 * as the CSV writer prints them, for a front end that lays them out itself.
 * On success *out is one allocation (free it with tl_free) of
 * batch->length * schema->n_children pointers, row after row, each to a
 * NUL-terminated string inside the same allocation, or NULL for a null
 * value. TL_ERR_INVALID naming a column of a type it cannot print. */
tl_status tl_batch_text(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                        char ***out, tl_error *err);

/* ---- Table information ---- */

/* Contract, size and layout of the handle's current version. */
typedef struct tl_table_info {
    char *name;
    char *location;
    int64_t version;
    char *time_column; /* NULL for a plain table */
    char **series_key; /* NULL-terminated */
    char *chunk;       /* "hour", "day", "month", or NULL for a plain table */
    int dedup;
    char *ingest_time_column; /* NULL when the table has none */
    int64_t rows;
    int64_t files;
    int64_t bytes;
    int64_t snapshots;
    int64_t manifests;
    char *last_value_index; /* NULL until the index exists */
    /* The partition_by entries the table was created with ("region", "month(d)"),
     * without the time partition; NULL-terminated (empty when none). */
    char **partition_by;
    int64_t snapshot_id;    /* the current snapshot's id; 0 for a table without one */
    int64_t last_commit_ms; /* the current snapshot's timestamp (Unix ms); 0 without one */
} tl_table_info;

/* Fills *out; the caller frees its strings with tl_table_info_clear. */
tl_status tl_table_info_get(tl_table *table, tl_table_info *out, tl_error *err);
void tl_table_info_clear(tl_table_info *info);

#ifdef __cplusplus
}
#endif

#endif /* TIMELAKE_H */
