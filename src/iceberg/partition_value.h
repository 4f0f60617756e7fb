/* Partition values (tl_ice_value, manifest.h) of data files: comparing and
 * copying tuples of them, and the partition summaries of a manifest list
 * (min and max of each field in the single-value serialization). */
#ifndef TL_ICEBERG_PARTITION_VALUE_H
#define TL_ICEBERG_PARTITION_VALUE_H

#include "iceberg/manifest.h"
#include "iceberg/manifest_list.h"

/* Orders two values of one partition field: null first, then by value
 * (strings and bytes bytewise, false before true). */
int tl_ice_value_compare(const tl_ice_value *a, const tl_ice_value *b);
/* Orders tuples field by field, a shorter one first when one is a prefix. */
int tl_ice_values_compare(const tl_ice_value *a, size_t na, const tl_ice_value *b, size_t nb);

/* Deep copy of n values into *out (malloc'd; NULL when n is 0). */
tl_status tl_ice_values_copy(const tl_ice_value *src, size_t n, tl_ice_value **out, tl_error *err);
/* Frees n values and the array. NULL is a no-op. */
void tl_ice_values_free(tl_ice_value *v, size_t n);

/* The summaries (one per field) of n_fields-field partition tuples: contains
 * null, and lower and upper bounds of the non-null values in Iceberg's
 * single-value serialization. *out is malloc'd (caller frees each bound and
 * the array); NULL when n_fields is 0. */
tl_status tl_ice_partition_summaries(const tl_ice_value *const *tuples, size_t n, size_t n_fields,
                                     tl_ice_field_summary **out, tl_error *err);

#endif
