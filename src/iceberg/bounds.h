/* Iceberg's binary single-value serialization, used for the lower/upper bounds of
 * data files and the partition summaries of manifests:
 *   boolean 1 byte (0/1); int, date 4 bytes LE; long, time, timestamp(tz)(_ns) 8 bytes LE;
 *   float, double IEEE-754 LE; string UTF-8 bytes; binary, fixed raw bytes; uuid 16 bytes BE;
 *   decimal the unscaled value as big-endian two's complement in the fewest bytes.
 * Readers accept the promoted forms Java accepts: a 4-byte bound of a long column
 * (int -> long) and a 4-byte bound of a double column (float -> double). */
#ifndef TL_ICEBERG_BOUNDS_H
#define TL_ICEBERG_BOUNDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "iceberg/schema.h"

/* No fixed-width bound (decimal included) is longer than this. */
#define TL_ICE_BOUND_FIXED_MAX 16

/* Parquet physical types, numbered as in parquet.thrift. */
typedef enum tl_ice_parquet_physical {
    TL_ICE_PQ_BOOLEAN = 0,
    TL_ICE_PQ_INT32 = 1,
    TL_ICE_PQ_INT64 = 2,
    TL_ICE_PQ_INT96 = 3,
    TL_ICE_PQ_FLOAT = 4,
    TL_ICE_PQ_DOUBLE = 5,
    TL_ICE_PQ_BYTE_ARRAY = 6,
    TL_ICE_PQ_FIXED_LEN_BYTE_ARRAY = 7
} tl_ice_parquet_physical;

/* Checks that a serialized bound has a valid length for the type (fixed sizes, uuid 16,
 * fixed[n] n, decimal 1..16 bytes). TL_ERR_INVALID otherwise. */
tl_status tl_ice_bound_check(const tl_ice_type *t, const uint8_t *b, size_t len, tl_error *err);

/* ---- Encoding ---- */

/* Integer-valued types: boolean (v != 0), int and date (range-checked), long, time,
 * timestamps (any), and decimal (v is the unscaled value). Writes at most 16 bytes. */
tl_status tl_ice_bound_from_int(const tl_ice_type *t, int64_t v,
                                uint8_t out[TL_ICE_BOUND_FIXED_MAX], size_t *out_len,
                                tl_error *err);

/* float (v is narrowed) and double. NaN is never a bound: TL_ERR_INVALID. */
tl_status tl_ice_bound_from_double(const tl_ice_type *t, double v,
                                   uint8_t out[TL_ICE_BOUND_FIXED_MAX], size_t *out_len,
                                   tl_error *err);

/* A decimal bound from an Arrow decimal128 value (16 bytes little-endian two's complement). */
void tl_ice_bound_from_decimal128(const uint8_t le[16], uint8_t out[TL_ICE_BOUND_FIXED_MAX],
                                  size_t *out_len);

/* Converts a Parquet statistics value (PLAIN bytes of its physical type) into the bound
 * of type t. *out is malloc'd; it is NULL with TL_OK when the value cannot be a bound
 * (a NaN). The physical type is the one Iceberg writes for t (decimal: INT32 up to
 * precision 9, INT64 up to 18, else FIXED_LEN_BYTE_ARRAY); the _typed variant takes it. */
tl_status tl_ice_bound_from_parquet(const tl_ice_type *t, const uint8_t *parquet_plain, size_t len,
                                    uint8_t **out, size_t *out_len, tl_error *err);
tl_status tl_ice_bound_from_parquet_typed(const tl_ice_type *t, tl_ice_parquet_physical physical,
                                          const uint8_t *parquet_plain, size_t len, uint8_t **out,
                                          size_t *out_len, tl_error *err);

/* Truncates a string (to max_chars code points) or binary (max_chars bytes) bound as
 * Iceberg's truncate(N) metrics mode does. A lower bound is the prefix; an upper bound is
 * the prefix with its last code point/byte incremented, or *out = NULL with TL_OK when no
 * such value exists (e.g. all 0xFF). Values that are short enough are copied unchanged.
 * *out is malloc'd. Other types are TL_ERR_INVALID. */
tl_status tl_ice_bound_truncate(const tl_ice_type *t, const uint8_t *v, size_t len,
                                size_t max_chars, bool upper, uint8_t **out, size_t *out_len,
                                tl_error *err);

/* ---- Decoding ---- */

/* Integer-valued types as for tl_ice_bound_from_int; a decimal must fit in 64 bits. */
tl_status tl_ice_bound_to_int(const tl_ice_type *t, const uint8_t *b, size_t len, int64_t *out,
                              tl_error *err);
tl_status tl_ice_bound_to_double(const tl_ice_type *t, const uint8_t *b, size_t len, double *out,
                                 tl_error *err);
/* A decimal bound as an Arrow decimal128 value (16 bytes little-endian). */
tl_status tl_ice_bound_to_decimal128(const uint8_t *b, size_t len, uint8_t out[16], tl_error *err);

/* ---- Ordering ---- */

/* <0, 0, >0 as a is below, equal to or above b in the type's order: signed numbers,
 * floats in Java's total order (-0.0 < 0.0, NaN last), decimals by value, and unsigned
 * lexicographic bytes for string/binary/fixed/uuid. Both are meant to pass
 * tl_ice_bound_check; malformed ones are compared as plain bytes (never read out of
 * bounds). */
int tl_ice_bound_compare(const tl_ice_type *t, const uint8_t *a, size_t a_len, const uint8_t *b,
                         size_t b_len);

#endif
