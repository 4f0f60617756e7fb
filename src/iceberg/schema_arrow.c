/* Arrow <-> Iceberg schema mapping, following the reference implementation. */
#include "iceberg/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"

static tl_status dictionary_type(const struct ArrowSchema *dict, tl_ice_type *out, tl_error *err)
{
    tl_arrow_type vt;
    TL_TRY(tl_arrow_type_parse(dict->format, &vt, err));
    if (vt.id == TL_ATYPE_STRING || vt.id == TL_ATYPE_LARGE_STRING) {
        out->id = TL_ICE_STRING;
        return TL_OK;
    }
    if (vt.id == TL_ATYPE_BINARY || vt.id == TL_ATYPE_LARGE_BINARY) {
        out->id = TL_ICE_BINARY;
        return TL_OK;
    }
    char name[96];
    tl_arrow_type_describe(&vt, name, sizeof name);
    return tl_error_set(err, TL_ERR_INVALID, "dictionary-encoded %s columns are not supported",
                        name);
}

static tl_status plain_type(const tl_arrow_type *at, tl_ice_type *out, tl_error *err)
{
    switch (at->id) {
    case TL_ATYPE_BOOL:
        out->id = TL_ICE_BOOLEAN;
        return TL_OK;
    case TL_ATYPE_INT8:
    case TL_ATYPE_INT16:
    case TL_ATYPE_INT32:
    case TL_ATYPE_UINT8:
    case TL_ATYPE_UINT16:
        out->id = TL_ICE_INT;
        return TL_OK;
    case TL_ATYPE_UINT32:
    case TL_ATYPE_INT64:
        out->id = TL_ICE_LONG;
        return TL_OK;
    case TL_ATYPE_UINT64:
        return tl_error_set(err, TL_ERR_INVALID,
                            "UInt64 columns are not supported by Iceberg; cast to Int64");
    case TL_ATYPE_FLOAT32:
        out->id = TL_ICE_FLOAT;
        return TL_OK;
    case TL_ATYPE_FLOAT64:
        out->id = TL_ICE_DOUBLE;
        return TL_OK;
    case TL_ATYPE_STRING:
    case TL_ATYPE_LARGE_STRING:
    case TL_ATYPE_STRING_VIEW:
        out->id = TL_ICE_STRING;
        return TL_OK;
    case TL_ATYPE_BINARY:
    case TL_ATYPE_LARGE_BINARY:
    case TL_ATYPE_BINARY_VIEW:
        out->id = TL_ICE_BINARY;
        return TL_OK;
    case TL_ATYPE_FIXED_BINARY:
        out->id = TL_ICE_FIXED;
        out->length = at->byte_width;
        return TL_OK;
    case TL_ATYPE_DECIMAL128:
        out->id = TL_ICE_DECIMAL;
        out->precision = at->precision;
        out->scale = at->scale;
        return TL_OK;
    case TL_ATYPE_DATE32:
        out->id = TL_ICE_DATE;
        return TL_OK;
    case TL_ATYPE_TIME32:
    case TL_ATYPE_TIME64:
        out->id = TL_ICE_TIME;
        return TL_OK;
    case TL_ATYPE_TIMESTAMP:
        /* Any unit is stored as microseconds; any zone means an instant. */
        out->id = at->has_tz ? TL_ICE_TIMESTAMPTZ : TL_ICE_TIMESTAMP;
        return TL_OK;
    default:
        break;
    }
    char name[96];
    tl_arrow_type_describe(at, name, sizeof name);
    return tl_error_set(err, TL_ERR_INVALID, "Arrow type %s is not supported by Iceberg", name);
}

tl_status tl_ice_type_from_arrow(const struct ArrowSchema *field, tl_ice_type *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (field->format == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "missing Arrow format string");
    if (field->dictionary != NULL) return dictionary_type(field->dictionary, out, err);
    if (field->format[0] == '+') {
        if (strcmp(field->format, "+s") == 0)
            out->id = TL_ICE_STRUCT;
        else if (strcmp(field->format, "+m") == 0)
            out->id = TL_ICE_MAP;
        else if (strcmp(field->format, "+l") == 0 || strcmp(field->format, "+L") == 0 ||
                 strncmp(field->format, "+w:", 3) == 0)
            out->id = TL_ICE_LIST;
        else
            return tl_error_set(err, TL_ERR_INVALID,
                                "Arrow type \"%.32s\" is not supported by Iceberg (lists, "
                                "structs and maps are)",
                                field->format);
        return TL_OK;
    }
    tl_arrow_type at;
    TL_TRY(tl_arrow_type_parse(field->format, &at, err));
    return plain_type(&at, out, err);
}

