#include "table/settings.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/clock.h"

#define CREATE TL_LEVEL_CREATE
#define TABLE TL_LEVEL_TABLE
#define SESSION TL_LEVEL_SESSION
#define CALL TL_LEVEL_CALL
#define KEY(name) TL_SETTING_PREFIX name

/* In the order `timelake settings` lists them: the contract, maintenance,
 * the layout of files, snapshots, then how the reader reads. */
static const tl_setting registry[] = {
    {KEY("time-column"),
     {"time-column", "column", "", "create",
      "The timestamp column. A table with one is a time-series table."},
     TL_SETTING_TEXT,
     NULL,
     CREATE},
    {KEY("series-key"),
     {"series-key", "columns, comma-separated", "", "create",
      "The columns that tell one series from another (sorted on before time)."},
     TL_SETTING_TEXT,
     NULL,
     CREATE},
    {KEY("chunk-interval"),
     {"chunk-interval", "hour, day or month", "day (time-series tables)", "create",
      "How much time one partition of a time-series table holds."},
     TL_SETTING_CHOICE,
     "hour,day,month",
     CREATE},
    {KEY("dedup"),
     {"dedup", "true or false", "true (time-series tables)", "create",
      "Rows of one (series, time) count once, the latest write winning: within an append, "
      "when reading and when compacting."},
     TL_SETTING_BOOL,
     NULL,
     CREATE},
    {KEY("ingest-time-column"),
     {"ingest-time-column", "column", "_ingest_ts (time-series tables)", "create",
      "The column each append fills with its start time; among rows of one (series, time) the "
      "latest insertion wins."},
     TL_SETTING_TEXT,
     NULL,
     CREATE},
    {KEY("retention"),
     {"retention", "duration", "forever", "create,table",
      "Maintenance drops whole partitions that ended longer ago than this (e.g. 90d)."},
     TL_SETTING_DURATION,
     NULL,
     CREATE | TABLE},
    {KEY("auto-maintain"),
     {"auto-maintain", "true or false", "true", "table,call",
      "Appends run maintenance inline (size-tiered compaction, retention, snapshot expiry) when "
      "it is due. One append may say otherwise."},
     TL_SETTING_BOOL,
     NULL,
     TABLE | CALL},
    {KEY("compact-min-files"),
     {"compact-min-files", "count", "8", "table",
      "Inline compaction merges a size tier of a partition once it has this many files."},
     TL_SETTING_COUNT,
     NULL,
     TABLE},
    {KEY("compact-cold-after"),
     {"compact-cold-after", "duration or off", "1h", "table,call",
      "Inline maintenance rewrites a whole partition once the table holds data this much newer "
      "than the partition's end and the partition has two small files; off leaves it to the "
      "size tiers."},
     TL_SETTING_DURATION_OFF,
     NULL,
     TABLE | CALL},
    {KEY("target-file-size-bytes"),
     {"target-file-size-bytes", "bytes", "268435456", "table",
      "Compaction and large appends roll to a new data file at this size (256 MiB)."},
     TL_SETTING_COUNT,
     NULL,
     TABLE},
    {KEY("row-group-rows"),
     {"row-group-rows", "count", "65536", "table",
      "Rows per Parquet row group in the data files written (the Iceberg property "
      "write.parquet.row-group-limit too; this one wins)."},
     TL_SETTING_COUNT,
     NULL,
     TABLE},
    {KEY("data-page-rows"),
     {"data-page-rows", "count", "4096", "table",
      "Rows per Parquet data page in the files written."},
     TL_SETTING_COUNT,
     NULL,
     TABLE},
    {KEY("compression-min-saving"),
     {"compression-min-saving", "percent", "20", "table",
      "A column chunk the codec shrinks by less than this is stored uncompressed."},
     TL_SETTING_PERCENT,
     NULL,
     TABLE},
    {KEY("snapshot-retention"),
     {"snapshot-retention", "duration", "none", "table",
      "Snapshot expiry removes snapshots older than this, keeping min-snapshots at least and "
      "max-snapshots at most."},
     TL_SETTING_DURATION,
     NULL,
     TABLE},
    {KEY("min-snapshots"),
     {"min-snapshots", "count", "5", "table", "Snapshots always kept, whatever their age."},
     TL_SETTING_COUNT,
     NULL,
     TABLE},
    {KEY("max-snapshots"),
     {"max-snapshots", "count", "100", "table",
      "Snapshots kept at most; older ones expire even when younger than snapshot-retention."},
     TL_SETTING_COUNT,
     NULL,
     TABLE},
    {KEY("keep-snapshots-until"),
     {"keep-snapshots-until", "milliseconds since the epoch", "", "table",
      "No snapshot expires before this time."},
     TL_SETTING_COUNT,
     NULL,
     TABLE},
    {KEY("batch-id-retention"),
     {"batch-id-retention", "duration", "forever", "table",
      "Batch ids older than this are forgotten when snapshot expiry writes a new batch ledger."},
     TL_SETTING_DURATION,
     NULL,
     TABLE},
    {KEY("head-format"),
     {"head-format", "arrow, json or none", "arrow", "table",
      "none: commits to an object store write no head object (metadata/timelake-c-head), and "
      "cold readers take a round trip more."},
     TL_SETTING_CHOICE,
     "arrow,json,none",
     TABLE},
    {KEY("head-inline-bytes"),
     {"head-inline-bytes", "bytes", "1048576", "table",
      "Room in the head object for the last-value index and the Parquet footers of the newest "
      "large files (1 MiB); what does not fit is read on its own."},
     TL_SETTING_COUNT,
     NULL,
     TABLE},
    {KEY("read-dedup"),
     {"read-dedup", "true or false", "true", "table,session",
      "Queries return only the latest write of each (series, time) of a dedup table before "
      "compaction removed the older ones; false returns every stored row."},
     TL_SETTING_BOOL,
     NULL,
     TABLE | SESSION},
    {KEY("read-dedup-strategy"),
     {"read-dedup-strategy", "merge or keys-first", "merge", "table,session",
      "How the reader leaves out older writes: merge ranks the rows of the overlapping files by "
      "key; keys-first first finds the older copies from the key columns only, then reads the "
      "files as any scan and leaves those rows out."},
     TL_SETTING_CHOICE,
     "merge,keys-first",
     TABLE | SESSION},
    {KEY("filter-pushdown"),
     {"filter-pushdown", "auto, true or false", "auto", "table,session",
      "Filters on the time and series key narrow the rows a query decodes to the pages that can "
      "hold them, before any other column is decoded. auto: for local tables; on an object "
      "store only where it saves fetching whole files."},
     TL_SETTING_CHOICE,
     "auto,true,false",
     TABLE | SESSION},
    {KEY("in-list-pruning"),
     {"in-list-pruning", "true or false", "true", "table,session",
      "A series-key IN (...) list prunes files, row groups and pages by each value."},
     TL_SETTING_BOOL,
     NULL,
     TABLE | SESSION},
    {KEY("newest-first"),
     {"newest-first", "true or false", "true", "table,session",
      "ORDER BY time DESC LIMIT k (or ASC) reads the newest (oldest) partitions first, and "
      "further ones only when those held fewer than k rows."},
     TL_SETTING_BOOL,
     NULL,
     TABLE | SESSION},
    {KEY("time-weighted-mean"),
     {"time-weighted-mean", "auto, segments or merge", "auto", "table,session",
      "The reference's choice of how time_weighted_mean orders each series' readings; "
      "accepted for its tables, no effect here: Timelake always orders them (its merge)."},
     TL_SETTING_CHOICE,
     "auto,segments,merge",
     TABLE | SESSION},
    {KEY("version-check-interval"),
     {"version-check-interval", "duration", "1s", "table,session",
      "Queries reuse a table version loaded or checked this recently without asking the store "
      "for a newer one, so they may miss other processes' commits for that long. 0s checks on "
      "every query; this process's own commits are seen at once."},
     TL_SETTING_DURATION,
     NULL,
     TABLE | SESSION},
    {KEY("format-version"),
     {"format-version", "version", "0.3.0", "", "The table format; set by Timelake."},
     TL_SETTING_TEXT,
     NULL,
     0},
    {KEY("rollups"),
     {"rollups", "table names", "", "", "A raw table's rollups; set by Timelake."},
     TL_SETTING_TEXT,
     NULL,
     0},
    {KEY("rollup-source"),
     {"rollup-source", "table name", "", "", "A rollup's raw table; set by Timelake."},
     TL_SETTING_TEXT,
     NULL,
     0},
    {KEY("rollup-bucket"),
     {"rollup-bucket", "duration", "", "", "A rollup's bucket width; set by Timelake."},
     TL_SETTING_DURATION,
     NULL,
     0},
    {KEY("rollup-aggregates"),
     {"rollup-aggregates", "JSON", "", "",
      "A rollup's aggregates (name, function, column); set by Timelake."},
     TL_SETTING_TEXT,
     NULL,
     0},
    {KEY("rollup-refresh-interval"),
     {"rollup-refresh-interval", "duration", "", "table",
      "A rollup is refreshed after an append to its raw table once this long has passed since "
      "its last refresh; without it, only maintenance and REFRESH MATERIALIZED ROLLUP refresh "
      "it."},
     TL_SETTING_DURATION,
     NULL,
     TABLE},
    {KEY("rollup-routing"),
     {"rollup-routing", "true or false", "true", "table,session",
      "A GROUP BY time_bucket(...) query on a raw table reads the whole buckets its rollups "
      "hold unchanged from them, the rest from the raw data, with the same answer; false on "
      "the raw table or the session reads raw data only, false on a rollup leaves that "
      "rollup out."},
     TL_SETTING_BOOL,
     NULL,
     TABLE | SESSION},
    {KEY("batch-ledger"),
     {"batch-ledger", "object URL", "", "",
      "The batch ids of expired snapshots (metadata/batch-ledger-*.avro); set by Timelake."},
     TL_SETTING_TEXT,
     NULL,
     0},
};

