#include "table/contract.h"

#include <stdlib.h>
#include <string.h>

#include "core/clock.h"

typedef enum setting_kind {
    SETTING_DURATION,
    SETTING_BOOL,
    SETTING_INT,
    SETTING_PERCENT,
    SETTING_CHOICE
} setting_kind;

/* Settings a user may give as properties, with the kind of value each takes. */
static const struct {
    const char *name;
    setting_kind kind;
    const char *choices;
} settings[] = {
    {"retention", SETTING_DURATION, NULL},
    {"auto-maintain", SETTING_BOOL, NULL},
    {"target-file-size-bytes", SETTING_INT, NULL},
    {"compact-cold-after", SETTING_DURATION, NULL},
    {"keep-snapshots-until", SETTING_INT, NULL},
    {"compact-min-files", SETTING_INT, NULL},
    {"data-page-rows", SETTING_INT, NULL},
    {"compression-min-saving", SETTING_PERCENT, NULL},
    {"filter-pushdown", SETTING_BOOL, NULL},
    {"head-format", SETTING_CHOICE, "arrow,json,none"},
    {"min-snapshots", SETTING_INT, NULL},
    {"max-snapshots", SETTING_INT, NULL},
    {"snapshot-retention", SETTING_DURATION, NULL},
    {"read-dedup", SETTING_BOOL, NULL},
    {"read-dedup-strategy", SETTING_CHOICE, "merge,keys-first"},
    {"newest-first", SETTING_BOOL, NULL},
    {"version-check-interval", SETTING_DURATION, NULL},
    {"batch-id-retention", SETTING_DURATION, NULL},
};

/* Contract keys, fixed at create time by the create options. */
static const char *const fixed_settings[] = {"time-column", "series-key", "chunk-interval", "dedup",
                                             "ingest-time-column"};
static const char *const system_settings[] = {"format-version", "rollups", "batch-ledger"};

static bool parse_bool(const char *v, bool *out)
{
    if (strcmp(v, "true") == 0)
        *out = true;
    else if (strcmp(v, "false") == 0)
        *out = false;
    else
        return false;
    return true;
}

static bool parse_int(const char *v, int64_t *out)
{
    char *end = NULL;
    if (v[0] == '\0') return false;
    long long n = strtoll(v, &end, 10);
    if (*end != '\0' || n < 0) return false;
    *out = n;
    return true;
}

static bool choice_ok(const char *choices, const char *v)
{
    size_t n = strlen(v);
    for (const char *p = choices; p; p = strchr(p, ',')) {
        if (*p == ',') p++;
        if (strncmp(p, v, n) == 0 && (p[n] == ',' || p[n] == '\0')) return true;
    }
    return false;
}

static tl_status check_value(const char *key, setting_kind kind, const char *choices,
                             const char *value, tl_error *err)
{
    bool b;
    int64_t n;
    switch (kind) {
    case SETTING_DURATION: {
        tl_status st = tl_duration_parse(value, &n, err);
        return st == TL_OK ? st : tl_error_prefix(err, "%s", key);
    }
    case SETTING_BOOL:
        if (!parse_bool(value, &b))
            return tl_error_set(err, TL_ERR_INVALID, "%s: must be true or false, got \"%s\"", key,
                                value);
        return TL_OK;
    case SETTING_INT:
        if (!parse_int(value, &n))
            return tl_error_set(err, TL_ERR_INVALID,
                                "%s: must be a non-negative integer, got \"%s\"", key, value);
        return TL_OK;
    case SETTING_PERCENT:
        if (!parse_int(value, &n) || n > 100)
            return tl_error_set(err, TL_ERR_INVALID,
                                "%s: must be a percentage from 0 to 100, got \"%s\"", key, value);
        return TL_OK;
    case SETTING_CHOICE:
        if (!choice_ok(choices, value))
            return tl_error_set(err, TL_ERR_INVALID, "%s: must be one of %s, got \"%s\"", key,
                                choices, value);
        return TL_OK;
    }
    return TL_OK;
}

