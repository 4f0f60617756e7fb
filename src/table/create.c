/* Creating a table: validate the contract, derive schema, partition spec and
 * sort order as the reference does, and commit v1.metadata.json with a
 * conditional create so that two creators cannot both win. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow_type.h"
#include "core/clock.h"
#include "core/random.h"
#include "table/append.h"
#include "table/settings.h"
#include "table/table_internal.h"

#define PARTITION_FIELD_ID 1000

typedef struct create_plan {
    tl_ice_schema schema;
    tl_ice_partition_spec spec;
    tl_ice_partition_field spec_fields[TL_MAX_PARTITION_FIELDS];
    char *field_names[TL_MAX_PARTITION_FIELDS];
    char transforms[TL_MAX_PARTITION_FIELDS][TL_ICE_TRANSFORM_STR_MAX];
    tl_ice_sort_order order;
    tl_ice_sort_field *sort_fields;
    tl_strlist properties; /* key, value, key, value, ... */
    char *series_key_list;
} create_plan;

static void plan_free(create_plan *p)
{
    tl_ice_schema_free(&p->schema);
    free(p->sort_fields);
    tl_strlist_free(&p->properties);
    for (size_t i = 0; i < p->spec.n_fields; i++) free(p->field_names[i]);
    free(p->series_key_list);
}

/* Adds a field to the plan's partition spec (name taken over). */
static void add_spec_field(create_plan *p, int32_t source_id, char *name, tl_ice_transform tr)
{
    size_t i = p->spec.n_fields++;
    tl_ice_transform_format(tr, p->transforms[i], sizeof p->transforms[i]);
    p->field_names[i] = name;
    p->spec_fields[i] = (tl_ice_partition_field){source_id, PARTITION_FIELD_ID + (int32_t)i, name,
                                                 p->transforms[i]};
    p->spec.fields = p->spec_fields;
}

static tl_status add_property(create_plan *p, const char *key, const char *value, tl_error *err)
{
    if (tl_strlist_push(&p->properties, key) != 0 || tl_strlist_push(&p->properties, value) != 0)
        return tl_error_nomem(err);
    return TL_OK;
}

static bool has_property(const create_plan *p, const char *key)
{
    for (size_t i = 0; i + 1 < p->properties.len; i += 2)
        if (strcmp(p->properties.items[i], key) == 0) return true;
    return false;
}

static int field_index(const tl_ice_schema *s, const char *name)
{
    for (size_t i = 0; i < s->n_fields; i++)
        if (strcmp(s->fields[i].name, name) == 0) return (int)i;
    return -1;
}

static tl_status check_time_column(create_plan *p, const struct ArrowSchema *schema,
                                   const char *time_column, tl_error *err)
{
    int i = field_index(&p->schema, time_column);
    if (i < 0)
        return tl_error_set(err, TL_ERR_INVALID, "time column \"%s\" is not in the schema",
                            time_column);
    tl_ice_type_id id = p->schema.fields[i].type.id;
    if (id != TL_ICE_TIMESTAMP && id != TL_ICE_TIMESTAMPTZ) {
        tl_arrow_type at;
        char name[96] = "?";
        if (tl_arrow_type_parse(schema->children[i]->format, &at, NULL) == TL_OK)
            tl_arrow_type_describe(&at, name, sizeof name);
        return tl_error_set(err, TL_ERR_INVALID, "time column \"%s\" must be a timestamp, got %s",
                            time_column, name);
    }
    /* Every row needs a time to land in a partition. */
    p->schema.fields[i].required = true;
    return TL_OK;
}

static tl_status add_ingest_column(create_plan *p, tl_error *err)
{
    if (field_index(&p->schema, TL_INGEST_COLUMN) >= 0)
        return tl_error_set(err, TL_ERR_INVALID,
                            "column \"%s\" is reserved for the ingest time, which the table adds "
                            "itself: rename that column, or create the table without an ingest "
                            "time (ingest_time=False in Python, .ingest_time = 0 in C)",
                            TL_INGEST_COLUMN);
    tl_ice_field *fields =
        realloc(p->schema.fields, (p->schema.n_fields + 1) * sizeof *p->schema.fields);
    if (fields == NULL) return tl_error_nomem(err);
    p->schema.fields = fields;
    tl_ice_field *f = &fields[p->schema.n_fields];
    memset(f, 0, sizeof *f);
    f->id = tl_ice_schema_max_field_id(&p->schema) + 1;
    f->name = strdup(TL_INGEST_COLUMN);
    if (f->name == NULL) return tl_error_nomem(err);
    f->required = true;
    f->type.id = TL_ICE_TIMESTAMPTZ;
    p->schema.n_fields++;
    return TL_OK;
}

