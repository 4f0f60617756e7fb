/* Pruning files by their partition values (scan.h: tl_scan_partition_admits):
 * a restriction of a partition column keeps a file only when its partition
 * value can meet it. An identity partition holds the column's value itself;
 * day, month or year partitions hold a monotonic function of it, so the
 * restriction's values and bounds are transformed alike and compared. A null
 * partition value meets no restriction (a comparison with null is never true). */
#include <stdlib.h>
#include <string.h>

#include "arrow/parse.h"
#include "iceberg/partition_value.h"
#include "query/scan.h"

/* The restriction's text as a value of the partition field: the identity
 * value, or the transform of the date or timestamp moved by `nudge` days or
 * microseconds first (a strict bound: d < X is d <= X - 1). False when it
 * does not read as one (the restriction then prunes nothing). */
static bool field_value(const tl_part_field *f, const char *text, int nudge, tl_ice_value *out)
{
    memset(out, 0, sizeof *out);
    const tl_ice_type *type = f->source;
    size_t len = strlen(text);
    int64_t n;
    int32_t days;
    if (type->id == TL_ICE_STRING) {
        out->kind = TL_ICE_VALUE_STRING;
        out->bytes = (uint8_t *)text; /* borrowed: compared only */
        out->len = len;
        return f->transform.kind == TL_ICE_TRANSFORM_IDENTITY;
    }
    if (type->id == TL_ICE_BOOLEAN) {
        out->kind = TL_ICE_VALUE_BOOL;
        out->i = strcmp(text, "true") == 0;
        return strcmp(text, "true") == 0 || strcmp(text, "false") == 0;
    }
    if (type->id == TL_ICE_INT || type->id == TL_ICE_LONG) {
        out->kind = type->id == TL_ICE_INT ? TL_ICE_VALUE_INT : TL_ICE_VALUE_LONG;
        return tl_parse_int64(text, len, &out->i, NULL) == TL_OK;
    }
    out->kind = TL_ICE_VALUE_INT;
    if (type->id == TL_ICE_DATE) {
        if (tl_parse_date32(text, len, &days, NULL) != TL_OK) return false;
        out->i = tl_ice_transform_apply_date(f->transform, days + nudge);
        return true;
    }
    if (type->id == TL_ICE_TIMESTAMP || type->id == TL_ICE_TIMESTAMPTZ) {
        if (tl_parse_int64(text, len, &n, NULL) != TL_OK) return false;
        out->i = tl_ice_transform_apply(f->transform, n + nudge);
        return f->transform.kind != TL_ICE_TRANSFORM_IDENTITY;
    }
    return false;
}

/* Whether partition value v (of field f) can meet restriction c. */
static bool meets(const tl_part_field *f, const tl_ice_value *v, const tl_scan_column *c)
{
    bool null = v->kind == TL_ICE_VALUE_NULL;
    if (c->nulls) return null == (c->nulls > 0);
    if (null) return false;
    tl_ice_value x;
    if (c->values) {
        for (size_t i = 0; i < c->n_values; i++)
            if (!field_value(f, c->values[i], 0, &x) || tl_ice_value_compare(v, &x) == 0)
                return true;
        return false;
    }
    /* Strict: identity excludes the bound's own partition; a transform sees
     * the bound moved one step (dates and times only: a bound there is never
     * at the end of its type's range, which DuckDB refuses). */
    bool identity = f->transform.kind == TL_ICE_TRANSFORM_IDENTITY;
    int cmp;
    if (c->lo && field_value(f, c->lo, identity ? 0 : c->lo_strict, &x) &&
        ((cmp = tl_ice_value_compare(v, &x)) < 0 || (cmp == 0 && identity && c->lo_strict)))
        return false;
    if (c->hi && field_value(f, c->hi, identity ? 0 : -c->hi_strict, &x) &&
        ((cmp = tl_ice_value_compare(v, &x)) > 0 || (cmp == 0 && identity && c->hi_strict)))
        return false;
    return true;
}

bool tl_scan_partition_admits(const tl_table *t, const tl_ice_data_file *f,
                              const tl_scan_filter *filter)
{
    const tl_contract *k = &t->contract;
    if (filter->n_columns == 0 || f->n_partition != k->n_partition) return true;
    for (size_t i = 0; i < filter->n_columns; i++)
        for (size_t p = 0; p < k->n_partition; p++) {
            const tl_part_field *pf = &k->partition[p];
            if (pf->column != filter->columns[i].column || !pf->writable) continue;
            if (!meets(pf, &f->partition[p], &filter->columns[i])) return false;
        }
    return true;
}
