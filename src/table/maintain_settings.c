/* The properties that steer maintenance, with the reference's defaults. */
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "table/maintain.h"

#define DEFAULT_TARGET_FILE_SIZE (INT64_C(256) * 1024 * 1024)
#define DEFAULT_COMPACT_MIN_FILES 8
#define DEFAULT_COLD_AFTER_US (INT64_C(3600) * TL_MICROS_PER_SECOND)
#define DEFAULT_MIN_SNAPSHOTS 5
#define DEFAULT_MAX_SNAPSHOTS 100
#define DEFAULT_ORPHAN_WINDOW_MS (INT64_C(3600) * 1000)

static tl_status int_setting(const tl_table *t, const char *key, int64_t fallback, int64_t *out,
                             tl_error *err)
{
    const char *v = tl_ice_metadata_property(t->md, key);
    *out = fallback;
    if (v == NULL) return TL_OK;
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    if (v[0] == '\0' || *end != '\0' || n < 0)
        return tl_error_set(err, TL_ERR_INVALID, "%s: must be a non-negative integer, got \"%s\"",
                            key, v);
    *out = n;
    return TL_OK;
}

/* A duration property; "off" (where allowed) and absence give `fallback`/-1. */
static tl_status duration_setting(const char *key, const char *v, int64_t fallback, int64_t *out,
                                  tl_error *err)
{
    *out = fallback;
    if (v == NULL) return TL_OK;
    if (strcmp(v, "off") == 0) {
        *out = -1;
        return TL_OK;
    }
    tl_status st = tl_duration_parse(v, out, err);
    return st == TL_OK ? st : tl_error_prefix(err, "%s", key);
}

tl_status tl_maintain_settings_load(const tl_table *t, tl_maintain_settings *s, tl_error *err)
{
    memset(s, 0, sizeof *s);
    const tl_ice_metadata *md = t->md;
    TL_TRY(int_setting(t, "timelake.target-file-size-bytes", DEFAULT_TARGET_FILE_SIZE,
                       &s->target_file_size, err));
    if (s->target_file_size <= 0) s->target_file_size = DEFAULT_TARGET_FILE_SIZE;
    TL_TRY(int_setting(t, TL_PROP_COMPACT_MIN_FILES, DEFAULT_COMPACT_MIN_FILES,
                       &s->compact_min_files, err));
    if (s->compact_min_files < 2) s->compact_min_files = 2;
    TL_TRY(int_setting(t, TL_PROP_MIN_SNAPSHOTS, DEFAULT_MIN_SNAPSHOTS, &s->min_snapshots, err));
    if (s->min_snapshots < 1) s->min_snapshots = 1; /* the current snapshot always stays */
    TL_TRY(int_setting(t, TL_PROP_MAX_SNAPSHOTS, DEFAULT_MAX_SNAPSHOTS, &s->max_snapshots, err));
    TL_TRY(int_setting(t, TL_PROP_KEEP_SNAPSHOTS_UNTIL, 0, &s->keep_snapshots_until_ms, err));
    TL_TRY(duration_setting(TL_PROP_COMPACT_COLD_AFTER,
                            tl_ice_metadata_property(md, TL_PROP_COMPACT_COLD_AFTER),
                            DEFAULT_COLD_AFTER_US, &s->cold_after_us, err));
    TL_TRY(duration_setting(TL_PROP_RETENTION, tl_ice_metadata_property(md, TL_PROP_RETENTION), -1,
                            &s->retention_us, err));
    int64_t us;
    TL_TRY(duration_setting(TL_PROP_SNAPSHOT_RETENTION,
                            tl_ice_metadata_property(md, TL_PROP_SNAPSHOT_RETENTION), -1, &us,
                            err));
    s->snapshot_retention_ms = us < 0 ? -1 : us / 1000;
    TL_TRY(duration_setting(TL_ENV_ORPHAN_WINDOW, getenv(TL_ENV_ORPHAN_WINDOW),
                            DEFAULT_ORPHAN_WINDOW_MS * 1000, &us, err));
    s->orphan_window_ms = us < 0 ? INT64_MAX : us / 1000;
    return TL_OK;
}

/* Days since the epoch of the first day of a month (civil calendar). */
static int64_t days_from_civil(int64_t y, int64_t m)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int64_t month_start_micros(int64_t months)
{
    int64_t y = 1970 + (months >= 0 ? months / 12 : (months - 11) / 12);
    int64_t m = months - (y - 1970) * 12 + 1;
    return days_from_civil(y, m) * TL_MICROS_PER_DAY;
}

int64_t tl_partition_end_micros(const tl_table *t, int64_t value)
{
    const tl_ice_partition_spec *spec = tl_ice_metadata_default_spec(t->md);
    tl_ice_transform tr;
    if (t->contract.time_index < 0 || spec == NULL || spec->n_fields == 0 ||
        tl_ice_transform_parse(spec->fields[0].transform, &tr, NULL) != TL_OK)
        return INT64_MAX;
    switch (tr.kind) {
    case TL_ICE_TRANSFORM_HOUR:
        return (value + 1) * 3600 * TL_MICROS_PER_SECOND;
    case TL_ICE_TRANSFORM_DAY:
        return (value + 1) * TL_MICROS_PER_DAY;
    case TL_ICE_TRANSFORM_MONTH:
        return month_start_micros(value + 1);
    case TL_ICE_TRANSFORM_YEAR:
        return month_start_micros((value + 1) * 12);
    default:
        return INT64_MAX;
    }
}
