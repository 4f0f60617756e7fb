#include "table/partition.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strlist.h"

tl_status tl_part_fields_load(const tl_ice_metadata *md, tl_part_field **out, size_t *n,
                              tl_error *err)
{
    *out = NULL;
    *n = 0;
    const tl_ice_partition_spec *spec = tl_ice_metadata_default_spec(md);
    const tl_ice_schema *schema = tl_ice_metadata_current_schema(md);
    if (spec == NULL || spec->n_fields == 0 || schema == NULL) return TL_OK;
    tl_part_field *f = calloc(spec->n_fields, sizeof *f);
    if (f == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < spec->n_fields; i++) {
        const tl_ice_partition_field *pf = &spec->fields[i];
        f[i].name = pf->name;
        f[i].column = -1;
        for (size_t c = 0; c < schema->n_fields; c++)
            if (schema->fields[c].id == pf->source_id) f[i].column = (int)c;
        f[i].source = f[i].column >= 0 ? &schema->fields[f[i].column].type : NULL;
        f[i].writable = tl_ice_transform_parse(pf->transform, &f[i].transform, NULL) == TL_OK &&
                        f[i].source &&
                        tl_ice_transform_check(f[i].transform, f[i].source, NULL) == TL_OK;
    }
    *out = f;
    *n = spec->n_fields;
    return TL_OK;
}

static bool identity_type(tl_ice_type_id id)
{
    return id == TL_ICE_STRING || id == TL_ICE_INT || id == TL_ICE_LONG || id == TL_ICE_BOOLEAN ||
           id == TL_ICE_DATE;
}

static bool temporal_type(tl_ice_type_id id)
{
    return id == TL_ICE_DATE || id == TL_ICE_TIMESTAMP || id == TL_ICE_TIMESTAMPTZ;
}

tl_status tl_part_by_parse(const char *entry, const tl_ice_schema *schema, char **column,
                           tl_ice_transform *out, tl_error *err)
{
    *column = NULL;
    if (entry == NULL || entry[0] == '\0')
        return tl_error_set(err, TL_ERR_INVALID, "partition_by: an entry is empty");
    const char *open = strchr(entry, '(');
    size_t n = strlen(entry);
    *out = (tl_ice_transform){TL_ICE_TRANSFORM_IDENTITY, 0};
    if (open) {
        char name[16];
        size_t len = (size_t)(open - entry);
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : 0), entry);
        if (entry[n - 1] != ')' ||
            (strcmp(name, "day") && strcmp(name, "month") && strcmp(name, "year")))
            return tl_error_set(err, TL_ERR_INVALID,
                                "partition_by \"%s\": use a column name, or day(column), "
                                "month(column) or year(column)",
                                entry);
        tl_ice_transform_parse(name, out, NULL);
        *column = strndup(open + 1, n - len - 2);
    } else {
        *column = strdup(entry);
    }
    if (*column == NULL) return tl_error_nomem(err);
    const tl_ice_field *f = NULL;
    for (size_t i = 0; i < schema->n_fields; i++)
        if (strcmp(schema->fields[i].name, *column) == 0) f = &schema->fields[i];
    char type[TL_ICE_TYPE_STR_MAX] = "";
    if (f) tl_ice_type_format(&f->type, type, sizeof type);
    tl_status st = TL_OK;
    if (f == NULL)
        st = tl_error_set(err, TL_ERR_INVALID,
                          "partition_by \"%s\": no column \"%s\" in the schema", entry, *column);
    else if (out->kind == TL_ICE_TRANSFORM_IDENTITY && !identity_type(f->type.id))
        st = tl_error_set(err, TL_ERR_INVALID,
                          "partition_by \"%s\": a %s column cannot be a partition; use a string, "
                          "integer, boolean or date column, or day/month/year of a date or "
                          "timestamp",
                          entry, type);
    else if (out->kind != TL_ICE_TRANSFORM_IDENTITY && !temporal_type(f->type.id))
        st = tl_error_set(err, TL_ERR_INVALID,
                          "partition_by \"%s\": day, month and year take a date or timestamp "
                          "column, not %s",
                          entry, type);
    if (st != TL_OK) {
        free(*column);
        *column = NULL;
    }
    return st;
}

char *tl_part_by_format(const tl_part_field *f, const tl_ice_schema *schema)
{
    const char *column = f->column >= 0 ? schema->fields[f->column].name : f->name;
    if (f->transform.kind == TL_ICE_TRANSFORM_IDENTITY) return strdup(column);
    char t[TL_ICE_TRANSFORM_STR_MAX];
    tl_ice_transform_format(f->transform, t, sizeof t);
    return tl_strdup_printf("%s(%s)", t, column);
}

tl_status tl_part_by_check_series(const char *time_column, const char *const *series_key,
                                  size_t series_key_len, bool dedup, const char *entry,
                                  const char *column, tl_ice_transform tr, tl_error *err)
{
    if (time_column == NULL) return TL_OK;
    if (strcmp(column, time_column) == 0)
        return tl_error_set(err, TL_ERR_INVALID,
                            "partition_by \"%s\": the time column is partitioned by the chunk "
                            "interval already",
                            entry);
    if (!dedup) return TL_OK;
    bool key = false;
    for (size_t i = 0; i < series_key_len; i++)
        key = key || (series_key[i] && strcmp(series_key[i], column) == 0);
    if (key && tr.kind == TL_ICE_TRANSFORM_IDENTITY) return TL_OK;
    return tl_error_set(err, TL_ERR_INVALID,
                        "partition_by \"%s\": a table with dedup partitions only by series-key "
                        "columns (as they are), so that each series stays in one partition",
                        entry);
}
