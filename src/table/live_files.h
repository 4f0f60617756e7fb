/* The data files a snapshot is made of, read from its manifest list and
 * manifests, with the values Iceberg readers inherit filled in. Shared by the
 * query layer (to scan and prune) and maintenance (to compact and expire). */
#ifndef TL_TABLE_LIVE_FILES_H
#define TL_TABLE_LIVE_FILES_H

#include "iceberg/manifest.h"
#include "iceberg/manifest_list.h"
#include "table/table_internal.h"

typedef struct tl_live_file {
    tl_ice_data_file file;   /* owned */
    int64_t snapshot_id;     /* the snapshot that added it */
    int64_t sequence_number; /* data sequence number (inherited when null) */
    int32_t partition_spec_id;
    size_t manifest; /* index into tl_live_files.manifests */
} tl_live_file;

typedef struct tl_live_files {
    tl_live_file *files; /* ADDED and EXISTING data entries; deletes are skipped */
    size_t n;
    tl_ice_manifest_file *manifests; /* the snapshot's manifest list */
    size_t n_manifests;
    int64_t delete_files; /* position/equality delete files seen (not applied) */
} tl_live_files;

/* Reads the live files of `snapshot` (NULL: the handle's current snapshot;
 * an empty table gives an empty list). */
tl_status tl_live_files_read(const tl_table *t, const tl_ice_snapshot *snapshot, tl_live_files *out,
                             tl_error *err);
void tl_live_files_free(tl_live_files *lf);

/* The manifest entry marking live file f DELETED by snapshot `snapshot_id`,
 * with f's data sequence number (it borrows f's file). */
tl_ice_manifest_entry tl_live_file_deleted(const tl_live_file *f, int64_t snapshot_id);

/* Reads an object named by a URL in the table's metadata; one that is gone
 * is TL_ERR_STORAGE ("... is missing"). */
tl_status tl_table_read_url(const tl_table *t, const char *url, tl_buf *out, tl_error *err);
/* Reads and parses the manifest list (or the manifest) at url. A file that
 * is not a valid one (garbage, truncated, empty) is an error naming it and
 * what is wrong ("manifest list <url>: not an Avro file (bad magic)"). On
 * failure *out is NULL and *n 0. */
/* Rewrites err (a file of the table's current snapshot that cannot be read)
 * to name the table and say what to do; returns code. TL_ERR_NOMEM is left
 * as it is: the file may well be fine. */
tl_status tl_table_damaged(const tl_table *t, tl_status code, tl_error *err);

tl_status tl_table_read_manifest_list(const tl_table *t, const char *url,
                                      tl_ice_manifest_file **out, size_t *n, tl_error *err);
tl_status tl_table_read_manifest(const tl_table *t, const char *url, tl_ice_manifest_entry **out,
                                 size_t *n, tl_error *err);
/* The same, but an object that is gone is TL_ERR_NOT_FOUND, for a caller
 * that can do without it. */
tl_status tl_table_read_url_or_none(const tl_table *t, const char *url, tl_buf *out, tl_error *err);

#endif
