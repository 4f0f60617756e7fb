/* Parsed footers of local Parquet files, kept by the query engine across
 * queries: data files are immutable and uniquely named, so a footer (and
 * the page indexes read through it, which the reader keeps) is parsed once.
 * An entry is checked against the file's identity (inode, size,
 * modification time) on every use, and holds its file open only until
 * tl_footer_cache_end. At most TL_FOOTER_CACHE_MAX entries outlive the query
 * that used them. */
#ifndef TL_QUERY_FOOTER_CACHE_H
#define TL_QUERY_FOOTER_CACHE_H

#include "formats/parquet/parquet_reader.h"
#include "query/engine.h"

#define TL_FOOTER_CACHE_MAX 256

typedef struct tl_footer_entry {
    char *path;
    int fd; /* -1 outside a query */
    uint64_t ino, size;
    int64_t mtime_ns;
    tl_parquet_reader *reader; /* reads through fd */
    struct ArrowSchema schema; /* the file's Arrow schema */
    int64_t footer_bytes;      /* the footer with the 8 bytes after it */
    uint64_t used;             /* query generation of its last use */
} tl_footer_entry;

/* Starts a query: entries got from now on stay valid until the next call. */
void tl_footer_cache_begin(tl_query_engine *e);

/* Closes the files the query opened (entries stay). */
void tl_footer_cache_end(tl_query_engine *e);

/* The entry of the local file at path (owned by the engine). */
tl_status tl_footer_get(tl_query_engine *e, const char *path, tl_footer_entry **out, tl_error *err);

/* Another reader of the entry's file, for another thread (a reader is not
 * shared between threads): its own codec context, the entry's parsed footer
 * and loaded page indexes borrowed (tl_parquet_reader_share). Freed by the
 * caller (tl_parquet_reader_free) before tl_footer_cache_end. */
tl_status tl_footer_reader(tl_footer_entry *fe, tl_parquet_reader **out, tl_error *err);

void tl_footer_cache_free(tl_query_engine *e);

#endif
