/* The source files of a run: what a listing of the lake finds under each
 * source's prefix (the files of its format only), in ingest order, and the
 * record of which files a table has read. */
#ifndef KARET_FILES_H
#define KARET_FILES_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "timelake.h"

typedef struct kfile {
    char *key;
    uint64_t size;
    char *etag;
    const ksource *source;
} kfile;

typedef struct kfiles {
    kfile *items;
    size_t len, cap;
} kfiles;

/* Appends copies of the strings. Returns false when out of memory. */
bool kfiles_add(kfiles *l, const char *key, uint64_t size, const char *etag, const ksource *s);
void kfiles_free(kfiles *l);
/* Sorts by key, byte order: the ingest order. */
void kfiles_sort(kfiles *l);

/* Whether `key` is a file of the source's format (.csv; .json, .jsonl,
 * .ndjson; each maybe .gz; any case). */
bool ksource_wants(const ksource *s, const char *key);

/* Lists the source's files (recursively under its prefix), appending them to
 * *out. */
tl_status ksource_list(tl_lake *objects, const ksource *s, kfiles *out, tl_error *err);

#endif