#define N_SETTINGS (sizeof registry / sizeof registry[0])

const tl_setting_info *tl_setting_at(size_t i)
{
    return i < N_SETTINGS ? &registry[i].info : NULL;
}

/* Compares a spelling (dashes or underscores, any case) with a kebab name. */
static bool same_name(const char *spelled, const char *name)
{
    for (; *spelled && *name; spelled++, name++) {
        char c = *spelled == '_' ? '-' : (char)tolower((unsigned char)*spelled);
        if (c != *name) return false;
    }
    return *spelled == '\0' && *name == '\0';
}

static bool has_prefix(const char *key)
{
    return strncasecmp(key, TL_SETTING_PREFIX, strlen(TL_SETTING_PREFIX)) == 0;
}

const tl_setting *tl_setting_find(const char *name)
{
    if (has_prefix(name)) name += strlen(TL_SETTING_PREFIX);
    for (size_t i = 0; i < N_SETTINGS; i++)
        if (same_name(name, registry[i].info.name)) return &registry[i];
    return NULL;
}

bool tl_setting_parse_bool(const char *v, bool *out)
{
    if (strcasecmp(v, "true") == 0)
        *out = true;
    else if (strcasecmp(v, "false") == 0)
        *out = false;
    else
        return false;
    return true;
}