void tl_ice_type_arrow_format(const tl_ice_type *t, char *buf, size_t size)
{
    static const char *const formats[] = {
        [TL_ICE_BOOLEAN] = "b",
        [TL_ICE_INT] = "i",
        [TL_ICE_LONG] = "l",
        [TL_ICE_FLOAT] = "f",
        [TL_ICE_DOUBLE] = "g",
        [TL_ICE_DATE] = "tdD",
        [TL_ICE_TIME] = "ttu",
        [TL_ICE_TIMESTAMP] = "tsu:",
        [TL_ICE_TIMESTAMPTZ] = "tsu:+00:00",
        [TL_ICE_TIMESTAMP_NS] = "tsn:",
        [TL_ICE_TIMESTAMPTZ_NS] = "tsn:+00:00",
        [TL_ICE_STRING] = "u",
        [TL_ICE_UUID] = "w:16",
        [TL_ICE_BINARY] = "Z",
        [TL_ICE_STRUCT] = "+s",
        [TL_ICE_LIST] = "+l",
        [TL_ICE_MAP] = "+m",
    };
    if (t->id == TL_ICE_DECIMAL)
        snprintf(buf, size, "d:%d,%d", (int)t->precision, (int)t->scale);
    else if (t->id == TL_ICE_FIXED)
        snprintf(buf, size, "w:%d", (int)t->length);
    else if ((size_t)t->id < sizeof formats / sizeof formats[0] && formats[t->id])
        snprintf(buf, size, "%s", formats[t->id]);
    else
        snprintf(buf, size, "n");
}

static tl_status check_names(const struct ArrowSchema *schema, int64_t i, tl_error *err)
{
    const char *name = schema->children[i]->name;
    if (name == NULL || name[0] == '\0')
        return tl_error_set(err, TL_ERR_INVALID, "column %lld has no name", (long long)i);
    for (int64_t j = 0; j < i; j++)
        if (strcmp(schema->children[j]->name, name) == 0)
            return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": duplicate column name", name);
    return TL_OK;
}

static tl_status field_from_arrow(const struct ArrowSchema *child, int32_t id, int depth,
                                  tl_ice_field *out, tl_error *err);

/* The Arrow children of a nested field, as its Iceberg children: a map's one
 * "entries" struct stands for its key and value. */
static tl_status nested_children(const struct ArrowSchema *a, tl_ice_type_id id,
                                 const struct ArrowSchema *const **kids, int64_t *n, tl_error *err)
{
    *kids = (const struct ArrowSchema *const *)a->children;
    *n = a->n_children;
    if (id == TL_ICE_MAP) {
        if (*n != 1 || a->children[0] == NULL || a->children[0]->n_children != 2)
            return tl_error_set(err, TL_ERR_INVALID,
                                "a map must have one entries struct of key "
                                "and value");
        *kids = (const struct ArrowSchema *const *)a->children[0]->children;
        *n = 2;
    } else if (id == TL_ICE_LIST && *n != 1) {
        return tl_error_set(err, TL_ERR_INVALID, "a list must have one child");
    }
    if (*n > 0 && *kids == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "the Arrow schema has a bad child list");
    for (int64_t i = 0; i < *n; i++)
        if ((*kids)[i] == NULL || (*kids)[i]->format == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "child %lld is missing", (long long)i);
    return TL_OK;
}

static tl_status nested_from_arrow(const struct ArrowSchema *a, int depth, tl_ice_field *out,
                                   tl_error *err)
{
    if (depth > 64) return tl_error_set(err, TL_ERR_INVALID, "types nested more than 64 deep");
    const struct ArrowSchema *const *kids;
    int64_t n;
    TL_TRY(nested_children(a, out->type.id, &kids, &n, err));
    out->children = calloc(n ? (size_t)n : 1, sizeof *out->children);
    if (out->children == NULL) return tl_error_nomem(err);
    static const char *const list_names[] = {"element"}, *const map_names[] = {"key", "value"};
    for (int64_t i = 0; i < n; i++) {
        out->n_children++;
        tl_ice_field *c = &out->children[i];
        TL_TRY(field_from_arrow(kids[i], 0, depth + 1, c, err));
        const char *fixed = out->type.id == TL_ICE_LIST  ? list_names[0]
                            : out->type.id == TL_ICE_MAP ? map_names[i]
                                                         : NULL;
        if (fixed) {
            free(c->name);
            c->name = strdup(fixed);
            if (c->name == NULL) return tl_error_nomem(err);
        } else if (c->name[0] == '\0') {
            return tl_error_set(err, TL_ERR_INVALID, "struct field %lld has no name", (long long)i);
        }
        for (int64_t k = 0; fixed == NULL && k < i; k++)
            if (strcmp(out->children[k].name, c->name) == 0)
                return tl_error_set(err, TL_ERR_INVALID, "struct field \"%.64s\" is repeated",
                                    c->name);
    }
    if (out->type.id == TL_ICE_MAP) out->children[0].required = true;
    return TL_OK;
}

