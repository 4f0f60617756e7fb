#include "query/projection.h"

#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "query/engine.h"
#include "query/scan.h"

bool tl_projection_needed(const tl_table *t)
{
    return t->md->n_schemas > 1;
}

/* One entry of the map: `id: {name: 'n', type: 'T', default_value: NULL}`. */
static tl_status map_entry(const tl_ice_field *f, bool first, tl_buf *sql, tl_error *err)
{
    char buf[TL_SCAN_DUCK_TYPE_MAX];
    char *name = tl_sql_literal(f->name);
    char *type = tl_sql_literal(tl_scan_duck_type(f, buf, sizeof buf));
    bool ok = name && type &&
              tl_buf_printf(sql, "%s%d: {name: %s, type: %s, default_value: NULL}",
                            first ? "" : ", ", (int)f->id, name, type) == 0;
    free(name);
    free(type);
    return ok ? TL_OK : tl_error_nomem(err);
}

tl_status tl_projection_option(const tl_table *t, tl_buf *sql, tl_error *err)
{
    if (!tl_projection_needed(t)) return TL_OK;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    if (tl_buf_append_str(sql, ", schema = MAP {") != 0) return tl_error_nomem(err);
    for (size_t i = 0; i < s->n_fields; i++) TL_TRY(map_entry(&s->fields[i], i == 0, sql, err));
    return tl_buf_append_byte(sql, '}') == 0 ? TL_OK : tl_error_nomem(err);
}

static bool field_fits(const tl_ice_field *f, const struct ArrowSchema *a, bool named);

/* A nested field's children: a struct's fields by name, a list's element,
 * a map's key and value (inside its entries struct). */
static bool children_fit(const tl_ice_field *f, const struct ArrowSchema *a)
{
    if (f->type.id == TL_ICE_MAP) {
        if (a->n_children != 1 || a->children[0]->n_children != 2 || f->n_children != 2)
            return false;
        a = a->children[0];
    }
    if ((size_t)a->n_children != f->n_children) return false;
    for (size_t i = 0; i < f->n_children; i++)
        if (!field_fits(&f->children[i], a->children[i], f->type.id == TL_ICE_STRUCT)) return false;
    return true;
}

static bool field_fits(const tl_ice_field *f, const struct ArrowSchema *a, bool named)
{
    int32_t id;
    tl_ice_type type;
    if (tl_schema_field_id(a, &id) && id != f->id) return false;
    if (named && (a->name == NULL || strcmp(a->name, f->name) != 0)) return false;
    if (tl_ice_type_from_arrow(a, &type, NULL) != TL_OK) return false;
    if (TL_ICE_TYPE_IS_NESTED(f->type.id)) return type.id == f->type.id && children_fit(f, a);
    return tl_ice_type_equal(&type, &f->type);
}

bool tl_projection_fits(const tl_table *t, const struct ArrowSchema *file)
{
    if (!tl_projection_needed(t)) return true;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    if ((size_t)file->n_children != s->n_fields) return false;
    for (size_t i = 0; i < s->n_fields; i++)
        if (!field_fits(&s->fields[i], file->children[i], true)) return false;
    return true;
}
