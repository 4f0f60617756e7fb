/* The definition of a materialized rollup, as the reference keeps it in
 * table properties (so either implementation maintains the other's):
 *   raw table:    timelake.rollups                 "ns.a,ns.b" (rollup names)
 *   rollup table: timelake.rollup-source           "ns.raw"
 *                 timelake.rollup-bucket           bucket width, "1h", "90m", "7d"
 *                 timelake.rollup-aggregates       JSON [{"name","function"[,"column"]}]
 *                 timelake.rollup-refresh-interval duration (absent: none)
 *                 timelake.rollup-routing          "false" turns routing off (absent: on)
 *                 timelake.time-column             the bucket column
 *                 timelake.series-key              the grouping keys
 *   rollup snapshot summary: timelake.rollup-source-snapshot, -sequence
 *     (the raw snapshot the rollup was last refreshed from).
 * See /work/wt/ROLLUP-DEF.md for the stored column of each aggregate. */
#ifndef TL_TABLE_ROLLUP_DEF_H
#define TL_TABLE_ROLLUP_DEF_H

#include <stdbool.h>
#include <stdint.h>

#include "core/strlist.h"
#include "table/table_internal.h"

#define TL_ROLLUPS_KEY "timelake.rollups"
#define TL_ROLLUP_SOURCE_KEY "timelake.rollup-source"
#define TL_ROLLUP_BUCKET_KEY "timelake.rollup-bucket"
#define TL_ROLLUP_AGGREGATES_KEY "timelake.rollup-aggregates"
#define TL_ROLLUP_REFRESH_KEY "timelake.rollup-refresh-interval"
#define TL_ROLLUP_ROUTING_KEY "timelake.rollup-routing"
#define TL_ROLLUP_SOURCE_SNAPSHOT_KEY "timelake.rollup-source-snapshot"
#define TL_ROLLUP_SOURCE_SEQUENCE_KEY "timelake.rollup-source-sequence"

/* The aggregates a rollup stores, and how (the stored column's type):
 * COUNT       count(*) or count(col)          BIGINT, required
 * SUM         sum(col)                        BIGINT for integers, else DOUBLE
 * MIN, MAX    min(col), max(col)              the column's type
 * AVG         avg(col)                        DOUBLE (the mean only: not mergeable alone)
 * FIRST, LAST first_value/last_value(col ORDER BY time)   the column's type
 * M4          m4(time, col)                   LIST(STRUCT(time TIMESTAMPTZ, value DOUBLE))
 * TWM, TWM_LINEAR time_weighted_mean(time, col [, 'linear'])  its state:
 *             LIST(STRUCT(first_time BIGINT, first_value DOUBLE, first_span BIGINT,
 *             last_time BIGINT, last_value DOUBLE, last_span BIGINT, area DOUBLE)) */
typedef enum tl_rollup_fn {
    TL_ROLLUP_COUNT,
    TL_ROLLUP_SUM,
    TL_ROLLUP_MIN,
    TL_ROLLUP_MAX,
    TL_ROLLUP_AVG,
    TL_ROLLUP_FIRST,
    TL_ROLLUP_LAST,
    TL_ROLLUP_M4,
    TL_ROLLUP_TWM,        /* forward fill */
    TL_ROLLUP_TWM_LINEAR, /* linear interpolation */
} tl_rollup_fn;

typedef struct tl_rollup_agg {
    char *name; /* the rollup's column */
    tl_rollup_fn fn;
    char *column; /* the raw table's column; NULL for count(*) */
} tl_rollup_agg;

typedef struct tl_rollup_def {
    char *source;        /* the raw table, "ns.table" */
    int64_t bucket_us;   /* the bucket width (> 0), buckets aligned to the Unix epoch */
    char *bucket_column; /* the rollup's time column */
    tl_strlist keys;     /* the grouping keys: the rollup's series key, in order */
    tl_rollup_agg *aggs;
    size_t n_aggs;
    int64_t refresh_interval_us; /* 0: none (refreshed only by maintenance or REFRESH) */
    bool routing;                /* false when timelake.rollup-routing is "false" */
    /* The raw snapshot it was last refreshed from and its sequence number
     * (tl_rollup_source_snapshot); 0 when never refreshed. */
    int64_t source_snapshot;
    int64_t source_sequence;
} tl_rollup_def;

/* The function's name in timelake.rollup-aggregates ("count", ...,
 * "time_weighted_mean", "time_weighted_mean:linear"). Static. */
const char *tl_rollup_fn_name(tl_rollup_fn fn);
/* The function of a name as above; false when unknown. */
bool tl_rollup_fn_parse(const char *name, tl_rollup_fn *out);

/* Parses the definition from a rollup's metadata. TL_ERR_INVALID "<name> is
 * not a rollup" when md has no timelake.rollup-source, or naming the property
 * that is malformed. On success *out is the caller's: tl_rollup_def_free. */
tl_status tl_rollup_def_parse(const tl_ice_metadata *md, const char *name, tl_rollup_def *out,
                              tl_error *err);
void tl_rollup_def_free(tl_rollup_def *d);

/* The raw snapshot a rollup was last refreshed from: the newest of its
 * snapshots (its own maintenance and other commits leave the key out) that
 * records one; 0 when none does. *sequence (may be NULL) gets its sequence
 * number. */
int64_t tl_rollup_source_snapshot(const tl_ice_metadata *md, int64_t *sequence);

/* timelake.rollup-aggregates's JSON of aggs (malloc'd; NULL: out of memory). */
char *tl_rollup_aggregates_json(const tl_rollup_agg *aggs, size_t n);

/* The rollup names a raw table's metadata lists (timelake.rollups), in
 * order, appended to *out. */
tl_status tl_rollup_list(const tl_ice_metadata *raw, tl_strlist *out, tl_error *err);

/* The comma-separated list of names (malloc'd; "" when empty; NULL: out of memory). */
char *tl_rollup_list_join(const tl_strlist *names);

#endif
