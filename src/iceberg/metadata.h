/* Iceberg table metadata (vN.metadata.json): a C model with parsing of format
 * versions 1 and 2, serialization, and the edits a commit needs. Keys this
 * model does not know (top level and inside snapshots) are kept as JSON and
 * written back unchanged, so tables of other writers keep their metadata. */
#ifndef TL_ICEBERG_METADATA_H
#define TL_ICEBERG_METADATA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"
#include "iceberg/schema.h"

/* An element of an ordered string map. */
typedef struct tl_kv {
    char *key;
    char *value;
} tl_kv;

typedef struct tl_ice_partition_field {
    int32_t source_id;
    int32_t field_id;
    char *name;
    char *transform; /* as written: "day", "bucket[16]", ... (see transform.h) */
} tl_ice_partition_field;

typedef struct tl_ice_partition_spec {
    int32_t spec_id;
    tl_ice_partition_field *fields;
    size_t n_fields;
} tl_ice_partition_spec;

typedef struct tl_ice_sort_field {
    int32_t source_id;
    char *transform;
    bool descending;
    bool nulls_first;
} tl_ice_sort_field;

typedef struct tl_ice_sort_order {
    int32_t order_id; /* 0 with no fields: unsorted */
    tl_ice_sort_field *fields;
    size_t n_fields;
} tl_ice_sort_order;

typedef struct tl_ice_snapshot {
    int64_t snapshot_id;
    bool has_parent;
    int64_t parent_snapshot_id;
    int64_t sequence_number; /* 0 for v1 snapshots */
    int64_t timestamp_ms;
    char *manifest_list; /* NULL only for v1 snapshots listing "manifests" (kept in extra) */
    tl_kv *summary;      /* "operation" first */
    size_t n_summary;
    bool has_schema_id;
    int32_t schema_id;
    json_t *extra; /* unknown keys (an object), or NULL */
    /* Set in the snapshots of a metadata: one immutable allocation holding
     * manifest_list, summary and its strings (those point into it) and, once
     * serialized, the snapshot's JSON. Copies share it (reference-counted),
     * so that copying or writing metadata costs little per snapshot when
     * tables keep thousands. NULL in a snapshot a caller builds: its parts
     * are then the caller's (tl_ice_snapshot_free frees them one by one). */
    struct tl_ice_snapshot_data *data;
} tl_ice_snapshot;

typedef struct tl_ice_ref {
    char *name;
    int64_t snapshot_id;
    bool is_tag; /* else a branch */
    /* Retention settings; -1 when absent. */
    int64_t min_snapshots_to_keep;
    int64_t max_snapshot_age_ms;
    int64_t max_ref_age_ms;
} tl_ice_ref;

typedef struct tl_ice_snapshot_log_entry {
    int64_t snapshot_id;
    int64_t timestamp_ms;
} tl_ice_snapshot_log_entry;

typedef struct tl_ice_metadata_log_entry {
    char *metadata_file;
    int64_t timestamp_ms;
} tl_ice_metadata_log_entry;

typedef struct tl_ice_metadata {
    int format_version; /* 1 or 2; serialization follows it */
    char *table_uuid;   /* NULL only for v1 tables without one */
    char *location;
    int64_t last_sequence_number;
    int64_t last_updated_ms;
    int32_t last_column_id;

    tl_ice_schema *schemas;
    size_t n_schemas;
    int32_t current_schema_id;

    tl_ice_partition_spec *specs;
    size_t n_specs;
    int32_t default_spec_id;
    int32_t last_partition_id;

    tl_kv *properties; /* in document order */
    size_t n_properties;

    int64_t current_snapshot_id; /* -1: no snapshot */
    tl_ice_snapshot *snapshots;
    size_t n_snapshots;
    tl_ice_snapshot_log_entry *snapshot_log;
    size_t n_snapshot_log;
    tl_ice_metadata_log_entry *metadata_log;
    size_t n_metadata_log;

    tl_ice_sort_order *sort_orders;
    size_t n_sort_orders;
    int32_t default_sort_order_id;

    tl_ice_ref *refs;
    size_t n_refs;

    json_t *statistics;           /* the "statistics" array as read, or NULL */
    json_t *partition_statistics; /* the "partition-statistics" array as read, or NULL */
    json_t *extra;                /* unknown top-level keys (an object), or NULL */
} tl_ice_metadata;

/* ---- Whole documents ---- */

/* Parses and validates a metadata document (format version 1 or 2). Every problem is
 * TL_ERR_INVALID with a message naming the key. On success *out is owned by the caller. */