/* The codecs this writer has, by Iceberg's names. */
static const struct {
    const char *name;
    tl_parquet_codec codec;
} codecs[] = {{"zstd", TL_PARQUET_ZSTD},
              {"snappy", TL_PARQUET_SNAPPY},
              {"gzip", TL_PARQUET_GZIP},
              {"uncompressed", TL_PARQUET_UNCOMPRESSED}};

static bool parse_codec(const char *v, tl_parquet_codec *out)
{
    for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++)
        if (strcmp(codecs[i].name, v) == 0) {
            *out = codecs[i].codec;
            return true;
        }
    return false;
}

static tl_status check_iceberg_property(const char *key, const char *value, tl_error *err)
{
    int64_t n;
    tl_parquet_codec codec;
    if (strcmp(key, TL_PROP_ROW_GROUP_LIMIT) == 0 && (!parse_int(value, &n) || n == 0))
        return tl_error_set(err, TL_ERR_INVALID, "%s: must be a positive integer, got \"%s\"", key,
                            value);
    if (strcmp(key, TL_PROP_CODEC) == 0 && !parse_codec(value, &codec))
        return tl_error_set(err, TL_ERR_INVALID,
                            "%s: must be zstd, snappy, gzip or uncompressed, got \"%s\"", key,
                            value);
    if (strcmp(key, TL_PROP_CODEC_LEVEL) == 0 && (!parse_int(value, &n) || n > 22))
        return tl_error_set(err, TL_ERR_INVALID, "%s: must be an integer from 0 to 22, got \"%s\"",
                            key, value);
    return TL_OK;
}

tl_status tl_contract_check_property(const char *key, const char *value, tl_error *err)
{
    TL_TRY(check_iceberg_property(key, value, err));
    if (strncmp(key, "timelake.", 9) != 0) return TL_OK; /* Iceberg and user properties */
    const char *name = key + 9;
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
        if (strcmp(settings[i].name, name) == 0)
            return check_value(key, settings[i].kind, settings[i].choices, value, err);
    for (size_t i = 0; i < sizeof fixed_settings / sizeof fixed_settings[0]; i++)
        if (strcmp(fixed_settings[i], name) == 0)
            return tl_error_set(err, TL_ERR_INVALID,
                                "%s is fixed when the table is created, by its options "
                                "(time_column, series_key, chunk, dedup, ingest_time)",
                                key);
    for (size_t i = 0; i < sizeof system_settings / sizeof system_settings[0]; i++)
        if (strcmp(system_settings[i], name) == 0)
            return tl_error_set(err, TL_ERR_INVALID, "%s is set by Timelake itself, not by hand",
                                key);
    return tl_error_set(err, TL_ERR_INVALID, "unknown setting \"%s\"", key);
}

static int field_index(const tl_ice_schema *schema, const char *name)
{
    for (size_t i = 0; i < schema->n_fields; i++)
        if (strcmp(schema->fields[i].name, name) == 0) return (int)i;
    return -1;
}

static tl_status load_series_key(const tl_ice_metadata *md, const tl_ice_schema *schema,
                                 tl_contract *c, tl_error *err)
{
    const char *keys = tl_ice_metadata_property(md, TL_PROP_SERIES_KEY);
    if (keys == NULL || keys[0] == '\0') return TL_OK;
    for (const char *p = keys; p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        char *name = strndup(p, n);
        if (name == NULL || tl_strlist_push_owned(&c->series_key, name) != 0) {
            free(name);
            return tl_error_nomem(err);
        }
        p = comma ? comma + 1 : NULL;
    }
    c->series_index = calloc(c->series_key.len, sizeof *c->series_index);
    if (c->series_index == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < c->series_key.len; i++) {
        c->series_index[i] = field_index(schema, c->series_key.items[i]);
        if (c->series_index[i] < 0)
            return tl_error_set(err, TL_ERR_INVALID,
                                "series key column \"%s\" is not in the schema",
                                c->series_key.items[i]);
    }
    return TL_OK;
}

