/* The rows a run writes into one table, as an Arrow stream pulled by the
 * table's commit: file by file in ingest order, each file read (lenient),
 * numbered, run through the table's mappings from its source in DuckDB,
 * then in C: the rows of failed mappings are dropped, and with dedup keys
 * only the first row of each key survives. Fetching, reading and mapping run
 * ahead of that on threads (feed_ahead.h), a few files at most; the rest
 * takes the files strictly in ingest order.
 *
 * A mapping with a row that breaks an assertion fails: it writes nothing at
 * all (as the peer), until a full run finds no such row. A mapping found
 * failing stops the stream with KFEED_RESTART: the table is then built again
 * by a full run that knows it from the start.
 */
#ifndef KARET_FEED_H
#define KARET_FEED_H

#include <jansson.h>
#include <stdbool.h>

#include "batch.h"
#include "compile.h"
#include "config.h"
#include "feed_ahead.h"
#include "files.h"
#include "kset.h"
#include "map_fast.h"

typedef struct kfeed_stats {
    int64_t files, rows_read, rows_out, rows_deduped, lines_skipped, values_nulled, errors;
} kfeed_stats;

typedef struct kfeed {
    /* set by the caller */
    tl_lake *objects;
    tl_lake *const *readers; /* more handles of the lake, to read files ahead with (may be NULL) */
    size_t nreaders;
    const kconfig *config;
    const ktable *table;
    const kdim_rows *dims;
    const kfiles *files; /* to read, in ingest order */
    const volatile int *cancel;
    void (*on_file)(void *ctx); /* after each file */
    void *ctx;
    /* results */
    kfeed_stats stats;
    json_t *read;      /* [{key, size, etag[, error]}] of the files read */
    json_t *errors;    /* [{file, line, row, mapping, message}] (the first 1000) */
    json_t *skipped;   /* [{file, line, reason}] (the first 1000) */
    int status;        /* KARET_OK, KFEED_RESTART, or why the stream failed */
    bool full;         /* set by the caller: a full run */
    bool *failed;      /* set by the caller: per mapping index (config order), failed */
    char **failed_why; /* the first violation of each failed mapping (owned) */
    char error[1024];
    /* state */
    size_t next;
    char **sql, **sql_ordered; /* per source index: the mapping query, without and with ORDER BY */
    kfast **fast;              /* per source index: the mappings evaluated in C, or NULL */
    kbatches pending;
    size_t pending_next;
    kset seen;
    struct ArrowSchema schema;
    kahead ahead;
} kfeed;

#define KFEED_RESTART 100

/* Prepares *f (its caller-set fields filled). Returns false when out of memory. */
bool kfeed_init(kfeed *f);
/* The stream of the table's rows (borrows f, which must outlive it). */
void kfeed_stream(kfeed *f, struct ArrowArrayStream *out);
void kfeed_free(kfeed *f);

/* The Arrow schema of a table's columns as karet writes them. */
bool ktable_arrow_schema(const ktable *t, struct ArrowSchema *out);
const char *ktype_arrow(ktype t);
/* The same, text as large utf8 (U) when `large`: the rows a run hands the
 * table are in the library's storage type for text, so that they are moved
 * into the append, not cast (a copy). */
const char *ktype_arrow_as(ktype t, bool large);

#endif