static tl_status plan_series_key(create_plan *p, const tl_table_options *o, int time_index,
                                 tl_error *err)
{
    size_t n = o->series_key_len;
    p->sort_fields = calloc(n + 1, sizeof *p->sort_fields);
    tl_buf list = {0};
    if (p->sort_fields == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        const char *k = o->series_key[i];
        int idx = k ? field_index(&p->schema, k) : -1;
        if (idx < 0) {
            tl_buf_free(&list);
            return tl_error_set(err, TL_ERR_INVALID,
                                "series key column \"%s\" is not in the schema", k ? k : "(null)");
        }
        if (TL_ICE_TYPE_IS_NESTED(p->schema.fields[idx].type.id)) {
            char type[TL_ICE_TYPE_STR_MAX];
            tl_ice_type_format(&p->schema.fields[idx].type, type, sizeof type);
            tl_buf_free(&list);
            return tl_error_set(err, TL_ERR_INVALID,
                                "series key column \"%s\" is a %s: a series key column must "
                                "hold single values (strings, numbers, dates)",
                                k, type);
        }
        p->sort_fields[i] = (tl_ice_sort_field){p->schema.fields[idx].id, "identity", false, true};
        tl_buf_printf(&list, "%s%s", i ? "," : "", k);
    }
    p->sort_fields[n] =
        (tl_ice_sort_field){p->schema.fields[time_index].id, "identity", false, true};
    p->order = (tl_ice_sort_order){1, p->sort_fields, n + 1};
    p->series_key_list = list.data ? (char *)tl_buf_detach(&list, NULL) : strdup("");
    return p->series_key_list ? TL_OK : tl_error_nomem(err);
}

/* The time-series part of a plan: partitioning, sort order and contract properties. */
static tl_status plan_time_series(create_plan *p, const struct ArrowSchema *schema,
                                  const tl_table_options *o, tl_error *err)
{
    const char *chunk = o->chunk ? tl_chunk_canonical(o->chunk) : "day";
    tl_ice_transform tr;
    if (chunk == NULL || tl_ice_transform_parse(chunk, &tr, NULL) != TL_OK)
        return tl_error_set(err, TL_ERR_INVALID,
                            "chunk interval must be hour, day or month, got \"%s\"", o->chunk);
    TL_TRY(check_time_column(p, schema, o->time_column, err));
    int time_index = field_index(&p->schema, o->time_column);
    char *name = NULL;
    TL_TRY(tl_ice_partition_field_name(o->time_column, tr, &name, err));
    add_spec_field(p, p->schema.fields[time_index].id, name, tr);
    TL_TRY(plan_series_key(p, o, time_index, err));
    bool ingest = o->ingest_time != 0;
    if (ingest) TL_TRY(add_ingest_column(p, err));
    bool dedup = o->dedup != 0;
    if (o->retention && has_property(p, TL_PROP_RETENTION))
        return tl_error_set(err, TL_ERR_INVALID,
                            "retention is given twice: as an option and as property %s",
                            TL_PROP_RETENTION);
    if (o->retention) { /* as the reference writes it: "90 days" is "90d" */
        int64_t us = 0;
        char text[32];
        TL_TRY(tl_duration_parse(o->retention, &us, err));
        tl_duration_format(us, text, sizeof text);
        TL_TRY(add_property(p, TL_PROP_RETENTION, text, err));
    }
    TL_TRY(add_property(p, TL_PROP_FORMAT_VERSION, TL_FORMAT_VERSION, err));
    TL_TRY(add_property(p, "write.format.default", "parquet", err));
    if (o->series_key_len) TL_TRY(add_property(p, TL_PROP_SERIES_KEY, p->series_key_list, err));
    if (!has_property(p, TL_PROP_CODEC))
        TL_TRY(add_property(p, TL_PROP_CODEC, TL_DEFAULT_CODEC, err));
    TL_TRY(add_property(p, TL_PROP_DEDUP, dedup ? "true" : "false", err));
    TL_TRY(add_property(p, TL_PROP_CHUNK, chunk, err));
    TL_TRY(add_property(p, TL_PROP_PREVIOUS_VERSIONS, "20", err));
    if (!has_property(p, TL_PROP_DELETE_AFTER_COMMIT))
        TL_TRY(add_property(p, TL_PROP_DELETE_AFTER_COMMIT, "true", err));
    if (ingest) TL_TRY(add_property(p, TL_PROP_INGEST_COLUMN, TL_INGEST_COLUMN, err));
    return add_property(p, TL_PROP_TIME_COLUMN, o->time_column, err);
}

