#include "table/contract.h"

#include <stdlib.h>
#include <string.h>

#include <strings.h>

#include "core/clock.h"
#include "table/settings.h"

static bool parse_int(const char *v, int64_t *out)
{
    char *end = NULL;
    if (v[0] == '\0') return false;
    long long n = strtoll(v, &end, 10);
    if (*end != '\0' || n < 0) return false;
    *out = n;
    return true;
}

/* The codecs this writer has, by Iceberg's names (in any case), as the
 * reference takes them: "lz4" is Parquet's LZ4_RAW, "none" no codec. */
static const struct {
    const char *name;
    tl_parquet_codec codec;
} codecs[] = {{"zstd", TL_PARQUET_ZSTD},
              {"snappy", TL_PARQUET_SNAPPY},
              {"gzip", TL_PARQUET_GZIP},
              {"lz4", TL_PARQUET_LZ4_RAW},
              {"lz4_raw", TL_PARQUET_LZ4_RAW},
              {"brotli", TL_PARQUET_BROTLI},
              {"uncompressed", TL_PARQUET_UNCOMPRESSED},
              {"none", TL_PARQUET_UNCOMPRESSED}};

static bool parse_codec(const char *v, tl_parquet_codec *out)
{
    for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++)
        if (strcasecmp(codecs[i].name, v) == 0) {
            *out = codecs[i].codec;
            return true;
        }
    return false;
}

/* The most a codec's level may be (0: it takes none). */
static int max_level(tl_parquet_codec codec)
{
    switch (codec) {
    case TL_PARQUET_ZSTD:
        return 22;
    case TL_PARQUET_GZIP:
        return 9;
    case TL_PARQUET_BROTLI:
        return 11;
    default:
        return 0;
    }
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
                            "%s: must be zstd, lz4, snappy, gzip, brotli or uncompressed, got "
                            "\"%s\"",
                            key, value);
    if (strcmp(key, TL_PROP_CODEC_LEVEL) == 0 && (!parse_int(value, &n) || n > 22))
        return tl_error_set(err, TL_ERR_INVALID, "%s: must be an integer from 0 to 22, got \"%s\"",
                            key, value);
    return TL_OK;
}

static tl_status check_key_value(const char *key, const char *value, bool bare_names,
                                 const char **out, tl_error *err)
{
    *out = key;
    const char *canonical = NULL;
    TL_TRY(tl_setting_key(key, TL_LEVEL_TABLE, bare_names, &canonical, err));
    if (canonical == NULL) /* Iceberg and user properties */
        return value ? check_iceberg_property(key, value, err) : TL_OK;
    *out = canonical;
    return value ? tl_setting_check(tl_setting_find(canonical), value, err) : TL_OK;
}

tl_status tl_contract_check_property(const char *key, const char *value, const char **out,
                                     tl_error *err)
{
    return check_key_value(key, value, false, out, err);
}

tl_status tl_contract_check_change(const char *key, const char *value, const char **out,
                                   tl_error *err)
{
    return check_key_value(key, value, true, out, err);
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
    if (c->codec_level > max_level(c->codec)) c->codec_level = max_level(c->codec);
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
    c->dedup = v != NULL && tl_setting_parse_bool(v, &flag) && flag;
    v = tl_ice_metadata_property(md, TL_PROP_AUTO_MAINTAIN);
    c->auto_maintain = v == NULL || !tl_setting_parse_bool(v, &flag) || flag;
    c->target_file_size = int_property(md, TL_PROP_TARGET_FILE_SIZE, TL_DEFAULT_TARGET_FILE_SIZE);
    c->data_page_rows = int_property(md, TL_PROP_DATA_PAGE_ROWS, TL_DEFAULT_DATA_PAGE_ROWS);
    c->row_group_limit =
        int_property(md, TL_PROP_ROW_GROUP_ROWS,
                     int_property(md, TL_PROP_ROW_GROUP_LIMIT, TL_DEFAULT_ROW_GROUP_LIMIT));
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
