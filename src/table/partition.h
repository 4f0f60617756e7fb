/* A table's partition fields (its default partition spec, resolved against
 * the current schema) and the partition_by entries of tl_table_options that
 * make them: "col" (identity), "day(col)", "month(col)", "year(col)". */
#ifndef TL_TABLE_PARTITION_H
#define TL_TABLE_PARTITION_H

#include <stdbool.h>

#include "iceberg/metadata.h"
#include "iceberg/transform.h"

/* The time partition and at most this many partition_by fields. */
#define TL_MAX_PARTITION_BY 4
#define TL_MAX_PARTITION_FIELDS (TL_MAX_PARTITION_BY + 1)

typedef struct tl_part_field {
    const char *name; /* the spec field's name (points into the metadata) */
    tl_ice_transform transform;
    int column;                /* index of the source column in the current schema, or -1 */
    const tl_ice_type *source; /* its type (in the metadata), or NULL */
    bool writable;             /* this writer can compute it (else appends are refused) */
} tl_part_field;

/* The default spec's fields; *out is malloc'd (NULL when unpartitioned). */
tl_status tl_part_fields_load(const tl_ice_metadata *md, tl_part_field **out, size_t *n,
                              tl_error *err);

/* Parses a partition_by entry into its column (*column malloc'd) and transform,
 * checking the column's type in `schema`: identity on string, integer,
 * boolean or date columns; day, month, year on date or timestamp columns.
 * TL_ERR_INVALID naming the entry otherwise. */
tl_status tl_part_by_parse(const char *entry, const tl_ice_schema *schema, char **column,
                           tl_ice_transform *out, tl_error *err);

/* A partition_by entry of a time-series table (time_column not NULL; else
 * TL_OK): not its time column (the time partition is there already), and
 * with dedup an identity of a series-key column, so that a series never
 * spans two partitions (dedup compares rows within one). */
tl_status tl_part_by_check_series(const char *time_column, const char *const *series_key,
                                  size_t series_key_len, bool dedup, const char *entry,
                                  const char *column, tl_ice_transform tr, tl_error *err);

/* The partition_by entry of a field ("region", "month(d)"), malloc'd. */
char *tl_part_by_format(const tl_part_field *f, const tl_ice_schema *schema);

#endif
