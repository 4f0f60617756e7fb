/* Iceberg partition transforms: parsing their names, computing the temporal
 * ones (identity, year, month, day, hour) on microsecond timestamps and dates,
 * and the partition path segments the reference writes ("time_day=2026-01-01"). */
#ifndef TL_ICEBERG_TRANSFORM_H
#define TL_ICEBERG_TRANSFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"
#include "iceberg/schema.h"

typedef enum tl_ice_transform_kind {
    TL_ICE_TRANSFORM_IDENTITY,
    TL_ICE_TRANSFORM_YEAR,  /* years since 1970 */
    TL_ICE_TRANSFORM_MONTH, /* months since 1970-01 */
    TL_ICE_TRANSFORM_DAY,   /* days since 1970-01-01 */
    TL_ICE_TRANSFORM_HOUR,  /* hours since 1970-01-01 00:00 UTC */
    TL_ICE_TRANSFORM_BUCKET,
    TL_ICE_TRANSFORM_TRUNCATE,
    TL_ICE_TRANSFORM_VOID
} tl_ice_transform_kind;

typedef struct tl_ice_transform {
    tl_ice_transform_kind kind;
    int32_t param; /* N of bucket[N], W of truncate[W]; 0 otherwise */
} tl_ice_transform;

/* Longest string tl_ice_transform_format writes, with its NUL. */
#define TL_ICE_TRANSFORM_STR_MAX 24

/* Parses "identity", "year", ..., "bucket[N]", "truncate[W]", "void" (case-insensitive
 * like Java). Anything else is TL_ERR_INVALID naming the string. */
tl_status tl_ice_transform_parse(const char *s, tl_ice_transform *out, tl_error *err);
void tl_ice_transform_format(tl_ice_transform t, char *buf, size_t size);

/* Whether tl_ice_transform_apply* (or, for identity, the value itself) can compute t on
 * columns of `source`: identity on boolean/int/long/date/time/timestamp(tz)/string,
 * year/month/day on date and timestamp(tz), hour on timestamp(tz). Otherwise
 * TL_ERR_INVALID naming both. */
tl_status tl_ice_transform_check(tl_ice_transform t, const tl_ice_type *source, tl_error *err);

/* The partition field type (day gives date, year/month/hour int, as Java and the
 * reference write in manifests). */
void tl_ice_transform_result_type(tl_ice_transform t, const tl_ice_type *source, tl_ice_type *out);

/* The transform of one microsecond timestamp (floor semantics for times before 1970).
 * Identity returns the value; bucket/truncate/void are not computed and return 0. */
int64_t tl_ice_transform_apply(tl_ice_transform t, int64_t micros);

/* The same for a whole column; `out` may alias `micros`. */
void tl_ice_transform_apply_many(tl_ice_transform t, const int64_t *micros, size_t n, int64_t *out);

/* The transform of a date (days since 1970-01-01). Hour is not defined on dates. */
int64_t tl_ice_transform_apply_date(tl_ice_transform t, int32_t days);

/* The human form of a transformed value as used in paths: year "2026", month "2026-01",
 * day "2026-01-01", hour "2026-01-01-13", identity the decimal integer. */
void tl_ice_transform_format_value(tl_ice_transform t, int64_t value, char *buf, size_t size);

/* The default partition field name: "<column>_<transform>" (time_day, time_hour, x_bucket,
 * x_trunc); identity keeps the column name. *out is malloc'd. */
tl_status tl_ice_partition_field_name(const char *column, tl_ice_transform t, char **out,
                                      tl_error *err);

struct tl_ice_value;

/* The human form of a partition value as Java Iceberg prints it in paths:
 * "null"; a temporal result as tl_ice_transform_format_value; an identity
 * value of a `source` column: a date as "2026-01-01", a boolean as
 * "true"/"false", a string as it is, a number in decimal. */
tl_status tl_ice_partition_value_text(tl_ice_transform t, const tl_ice_type *source,
                                      const struct tl_ice_value *value, tl_buf *out, tl_error *err);

/* Appends "<field name>=<value>" to out, URL-escaping both (the value's human form). */
tl_status tl_ice_partition_path_segment(const char *field_name, tl_ice_transform t,
                                        const tl_ice_type *source, const struct tl_ice_value *value,
                                        tl_buf *out, tl_error *err);

#endif