tl_status tl_ice_metadata_parse(const char *json, size_t len, tl_ice_metadata **out, tl_error *err);

/* Appends compact JSON to `out` in the reference's key order. */
tl_status tl_ice_metadata_serialize(const tl_ice_metadata *md, tl_buf *out, tl_error *err);

tl_status tl_ice_metadata_copy(const tl_ice_metadata *md, tl_ice_metadata **out, tl_error *err);
void tl_ice_metadata_free(tl_ice_metadata *md);

/* A new v2 table with no snapshot. The schema, spec and order are copied with their ids
 * (spec NULL: unpartitioned; order NULL: unsorted, id 0; only the unsorted order may
 * have id 0); last-column-id and last-partition-id (999 without partition fields)
 * follow from them. Partition and sort fields must name schema fields and have
 * parseable transforms. properties is NULL or NULL-terminated key, value pairs. */
tl_status tl_ice_metadata_new(const char *table_uuid, const char *location,
                              const tl_ice_schema *schema, const tl_ice_partition_spec *spec,
                              const tl_ice_sort_order *order, const char *const *properties,
                              int64_t last_updated_ms, tl_ice_metadata **out, tl_error *err);

/* ---- Lookups (NULL when absent) ---- */

const char *tl_ice_metadata_property(const tl_ice_metadata *md, const char *key);
const tl_ice_schema *tl_ice_metadata_current_schema(const tl_ice_metadata *md);
const tl_ice_schema *tl_ice_metadata_schema(const tl_ice_metadata *md, int32_t schema_id);
const tl_ice_partition_spec *tl_ice_metadata_default_spec(const tl_ice_metadata *md);
const tl_ice_partition_spec *tl_ice_metadata_spec(const tl_ice_metadata *md, int32_t spec_id);
const tl_ice_sort_order *tl_ice_metadata_default_sort_order(const tl_ice_metadata *md);
const tl_ice_snapshot *tl_ice_metadata_current_snapshot(const tl_ice_metadata *md);
const tl_ice_snapshot *tl_ice_metadata_snapshot(const tl_ice_metadata *md, int64_t snapshot_id);
/* The parent of s, a snapshot of md (NULL for the first snapshot, or one
 * whose parent expired). In O(1) for the usual order (each snapshot listed
 * after its parent), so walks over the ancestry cost O(history). */
const tl_ice_snapshot *tl_ice_metadata_parent(const tl_ice_metadata *md, const tl_ice_snapshot *s);
const tl_ice_ref *tl_ice_metadata_ref(const tl_ice_metadata *md, const char *name);
const char *tl_ice_snapshot_summary(const tl_ice_snapshot *s, const char *key);

/* ---- Edits ---- */

/* Sets (value != NULL) or removes (value == NULL) a property; a new key goes last. */
tl_status tl_ice_metadata_set_property(tl_ice_metadata *md, const char *key, const char *value,
                                       tl_error *err);

/* Adds a snapshot (deep-copied) and makes it current: current-snapshot-id, refs.main,
 * snapshot-log, last-sequence-number = its sequence number, last-updated-ms = its
 * timestamp; and logs previous_metadata_file (the replaced version's URL, with the
 * replaced last-updated-ms; NULL skips) in metadata-log, keeping at most
 * write.metadata.previous-versions-max (default 100) entries. A duplicate snapshot id,
 * a v2 sequence number not above last-sequence-number, or a v2 snapshot without a
 * manifest list or "operation" is TL_ERR_INVALID. On failure md is unchanged. */
tl_status tl_ice_metadata_add_snapshot(tl_ice_metadata *md, const tl_ice_snapshot *snap,
                                       const char *previous_metadata_file, tl_error *err);

/* Logs previous_metadata_file (the replaced version's URL) with `timestamp_ms`
 * (its last-updated-ms) in metadata-log, keeping at most
 * write.metadata.previous-versions-max (default 100) entries, as every commit
 * does whatever it changes. On failure (memory) md is unchanged. */
tl_status tl_ice_metadata_log_previous(tl_ice_metadata *md, const char *previous_metadata_file,
                                       int64_t timestamp_ms, tl_error *err);

/* Makes an existing snapshot current again (a rollback): current-snapshot-id,
 * refs.main (created when missing) and a snapshot-log entry at `now_ms`.
 * TL_ERR_NOT_FOUND when md has no such snapshot; on failure md is unchanged. */
