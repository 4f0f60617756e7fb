#include "iceberg/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const tl_ice_type_names[] = {
    [TL_ICE_BOOLEAN] = "boolean",
    [TL_ICE_INT] = "int",
    [TL_ICE_LONG] = "long",
    [TL_ICE_FLOAT] = "float",
    [TL_ICE_DOUBLE] = "double",
    [TL_ICE_DECIMAL] = "decimal",
    [TL_ICE_DATE] = "date",
    [TL_ICE_TIME] = "time",
    [TL_ICE_TIMESTAMP] = "timestamp",
    [TL_ICE_TIMESTAMPTZ] = "timestamptz",
    [TL_ICE_TIMESTAMP_NS] = "timestamp_ns",
    [TL_ICE_TIMESTAMPTZ_NS] = "timestamptz_ns",
    [TL_ICE_STRING] = "string",
    [TL_ICE_UUID] = "uuid",
    [TL_ICE_FIXED] = "fixed",
    [TL_ICE_BINARY] = "binary",
    [TL_ICE_STRUCT] = "struct",
    [TL_ICE_LIST] = "list",
    [TL_ICE_MAP] = "map",
};

#define TL_ICE_N_TYPES (sizeof tl_ice_type_names / sizeof tl_ice_type_names[0])

static const char *skip_spaces(const char *p)
{
    while (*p == ' ') p++;
    return p;
}

/* Reads 1..9 decimal digits (so the value fits an int32 without overflow checks). */
static const char *read_small_uint(const char *p, int32_t *out)
{
    int32_t v = 0;
    int n = 0;
    for (; *p >= '0' && *p <= '9'; p++, n++) {
        if (n == 9) return NULL;
        v = v * 10 + (*p - '0');
    }
    if (n == 0) return NULL;
    *out = v;
    return p;
}

static tl_status parse_decimal(const char *s, tl_ice_type *out, tl_error *err)
{
    /* s points past "decimal(" */
    int32_t p = 0, sc = 0;
    const char *q = read_small_uint(skip_spaces(s), &p);
    if (q) q = skip_spaces(q);
    if (q && *q == ',')
        q = read_small_uint(skip_spaces(q + 1), &sc);
    else
        q = NULL;
    if (q) q = skip_spaces(q);
    if (q == NULL || q[0] != ')' || q[1] != '\0')
        return tl_error_set(err, TL_ERR_INVALID, "malformed decimal type \"decimal(%s\"", s);
    if (p < 1 || p > 38 || sc > p)
        return tl_error_set(err, TL_ERR_INVALID,
                            "decimal(%d, %d): precision must be 1..38 and scale 0..precision",
                            (int)p, (int)sc);
    out->id = TL_ICE_DECIMAL;
    out->precision = p;
    out->scale = sc;
    return TL_OK;
}

static tl_status parse_fixed(const char *s, tl_ice_type *out, tl_error *err)
{
    /* s points past "fixed[" */
    int32_t len = 0;
    const char *q = read_small_uint(s, &len);
    if (q == NULL || q[0] != ']' || q[1] != '\0' || len < 1)
        return tl_error_set(err, TL_ERR_INVALID, "malformed fixed type \"fixed[%s\"", s);
    out->id = TL_ICE_FIXED;
    out->length = len;
    return TL_OK;
}

tl_status tl_ice_type_parse(const char *s, tl_ice_type *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (s == NULL) return tl_error_set(err, TL_ERR_INVALID, "missing type");
    if (strncmp(s, "decimal(", 8) == 0) return parse_decimal(s + 8, out, err);
    if (strncmp(s, "fixed[", 6) == 0) return parse_fixed(s + 6, out, err);
    for (size_t i = 0; i < TL_ICE_N_TYPES; i++) {
        if (i == TL_ICE_DECIMAL || i == TL_ICE_FIXED || TL_ICE_TYPE_IS_NESTED(i)) continue;
        if (strcmp(s, tl_ice_type_names[i]) == 0) {
            out->id = (tl_ice_type_id)i;
            return TL_OK;
        }
    }
    return tl_error_set(err, TL_ERR_INVALID, "unsupported Iceberg type \"%.64s\"", s);
}

void tl_ice_type_format(const tl_ice_type *t, char *buf, size_t size)
{
    if (t->id == TL_ICE_DECIMAL)
        snprintf(buf, size, "decimal(%d, %d)", (int)t->precision, (int)t->scale);
    else if (t->id == TL_ICE_FIXED)
        snprintf(buf, size, "fixed[%d]", (int)t->length);
    else if ((size_t)t->id < TL_ICE_N_TYPES)
        snprintf(buf, size, "%s", tl_ice_type_names[t->id]);
    else
        snprintf(buf, size, "?");
}

bool tl_ice_type_equal(const tl_ice_type *a, const tl_ice_type *b)
{
    if (a->id != b->id) return false;
    if (a->id == TL_ICE_DECIMAL) return a->precision == b->precision && a->scale == b->scale;
    if (a->id == TL_ICE_FIXED) return a->length == b->length;
    return true;
}