static tl_status plan_partition_by(create_plan *p, const tl_table_options *o, tl_error *err)
{
    if (o->partition_by_len > TL_MAX_PARTITION_BY)
        return tl_error_set(err, TL_ERR_INVALID, "partition_by: at most %d entries, got %zu",
                            TL_MAX_PARTITION_BY, o->partition_by_len);
    for (size_t i = 0; i < o->partition_by_len; i++) {
        const char *entry = o->partition_by ? o->partition_by[i] : NULL;
        char *column = NULL, *name = NULL;
        tl_ice_transform tr;
        TL_TRY(tl_part_by_parse(entry, &p->schema, &column, &tr, err));
        tl_status st = tl_part_by_check_series(o->time_column, o->series_key, o->series_key_len,
                                               o->dedup != 0, entry, column, tr, err);
        if (st == TL_OK) st = tl_ice_partition_field_name(column, tr, &name, err);
        for (size_t k = 0; st == TL_OK && k < p->spec.n_fields; k++)
            if (strcmp(p->field_names[k], name) == 0)
                st = tl_error_set(err, TL_ERR_INVALID, "partition_by \"%s\" is given twice", entry);
        if (st == TL_OK)
            add_spec_field(p, p->schema.fields[field_index(&p->schema, column)].id, name, tr);
        else
            free(name);
        free(column);
        TL_TRY(st);
    }
    return TL_OK;
}

static tl_status check_options(const tl_table_options *o, tl_error *err)
{
    int64_t us;
    if (o->retention && tl_duration_parse(o->retention, &us, err) != TL_OK)
        return tl_error_prefix(err, "retention");
    if (o->time_column == NULL) {
        if (o->series_key_len || o->chunk || o->retention || o->dedup == 1)
            return tl_error_set(err, TL_ERR_INVALID,
                                "series_key, chunk, retention and dedup need a time_column");
    }
    for (const char *const *p = o->properties; p && p[0]; p += 2) {
        if (p[1] == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "property \"%s\" has no value", p[0]);
        const char *key = NULL;
        TL_TRY(tl_contract_check_property(p[0], p[1], &key, err));
    }
    return TL_OK;
}

/* The user's properties, each under the key it is stored by; one given
 * twice (in two spellings) is an error. */
static tl_status add_user_properties(create_plan *p, const tl_table_options *o, tl_error *err)
{
    for (const char *const *kv = o->properties; kv && kv[0]; kv += 2) {
        const char *key = NULL;
        TL_TRY(tl_contract_check_property(kv[0], kv[1], &key, err));
        if (has_property(p, key))
            return tl_error_set(err, TL_ERR_INVALID, "property \"%s\" is given twice", key);
        TL_TRY(add_property(p, key, kv[1], err));
    }
    return TL_OK;
}

static tl_status make_plan(const struct ArrowSchema *schema, const tl_table_options *o,
                           create_plan *p, tl_error *err)
{
    TL_TRY(check_options(o, err));
    if (schema == NULL || schema->release == NULL || strcmp(schema->format, "+s") != 0)
        return tl_error_set(err, TL_ERR_INVALID, "the schema must be an Arrow struct schema");
    TL_TRY(tl_ice_schema_from_arrow(schema, 1, &p->schema, err));
    TL_TRY(add_user_properties(p, o, err));
    if (o->time_column) TL_TRY(plan_time_series(p, schema, o, err));
    return plan_partition_by(p, o, err);
}

static tl_status table_exists(tl_store *store, const tl_qname *name, bool *out, tl_error *err)
{
    char prefix[sizeof name->key + 16];
    snprintf(prefix, sizeof prefix, "%s/metadata/", name->key);
    tl_strlist keys = {0};
    tl_status st = tl_store_list(store, prefix, &keys, err);
    *out = false;
    for (size_t i = 0; st == TL_OK && i < keys.len; i++)
        if (strstr(keys.items[i], ".metadata.json")) *out = true;
    tl_strlist_free(&keys);
    return st;
}