static tl_status field_from_arrow(const struct ArrowSchema *child, int32_t id, int depth,
                                  tl_ice_field *out, tl_error *err)
{
    out->id = id;
    out->required = (child->flags & ARROW_FLAG_NULLABLE) == 0;
    out->name = strdup(child->name ? child->name : "");
    if (out->name == NULL) return tl_error_nomem(err);
    TL_TRY(tl_ice_type_from_arrow(child, &out->type, err));
    return TL_ICE_TYPE_IS_NESTED(out->type.id) ? nested_from_arrow(child, depth, out, err) : TL_OK;
}

/* Fresh ids as Iceberg assigns them: a nested field's children first, then
 * each child's own children. Fails when they pass INT32_MAX. */
static bool assign_ids(tl_ice_field *f, int32_t *next)
{
    for (size_t i = 0; i < f->n_children; i++) {
        if (*next == INT32_MAX) return false;
        f->children[i].id = (*next)++;
    }
    for (size_t i = 0; i < f->n_children; i++)
        if (!assign_ids(&f->children[i], next)) return false;
    return true;
}

static tl_status top_field_from_arrow(const struct ArrowSchema *child, int32_t id,
                                      tl_ice_field *out, tl_error *err)
{
    tl_status st = field_from_arrow(child, id, 0, out, err);
    if (st != TL_OK) tl_error_prefix(err, "column \"%s\"", child->name);
    return st;
}

static tl_status check_struct(const struct ArrowSchema *schema, int32_t first_id, tl_error *err)
{
    if (schema == NULL || schema->format == NULL || strcmp(schema->format, "+s") != 0)
        return tl_error_set(err, TL_ERR_INVALID, "a table schema must be an Arrow struct (\"+s\")");
    if (schema->n_children < 0 || (schema->n_children > 0 && schema->children == NULL))
        return tl_error_set(err, TL_ERR_INVALID, "the Arrow schema has a bad child list");
    if (first_id < 1 || (int64_t)first_id - 1 + schema->n_children > INT32_MAX)
        return tl_error_set(err, TL_ERR_INVALID, "field ids from %d do not fit 32 bits",
                            (int)first_id);
    for (int64_t i = 0; i < schema->n_children; i++)
        if (schema->children[i] == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "column %lld is missing", (long long)i);
    return TL_OK;
}

tl_status tl_ice_schema_from_arrow(const struct ArrowSchema *schema, int32_t first_id,
                                   tl_ice_schema *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    TL_TRY(check_struct(schema, first_id, err));
    size_t n = (size_t)schema->n_children;
    if (n) {
        out->fields = calloc(n, sizeof *out->fields);
        if (out->fields == NULL) return tl_error_nomem(err);
    }
    tl_status st = TL_OK;
    for (size_t i = 0; st == TL_OK && i < n; i++) {
        st = check_names(schema, (int64_t)i, err);
        if (st == TL_OK) {
            out->n_fields++;
            st = top_field_from_arrow(schema->children[i], first_id + (int32_t)i, &out->fields[i],
                                      err);
        }
    }
    int32_t next = first_id + (int32_t)n;
    for (size_t i = 0; st == TL_OK && i < n; i++)
        if (!assign_ids(&out->fields[i], &next))
            st = tl_error_set(err, TL_ERR_INVALID, "field ids from %d do not fit 32 bits",
                              (int)first_id);
    if (st != TL_OK) tl_ice_schema_free(out);
    return st;
}

tl_status tl_ice_field_to_arrow(const tl_ice_field *f, struct ArrowSchema *out, tl_error *err)
{
    char format[TL_ICE_TYPE_STR_MAX];
    tl_ice_type_arrow_format(&f->type, format, sizeof format);
    bool map = f->type.id == TL_ICE_MAP;
    int64_t n = map ? 1 : (int64_t)f->n_children;
    TL_TRY(tl_schema_init(out, format, f->name, f->required ? 0 : ARROW_FLAG_NULLABLE, n, err));
    TL_TRY(tl_schema_set_field_id(out, f->id, err));
    struct ArrowSchema *parent = out;
    if (map) {
        parent = out->children[0];
        TL_TRY(tl_schema_init(parent, "+s", "entries", 0, (int64_t)f->n_children, err));
    }
    for (size_t i = 0; i < f->n_children; i++)
        TL_TRY(tl_ice_field_to_arrow(&f->children[i], parent->children[i], err));
    return TL_OK;
}

tl_status tl_ice_schema_to_arrow(const tl_ice_schema *s, struct ArrowSchema *out, tl_error *err)
{
    TL_TRY(tl_schema_init(out, "+s", "", 0, (int64_t)s->n_fields, err));
    for (size_t i = 0; i < s->n_fields; i++) {
        tl_status st = tl_ice_field_to_arrow(&s->fields[i], out->children[i], err);
        if (st != TL_OK) {
            tl_schema_release(out);
            return st;
        }
    }
    return TL_OK;
}