bool tl_setting_is(const char *v, const char *choice)
{
    return same_name(v, choice);
}

static bool choice_ok(const char *choices, const char *v)
{
    char one[32];
    for (const char *p = choices; p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        snprintf(one, sizeof one, "%.*s", (int)n, p);
        if (tl_setting_is(v, one)) return true;
        p = comma ? comma + 1 : NULL;
    }
    return false;
}

static bool count_ok(const char *v, int64_t *out)
{
    if (v[0] == '\0') return false;
    int64_t n = 0;
    for (const char *p = v; *p; p++) {
        if (!isdigit((unsigned char)*p) || n > (INT64_MAX - 9) / 10) return false;
        n = n * 10 + (*p - '0');
    }
    *out = n;
    return true;
}

tl_status tl_setting_check(const tl_setting *s, const char *value, tl_error *err)
{
    const char *name = s->info.name;
    bool b;
    int64_t n;
    switch (s->kind) {
    case TL_SETTING_BOOL:
        if (tl_setting_parse_bool(value, &b)) return TL_OK;
        return tl_error_set(err, TL_ERR_INVALID,
                            TL_SETTING_PREFIX "%s: must be true or false, got \"%s\"", name, value);
    case TL_SETTING_COUNT:
        if (count_ok(value, &n)) return TL_OK;
        return tl_error_set(err, TL_ERR_INVALID,
                            TL_SETTING_PREFIX "%s: must be a non-negative integer, got \"%s\"",
                            name, value);
    case TL_SETTING_PERCENT:
        if (count_ok(value, &n) && n <= 100) return TL_OK;
        return tl_error_set(err, TL_ERR_INVALID,
                            TL_SETTING_PREFIX "%s: must be a percentage from 0 to 100, got \"%s\"",
                            name, value);
    case TL_SETTING_DURATION_OFF:
        if (strcasecmp(value, "off") == 0) return TL_OK;
        /* fall through */
    case TL_SETTING_DURATION:
        if (tl_duration_parse(value, &n, err) == TL_OK) return TL_OK;
        return tl_error_prefix(err, TL_SETTING_PREFIX "%s", name);
    case TL_SETTING_CHOICE:
        if (choice_ok(s->choices, value)) return TL_OK;
        return tl_error_set(err, TL_ERR_INVALID, TL_SETTING_PREFIX "%s: must be %s, got \"%s\"",
                            name, s->info.values, value);
    case TL_SETTING_TEXT:
        if (value[0] != '\0') return TL_OK;
        return tl_error_set(err, TL_ERR_INVALID, TL_SETTING_PREFIX "%s must not be empty", name);
    }
    return TL_OK;
}

static const char *level_name(unsigned level)
{
    switch (level) {
    case TL_LEVEL_CREATE:
        return "create";
    case TL_LEVEL_TABLE:
        return "table";
    case TL_LEVEL_SESSION:
        return "session";
    default:
        return "call";
    }
}

