/* Writes a parsed schema back to JSON with the structural keys first and the
 * preserved attributes after them, the order the Java and Rust writers use. */
#include <stdlib.h>
#include <string.h>

#include "core/json_text.h"
#include "formats/avro/avro_schema.h"

/* A namespace as a prefix of some full name: the names inside a named type
 * resolve in its namespace. */
typedef struct tl_avro_ns {
    const char *name;
    size_t len;
} tl_avro_ns;

typedef struct tl_avro_printer {
    bool *printed; /* by named_index: written in full already */
    bool nomem;
} tl_avro_printer;

static json_t *tl_avro_print_type(tl_avro_printer *pr, const tl_avro_type *t, tl_avro_ns ns);

/* json_object_set_new that remembers allocation failures. */
static void tl_avro_put(tl_avro_printer *pr, json_t *obj, const char *key, json_t *value)
{
    if (value == NULL || obj == NULL) {
        json_decref(value);
        pr->nomem = true;
    } else if (json_object_set_new(obj, key, value) != 0) {
        pr->nomem = true; /* set_new released value */
    }
}

static void tl_avro_put_attrs(tl_avro_printer *pr, json_t *obj, const json_t *attrs)
{
    const char *key;
    json_t *value;
    if (attrs == NULL || obj == NULL) return;
    json_object_foreach((json_t *)attrs, key, value)
    {
        if (json_object_set(obj, key, value) != 0) pr->nomem = true;
    }
}

/* Whether t was written in full before; marks it written. */
static bool tl_avro_seen(tl_avro_printer *pr, const tl_avro_type *t)
{
    bool seen = pr->printed[t->named_index];
    pr->printed[t->named_index] = true;
    return seen;
}

static tl_avro_ns tl_avro_ns_of(const tl_avro_type *t)
{
    const char *dot = strrchr(t->fullname, '.');
    tl_avro_ns ns = {t->fullname, dot ? (size_t)(dot - t->fullname) : 0};
    return ns;
}

/* A reference by the short name where that resolves to the same type. */
static json_t *tl_avro_print_ref(const tl_avro_type *t, tl_avro_ns ns)
{
    tl_avro_ns own = tl_avro_ns_of(t);
    if (own.len > 0 && own.len == ns.len && memcmp(own.name, ns.name, ns.len) == 0)
        return json_string(t->fullname + own.len + 1);
    return json_string(t->fullname);
}

static json_t *tl_avro_print_fields(tl_avro_printer *pr, const tl_avro_type *t)
{
    json_t *fields = json_array();
    for (size_t i = 0; fields && i < t->n_fields; i++) {
        const tl_avro_field *f = &t->fields[i];
        json_t *fj = json_object();
        tl_avro_put(pr, fj, "name", json_string(f->name));
        tl_avro_put(pr, fj, "type", tl_avro_print_type(pr, f->type, tl_avro_ns_of(t)));
        if (f->default_value) tl_avro_put(pr, fj, "default", json_incref(f->default_value));
        tl_avro_put_attrs(pr, fj, f->attrs);
        if (fj == NULL || json_array_append_new(fields, fj) != 0) pr->nomem = true;
    }
    return fields;
}

static json_t *tl_avro_print_named(tl_avro_printer *pr, const tl_avro_type *t, tl_avro_ns ns)
{
    if (tl_avro_seen(pr, t)) return tl_avro_print_ref(t, ns);
    json_t *o = json_object();
    tl_avro_put(pr, o, "type", json_string(tl_avro_kind_name(t->kind)));
    tl_avro_put(pr, o, "name", json_string(t->name));
    if (t->namespace_) tl_avro_put(pr, o, "namespace", json_string(t->namespace_));
    if (t->kind == TL_AVRO_RECORD) {
        tl_avro_put(pr, o, "fields", tl_avro_print_fields(pr, t));
    } else if (t->kind == TL_AVRO_ENUM) {
        json_t *symbols = json_array();
        for (size_t i = 0; symbols && i < t->n_symbols; i++)
            if (json_array_append_new(symbols, json_string(t->symbols[i])) != 0) pr->nomem = true;
        tl_avro_put(pr, o, "symbols", symbols);
    } else {
        tl_avro_put(pr, o, "size", json_integer((json_int_t)t->fixed_size));
    }
    tl_avro_put_attrs(pr, o, t->attrs);
    return o;
}

static json_t *tl_avro_print_type(tl_avro_printer *pr, const tl_avro_type *t, tl_avro_ns ns)
{
    switch (t->kind) {
    case TL_AVRO_RECORD:
    case TL_AVRO_ENUM:
    case TL_AVRO_FIXED:
        return tl_avro_print_named(pr, t, ns);
    case TL_AVRO_UNION: {
        json_t *a = json_array();
        for (size_t i = 0; a && i < t->n_branches; i++)
            if (json_array_append_new(a, tl_avro_print_type(pr, t->branches[i], ns)) != 0)
                pr->nomem = true;
        return a;
    }
    case TL_AVRO_ARRAY:
    case TL_AVRO_MAP: {
        json_t *o = json_object();
        tl_avro_put(pr, o, "type", json_string(tl_avro_kind_name(t->kind)));
        tl_avro_put(pr, o, t->kind == TL_AVRO_ARRAY ? "items" : "values",
                    tl_avro_print_type(pr, t->items, ns));
        tl_avro_put_attrs(pr, o, t->attrs);
        return o;
    }
    default:
        if (t->attrs == NULL) return json_string(tl_avro_kind_name(t->kind));
        json_t *o = json_object();
        tl_avro_put(pr, o, "type", json_string(tl_avro_kind_name(t->kind)));
        tl_avro_put_attrs(pr, o, t->attrs);
        return o;
    }
}

tl_status tl_avro_schema_print(const tl_avro_schema *schema, tl_buf *out, tl_error *err)
{
    tl_avro_printer pr = {calloc(schema->n_named + 1, sizeof(bool)), false};
    if (pr.printed == NULL) return tl_error_nomem(err);
    tl_avro_ns top = {"", 0};
    json_t *j = tl_avro_print_type(&pr, schema->root, top);
    free(pr.printed);
    int rc = j && !pr.nomem
                 ? tl_json_dump_buf(j, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER, out)
                 : -1;
    json_decref(j);
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}
