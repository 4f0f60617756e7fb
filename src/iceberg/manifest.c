/* Shared parts of the manifest reader and writer: freeing entries and the
 * Avro type of partition values. */
#include "iceberg/manifest.h"

#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

void tl_ice_data_file_clear(tl_ice_data_file *f)
{
    free(f->file_path);
    free(f->file_format);
    for (size_t i = 0; i < f->n_partition; i++) free(f->partition[i].bytes);
    free(f->partition);
    free(f->column_sizes);
    free(f->value_counts);
    free(f->null_value_counts);
    free(f->nan_value_counts);
    for (size_t i = 0; i < f->n_lower_bounds; i++) free(f->lower_bounds[i].data);
    free(f->lower_bounds);
    for (size_t i = 0; i < f->n_upper_bounds; i++) free(f->upper_bounds[i].data);
    free(f->upper_bounds);
    free(f->split_offsets);
    free(f->equality_ids);
    free(f->key_metadata);
    free(f->referenced_data_file);
    memset(f, 0, sizeof *f);
}

void tl_ice_manifest_entries_free(tl_ice_manifest_entry *entries, size_t n)
{
    if (entries == NULL) return;
    for (size_t i = 0; i < n; i++) tl_ice_data_file_clear(&entries[i].file);
    free(entries);
}

/* Bytes of the fixed holding a decimal of this precision, as Java computes it:
 * the fewest n with floor(log10(2^(8n-1) - 1)) >= precision. */
static int tl_ice_decimal_bytes(int precision)
{
    int n = 1;
    while ((int)((8.0 * n - 1) * 0.30102999566398120) < precision) n++;
    return n;
}

static tl_status tl_ice_put(char *buf, size_t cap, tl_error *err, const char *fmt, ...)
    TL_PRINTF(4, 5);

static tl_status tl_ice_put(char *buf, size_t cap, tl_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap)
        return tl_error_set(err, TL_ERR_INVALID, "partition type buffer of %zu bytes too small",
                            cap);
    return TL_OK;
}

static const char *const tl_ice_plain_avro_types[][2] = {
    {"boolean", "\"boolean\""},
    {"int", "\"int\""},
    {"long", "\"long\""},
    {"float", "\"float\""},
    {"double", "\"double\""},
    {"string", "\"string\""},
    {"binary", "\"bytes\""},
    {"date", "{\"type\":\"int\",\"logicalType\":\"date\"}"},
    {"time", "{\"type\":\"long\",\"logicalType\":\"time-micros\"}"},
    {"timestamp",
     "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\",\"adjust-to-utc\":false}"},
    {"timestamptz",
     "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\",\"adjust-to-utc\":true}"},
    {"timestamp_ns",
     "{\"type\":\"long\",\"logicalType\":\"timestamp-nanos\",\"adjust-to-utc\":false}"},
    {"timestamptz_ns",
     "{\"type\":\"long\",\"logicalType\":\"timestamp-nanos\",\"adjust-to-utc\":true}"},
    {"uuid", "{\"type\":\"fixed\",\"name\":\"uuid_fixed\",\"size\":16,\"logicalType\":\"uuid\"}"},
};

static tl_status tl_ice_source_avro_type(const char *t, char *buf, size_t cap, tl_error *err)
{
    size_t n_plain = sizeof tl_ice_plain_avro_types / sizeof tl_ice_plain_avro_types[0];
    for (size_t i = 0; i < n_plain; i++)
        if (strcmp(t, tl_ice_plain_avro_types[i][0]) == 0)
            return tl_ice_put(buf, cap, err, "%s", tl_ice_plain_avro_types[i][1]);
    int p, s, len, end = 0;
    if (sscanf(t, "decimal(%d, %d)%n", &p, &s, &end) == 2 && t[end] == '\0' && p > 0 && p <= 38 &&
        s >= 0 && s <= p)
        return tl_ice_put(buf, cap, err,
                          "{\"type\":\"fixed\",\"name\":\"decimal_%d_%d\",\"size\":%d,"
                          "\"logicalType\":\"decimal\",\"precision\":%d,\"scale\":%d}",
                          p, s, tl_ice_decimal_bytes(p), p, s);
    end = 0;
    if (sscanf(t, "fixed[%d]%n", &len, &end) == 1 && t[end] == '\0' && len >= 0)
        return tl_ice_put(buf, cap, err, "{\"type\":\"fixed\",\"name\":\"fixed_%d\",\"size\":%d}",
                          len, len);
    return tl_error_set(err, TL_ERR_INVALID, "no partition Avro type for Iceberg type \"%s\"", t);
}

/* Whether `transform` is `name` or `name[N]` with a positive N. */
static bool tl_ice_transform_is(const char *transform, const char *name)
{
    size_t n = strlen(name);
    if (strncasecmp(transform, name, n) != 0) return false;
    if (transform[n] == '\0') return true;
    int param, end = 0;
    return transform[n] == '[' && sscanf(transform + n, "[%d]%n", &param, &end) == 1 &&
           transform[n + (size_t)end] == '\0' && param > 0;
}

tl_status tl_ice_partition_avro_type(const char *source_type, const char *transform, char *buf,
                                     size_t cap, tl_error *err)
{
    if (strcasecmp(transform, "identity") == 0 || strcasecmp(transform, "void") == 0 ||
        (tl_ice_transform_is(transform, "truncate") && strchr(transform, '[')))
        return tl_ice_source_avro_type(source_type, buf, cap, err);
    if (strcasecmp(transform, "day") == 0)
        return tl_ice_put(buf, cap, err, "{\"type\":\"int\",\"logicalType\":\"date\"}");
    if (strcasecmp(transform, "year") == 0 || strcasecmp(transform, "month") == 0 ||
        strcasecmp(transform, "hour") == 0 ||
        (tl_ice_transform_is(transform, "bucket") && strchr(transform, '[')))
        return tl_ice_put(buf, cap, err, "\"int\"");
    return tl_error_set(err, TL_ERR_INVALID, "unknown partition transform \"%s\"", transform);
}