tl_status tl_ice_metadata_set_current_snapshot(tl_ice_metadata *md, int64_t snapshot_id,
                                               int64_t now_ms, tl_error *err);

/* Makes `schema` the current schema and `spec` (NULL: unpartitioned) the
 * default partition spec, as a schema and partition evolution does: each is
 * given with its field ids; its own id is ignored. An existing schema (spec)
 * with the same fields is made current again, else it is added under the
 * next free id; last-column-id and last-partition-id grow to cover them. A
 * default sort order naming a field the schema lacks gives way to the
 * unsorted order. Spec fields must name schema fields. On failure md may be
 * partly changed: evolve a copy. */
tl_status tl_ice_metadata_evolve(tl_ice_metadata *md, const tl_ice_schema *schema,
                                 const tl_ice_partition_spec *spec, tl_error *err);

/* The field id some spec of md gives a partition field of this source field,
 * transform and name (Iceberg v2 keeps a partition field's id across specs),
 * or -1 when none does. */
int32_t tl_ice_metadata_partition_field_id(const tl_ice_metadata *md, int32_t source_id,
                                           const char *transform, const char *name);

/* ---- Ordered string maps ---- */

const char *tl_kv_find(const tl_kv *kv, size_t n, const char *key);
tl_status tl_kv_copy(const tl_kv *src, size_t n, tl_kv **out, tl_error *err);
void tl_kv_free(tl_kv *kv, size_t n);

/* ---- Pieces (also used for the "partition-spec" key of manifests) ---- */

/* Compact JSON of a spec's field array, e.g. [{"source-id":1,"field-id":1000,...}]. */
tl_status tl_ice_partition_fields_to_json_string(const tl_ice_partition_spec *spec, char **out,
                                                 tl_error *err);
void tl_ice_partition_spec_free(tl_ice_partition_spec *spec);
tl_status tl_ice_partition_spec_copy(const tl_ice_partition_spec *src, tl_ice_partition_spec *out,
                                     tl_error *err);
void tl_ice_sort_order_free(tl_ice_sort_order *order);
tl_status tl_ice_sort_order_copy(const tl_ice_sort_order *src, tl_ice_sort_order *out,
                                 tl_error *err);
void tl_ice_snapshot_free(tl_ice_snapshot *snap);
/* A copy sharing src's data (or packing src's parts into new data). */
tl_status tl_ice_snapshot_copy(const tl_ice_snapshot *src, tl_ice_snapshot *out, tl_error *err);
/* Moves a snapshot's own parts into shared data (snapshot_data.c); a no-op when packed. */
tl_status tl_ice_snapshot_pack(tl_ice_snapshot *snap, tl_error *err);
/* The snapshot's compact JSON as serialization in format_version made it,
 * or NULL (not made yet, made for another version, or an unpacked snapshot).
 * tl_ice_snapshot_keep_json keeps a copy of text for the next serialization
 * (of this or any copy); thread-safe. */
const char *tl_ice_snapshot_json(const tl_ice_snapshot *snap, int format_version, size_t *len);
void tl_ice_snapshot_keep_json(const tl_ice_snapshot *snap, int format_version, const char *text,
                               size_t len);
/* Walks over every snapshot of a long history (a copy, a free, a
 * serialization) wait on memory for each one's shared data and kept JSON;
 * these ask for them ahead: `snap`'s data, and once that has arrived, its
 * kept JSON. Hints only: anything, a NULL data too, is fine. */
void tl_ice_snapshot_prefetch_data(const tl_ice_snapshot *snap);
void tl_ice_snapshot_prefetch_json(const tl_ice_snapshot *snap);
#define TL_ICE_PREFETCH_AHEAD 8 /* snapshots: about a memory latency of work each */
/* One value a higher layer derives from a snapshot and its ancestry (both
 * immutable), kept with the snapshot's shared data so that it is worked out
 * once, not once per commit: table/attachments.c keeps a snapshot's
 * attachment source there. tl_ice_snapshot_memo is false when none is kept
 * (or the snapshot is unpacked); both are thread-safe. */
bool tl_ice_snapshot_memo(const tl_ice_snapshot *snap, int64_t *out);
void tl_ice_snapshot_set_memo(const tl_ice_snapshot *snap, int64_t value);

/* The version N of a metadata file's key or URL ("…/metadata/vN.metadata.json",
 * or "…/metadata/<N-1, zero-padded>-<uuid>.metadata.json" as JDBC and REST
 * catalogs name them), or -1 when the name is of neither form. */
int64_t tl_ice_metadata_version_of_key(const char *key);

#endif