static int64_t int_property(const tl_ice_metadata *md, const char *key, int64_t fallback)
{
    const char *v = tl_ice_metadata_property(md, key);
    int64_t n;
    return v && parse_int(v, &n) && n > 0 ? n : fallback;
}

/* Settings another writer left out of range fall back to the defaults: they
 * only shape new files, and every choice makes valid ones. */
static void load_codec(const tl_ice_metadata *md, tl_contract *c)
{
    const char *v = tl_ice_metadata_property(md, TL_PROP_CODEC);
    if (v == NULL || !parse_codec(v, &c->codec)) parse_codec(TL_DEFAULT_CODEC, &c->codec);
    int64_t n;
    v = tl_ice_metadata_property(md, TL_PROP_CODEC_LEVEL);
    c->codec_level = v && parse_int(v, &n) && n <= 22 ? (int)n : TL_DEFAULT_CODEC_LEVEL;
    if (c->codec == TL_PARQUET_GZIP && c->codec_level > 9) c->codec_level = 9; /* zlib's most */
    v = tl_ice_metadata_property(md, TL_PROP_CODEC_MIN_SAVING);
    c->codec_min_saving = v && parse_int(v, &n) && n <= 100 ? (int)n : TL_DEFAULT_CODEC_MIN_SAVING;
}

tl_status tl_contract_load(const tl_ice_metadata *md, tl_contract *c, tl_error *err)
{
    memset(c, 0, sizeof *c);
    c->time_index = c->ingest_index = -1;
    const tl_ice_schema *schema = tl_ice_metadata_current_schema(md);
    if (schema == NULL) return tl_error_set(err, TL_ERR_INVALID, "table metadata has no schema");
    c->time_column = tl_ice_metadata_property(md, TL_PROP_TIME_COLUMN);
    if (c->time_column != NULL) {
        c->time_index = field_index(schema, c->time_column);
        if (c->time_index < 0)
            return tl_error_set(err, TL_ERR_INVALID, "time column \"%s\" is not in the schema",
                                c->time_column);
        c->chunk = tl_ice_metadata_property(md, TL_PROP_CHUNK);
        if (c->chunk == NULL) c->chunk = "day";
    }
    c->ingest_column = tl_ice_metadata_property(md, TL_PROP_INGEST_COLUMN);
    if (c->ingest_column != NULL) c->ingest_index = field_index(schema, c->ingest_column);
    if (c->ingest_index < 0) c->ingest_column = NULL;
    bool flag = false;
    const char *v = tl_ice_metadata_property(md, TL_PROP_DEDUP);
    c->dedup = v != NULL && parse_bool(v, &flag) && flag;
    v = tl_ice_metadata_property(md, TL_PROP_AUTO_MAINTAIN);
    c->auto_maintain = v == NULL || !parse_bool(v, &flag) || flag;
    c->target_file_size = int_property(md, TL_PROP_TARGET_FILE_SIZE, TL_DEFAULT_TARGET_FILE_SIZE);
    c->data_page_rows = int_property(md, TL_PROP_DATA_PAGE_ROWS, TL_DEFAULT_DATA_PAGE_ROWS);
    c->row_group_limit = int_property(md, TL_PROP_ROW_GROUP_LIMIT, TL_DEFAULT_ROW_GROUP_LIMIT);
    load_codec(md, c);
    tl_status st = load_series_key(md, schema, c, err);
    if (st == TL_OK) st = tl_part_fields_load(md, &c->partition, &c->n_partition, err);
    if (st != TL_OK) tl_contract_free(c);
    return st;
}

void tl_contract_free(tl_contract *c)
{
    tl_strlist_free(&c->series_key);
    free(c->series_index);
    c->series_index = NULL;
    free(c->partition);
    c->partition = NULL;
    c->n_partition = 0;
}