void tl_ice_field_free(tl_ice_field *f)
{
    for (size_t i = 0; i < f->n_children; i++) tl_ice_field_free(&f->children[i]);
    free(f->children);
    free(f->name);
    free(f->doc);
    memset(f, 0, sizeof *f);
}

void tl_ice_schema_free(tl_ice_schema *s)
{
    if (s == NULL) return;
    for (size_t i = 0; i < s->n_fields; i++) tl_ice_field_free(&s->fields[i]);
    free(s->fields);
    free(s->identifier_field_ids);
    memset(s, 0, sizeof *s);
}

bool tl_ice_field_copy(const tl_ice_field *src, tl_ice_field *dst)
{
    *dst = *src;
    dst->children = NULL;
    dst->n_children = 0;
    dst->name = strdup(src->name);
    dst->doc = src->doc ? strdup(src->doc) : NULL;
    if (dst->name == NULL || (src->doc && dst->doc == NULL)) return false;
    if (src->n_children == 0) return true;
    dst->children = calloc(src->n_children, sizeof *dst->children);
    if (dst->children == NULL) return false;
    for (; dst->n_children < src->n_children; dst->n_children++)
        if (!tl_ice_field_copy(&src->children[dst->n_children], &dst->children[dst->n_children])) {
            dst->n_children++; /* so the partial copy is freed */
            return false;
        }
    return true;
}

tl_status tl_ice_schema_copy(const tl_ice_schema *src, tl_ice_schema *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    out->schema_id = src->schema_id;
    if (src->n_fields) {
        out->fields = calloc(src->n_fields, sizeof *out->fields);
        if (out->fields == NULL) goto nomem;
    }
    for (; out->n_fields < src->n_fields; out->n_fields++)
        if (!tl_ice_field_copy(&src->fields[out->n_fields], &out->fields[out->n_fields])) {
            out->n_fields++; /* so the partial copy is freed */
            goto nomem;
        }
    if (src->n_identifier_field_ids) {
        size_t bytes = src->n_identifier_field_ids * sizeof(int32_t);
        out->identifier_field_ids = malloc(bytes);
        if (out->identifier_field_ids == NULL) goto nomem;
        memcpy(out->identifier_field_ids, src->identifier_field_ids, bytes);
        out->n_identifier_field_ids = src->n_identifier_field_ids;
    }
    return TL_OK;
nomem:
    tl_ice_schema_free(out);
    return tl_error_nomem(err);
}

static bool same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

bool tl_ice_field_equal(const tl_ice_field *a, const tl_ice_field *b)
{
    if (a->id != b->id || a->required != b->required || !same_str(a->name, b->name) ||
        !same_str(a->doc, b->doc) || !tl_ice_type_equal(&a->type, &b->type) ||
        a->n_children != b->n_children)
        return false;
    for (size_t i = 0; i < a->n_children; i++)
        if (!tl_ice_field_equal(&a->children[i], &b->children[i])) return false;
    return true;
}

bool tl_ice_schema_same_fields(const tl_ice_schema *a, const tl_ice_schema *b)
{
    if (a->n_fields != b->n_fields || a->n_identifier_field_ids != b->n_identifier_field_ids)
        return false;
    for (size_t i = 0; i < a->n_fields; i++)
        if (!tl_ice_field_equal(&a->fields[i], &b->fields[i])) return false;
    for (size_t i = 0; i < a->n_identifier_field_ids; i++)
        if (a->identifier_field_ids[i] != b->identifier_field_ids[i]) return false;
    return true;
}

const tl_ice_field *tl_ice_schema_find(const tl_ice_schema *s, const char *name)
{
    for (size_t i = 0; i < s->n_fields; i++)
        if (strcmp(s->fields[i].name, name) == 0) return &s->fields[i];
    return NULL;
}

const tl_ice_field *tl_ice_schema_field_by_id(const tl_ice_schema *s, int32_t id)
{
    for (size_t i = 0; i < s->n_fields; i++)
        if (s->fields[i].id == id) return &s->fields[i];
    return NULL;
}

static int32_t max_id(const tl_ice_field *fields, size_t n)
{
    int32_t max = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t below = max_id(fields[i].children, fields[i].n_children);
        if (fields[i].id > max) max = fields[i].id;
        if (below > max) max = below;
    }
    return max;
}

int32_t tl_ice_schema_max_field_id(const tl_ice_schema *s)
{
    return max_id(s->fields, s->n_fields);
}

const tl_ice_field *tl_ice_schema_first_nested(const tl_ice_schema *s)
{
    for (size_t i = 0; i < s->n_fields; i++)
        if (TL_ICE_TYPE_IS_NESTED(s->fields[i].type.id)) return &s->fields[i];
    return NULL;
}

static bool has_id(const tl_ice_field *fields, size_t n, int32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (fields[i].id == id || has_id(fields[i].children, fields[i].n_children, id)) return true;
    return false;
}

bool tl_ice_schema_has_id(const tl_ice_schema *s, int32_t id)
{
    return has_id(s->fields, s->n_fields, id);
}