static tl_status write_v1(tl_lake *lake, const tl_qname *name, const tl_ice_metadata *md,
                          tl_error *err)
{
    tl_buf json = {0};
    char key[sizeof name->key + 64];
    tl_table_metadata_key(name, 1, key, sizeof key);
    tl_status st = tl_ice_metadata_serialize(md, &json, err);
    if (st == TL_OK) st = tl_store_put_if_absent(lake->store, key, json.data, json.len, err);
    if (st == TL_ERR_EXISTS) st = tl_table_exists_error(err, name);
    /* Outcome unknown (a lost answer): our bytes there (the table's UUID is
     * in them) say it landed; anything else leaves the error. */
    if (st != TL_OK && st != TL_ERR_EXISTS && st != TL_ERR_NOMEM) {
        tl_buf there = {0};
        if (tl_store_get(lake->store, key, &there, NULL) == TL_OK && there.len == json.len &&
            memcmp(there.data, json.data, json.len) == 0)
            st = TL_OK;
        tl_buf_free(&there);
    }
    tl_buf_free(&json);
    return st;
}

/* A created table that could not be opened is removed again: the create
 * fails and leaves nothing (a rollup would otherwise stay half made). */
static void unmake_v1(tl_lake *lake, const tl_qname *name)
{
    char key[sizeof name->key + 64];
    tl_table_metadata_key(name, 1, key, sizeof key);
    tl_store_remove(lake->store, key, NULL);
    snprintf(key, sizeof key, "%s/metadata/version-hint.text", name->key);
    tl_store_remove(lake->store, key, NULL);
}

tl_status tl_lake_create_table(tl_lake *lake, const char *name, const struct ArrowSchema *schema,
                               const tl_table_options *options, tl_table **out, tl_error *err)
{
    return tl_table_create_owned(lake, name, schema, options, NULL, out, err);
}

tl_status tl_table_create_owned(tl_lake *lake, const char *name, const struct ArrowSchema *schema,
                                const tl_table_options *options, const char *const *own,
                                tl_table **out, tl_error *err)
{
    tl_qname tn;
    TL_TRY(tl_qname_parse(name, "default", &tn, err));
    char what[sizeof tn.full + 16];
    snprintf(what, sizeof what, "create %s", tn.full);
    TL_TRY(tl_store_check_writable(lake->store, what, err));
    tl_table_options plain = {.dedup = -1, .ingest_time = -1};
    const tl_table_options *o = options ? options : &plain;
    create_plan plan = {0};
    tl_ice_metadata *md = NULL;
    char uuid[TL_UUID_STR_LEN + 1];
    tl_uuid_v7(uuid);
    char *location = tl_store_url_of(lake->store, tn.key);
    bool exists = false;
    tl_status st = location ? make_plan(schema, o, &plan, err) : tl_error_nomem(err);
    for (; st == TL_OK && own && own[0]; own += 2) st = add_property(&plan, own[0], own[1], err);
    if (st == TL_OK) st = table_exists(lake->store, &tn, &exists, err);
    if (st == TL_OK && exists) st = tl_table_exists_error(err, &tn);
    if (st == TL_OK)
        st = tl_ice_metadata_new(
            uuid, location, &plan.schema, plan.spec.n_fields ? &plan.spec : NULL,
            o->time_column ? &plan.order : NULL, (const char *const *)plan.properties.items,
            tl_now_millis(), &md, err);
    if (st == TL_OK) st = write_v1(lake, &tn, md, err);
    if (st == TL_OK) {
        char hint_key[sizeof tn.key + 64];
        snprintf(hint_key, sizeof hint_key, "%s/metadata/version-hint.text", tn.key);
        /* The hint and the registry are conveniences: a failure leaves a valid table. */
        tl_store_put_hint(lake->store, hint_key, "1", 1, NULL);
        st = tl_table_load(lake, &tn, 1, out, err);
        if (st == TL_OK)
            tl_registry_add(lake->store, tn.full, NULL);
        else
            unmake_v1(lake, &tn);
    }
    tl_ice_metadata_free(md);
    plan_free(&plan);
    free(location);
    return st;
}