/* The reference's message names an unknown key as given, except that a
 * session setting is named as SQL names it: "timelake.<name_with_underscores>". */
static tl_status unknown(const char *key, bool prefixed, unsigned level, tl_error *err)
{
    char name[256];
    snprintf(name, sizeof name, "%s%s",
             prefixed || level != TL_LEVEL_SESSION ? "" : TL_SETTING_PREFIX, key);
    for (char *p = name; level == TL_LEVEL_SESSION && *p; p++)
        if (*p == '-') *p = '_';
    return tl_error_set(err, TL_ERR_INVALID,
                        "unknown setting \"%s\" (`timelake settings` lists them)", name);
}

tl_status tl_setting_key(const char *key, unsigned level, bool bare_names, const char **out,
                         tl_error *err)
{
    *out = NULL;
    bool prefixed = has_prefix(key);
    if (!prefixed && (!bare_names || strchr(key, '.') != NULL)) return TL_OK;
    const tl_setting *s = tl_setting_find(key);
    if (s == NULL) return unknown(key, prefixed, level, err);
    if (s->levels == TL_LEVEL_CREATE)
        return tl_error_set(err, TL_ERR_INVALID,
                            TL_SETTING_PREFIX "%s is fixed when the table is created, by its "
                                              "options (time_column, series_key, chunk, dedup, "
                                              "ingest_time)",
                            s->info.name);
    if (s->levels == 0)
        return tl_error_set(err, TL_ERR_INVALID,
                            TL_SETTING_PREFIX "%s is set by Timelake itself, not by hand",
                            s->info.name);
    if (!(s->levels & level)) {
        char levels[64]; /* "create,table" as "create, table" */
        size_t n = 0;
        for (const char *p = s->info.levels; *p && n + 3 < sizeof levels; p++) {
            levels[n++] = *p;
            if (*p == ',') levels[n++] = ' ';
        }
        levels[n] = '\0';
        return tl_error_set(err, TL_ERR_INVALID,
                            TL_SETTING_PREFIX "%s can't be set at the %s level, only at: %s",
                            s->info.name, level_name(level), levels);
    }
    *out = s->key;
    return TL_OK;
}

tl_status tl_settings_check_session(const char *const *settings, tl_error *err)
{
    for (const char *const *kv = settings; kv && kv[0]; kv += 2) {
        if (kv[1] == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "setting \"%s\" has no value", kv[0]);
        const char *key = NULL;
        TL_TRY(tl_setting_key(kv[0], TL_LEVEL_SESSION, true, &key, err));
        if (key == NULL)
            return tl_error_set(err, TL_ERR_INVALID,
                                "unknown setting \"%s\": session settings are Timelake's "
                                "(`timelake settings` lists them)",
                                kv[0]);
        TL_TRY(tl_setting_check(tl_setting_find(key), kv[1], err));
    }
    return TL_OK;
}

const char *tl_setting_value(const tl_ice_metadata *md, const char *const *session,
                             const char *name)
{
    const char *found = NULL;
    for (const char *const *kv = session; kv && kv[0] && kv[1]; kv += 2) {
        const char *n = has_prefix(kv[0]) ? kv[0] + strlen(TL_SETTING_PREFIX) : kv[0];
        if (same_name(n, name)) found = kv[1]; /* the last one given wins */
    }
    if (found || md == NULL) return found;
    const tl_setting *s = tl_setting_find(name);
    return s ? tl_ice_metadata_property(md, s->key) : NULL;
}

bool tl_setting_flag(const tl_ice_metadata *md, const char *const *session, const char *name,
                     bool fallback)
{
    const char *v = tl_setting_value(md, session, name);
    bool b;
    return v && tl_setting_parse_bool(v, &b) ? b : fallback;
}

int64_t tl_setting_duration(const tl_ice_metadata *md, const char *const *session, const char *name,
                            int64_t fallback)
{
    const char *v = tl_setting_value(md, session, name);
    int64_t us;
    return v && tl_duration_parse(v, &us, NULL) == TL_OK ? us : fallback;
}

const char *tl_chunk_canonical(const char *chunk)
{
    static const struct {
        const char *alias, *chunk;
    } aliases[] = {{"hour", "hour"}, {"1h", "hour"},     {"1 hour", "hour"},
                   {"day", "day"},   {"1d", "day"},      {"24h", "day"},
                   {"1 day", "day"}, {"month", "month"}, {"1 month", "month"}};
    while (isspace((unsigned char)*chunk)) chunk++;
    size_t n = strlen(chunk);
    while (n > 0 && isspace((unsigned char)chunk[n - 1])) n--;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strlen(aliases[i].alias) == n && strncasecmp(aliases[i].alias, chunk, n) == 0)
            return aliases[i].chunk;
    return NULL;
}
