/* tl_table_replace_schema's evolution: new columns keep the field ids of
 * the columns they continue, new partition fields those of earlier specs,
 * and the handle carries the evolved metadata until its commit. */
#include "table/evolve.h"

#include <stdlib.h>
#include <string.h>

#include "table/append.h"
#include "table/metadata_cache.h"

/* Whether a field of the new schema continues `old` (keeps its id): the
 * same type or one of Iceberg's promotions (int to long, float to double);
 * a struct continues a struct whatever its fields; a list continues a list
 * whose element it continues; a map a map of the same (primitive) key type
 * whose value it continues. */
static bool continues(const tl_ice_field *old, const tl_ice_field *now)
{
    const tl_ice_type *a = &old->type, *b = &now->type;
    if (TL_ICE_TYPE_IS_NESTED(a->id) || TL_ICE_TYPE_IS_NESTED(b->id)) {
        if (a->id != b->id) return false;
        if (a->id == TL_ICE_STRUCT) return true;
        if (old->n_children != now->n_children || now->n_children != (a->id == TL_ICE_MAP ? 2 : 1))
            return false;
        if (a->id == TL_ICE_LIST) return continues(&old->children[0], &now->children[0]);
        return !TL_ICE_TYPE_IS_NESTED(old->children[0].type.id) &&
               tl_ice_type_equal(&old->children[0].type, &now->children[0].type) &&
               continues(&old->children[1], &now->children[1]);
    }
    return tl_ice_type_equal(a, b) || (a->id == TL_ICE_INT && b->id == TL_ICE_LONG) ||
           (a->id == TL_ICE_FLOAT && b->id == TL_ICE_DOUBLE);
}

/* The field of `old` (n_old of them) that now[i] may continue: a struct's
 * (or the schema's) by name, a list's element or a map's key and value by
 * position. */
static const tl_ice_field *counterpart(const tl_ice_field *now, size_t i, const tl_ice_field *old,
                                       size_t n_old, bool by_name)
{
    if (!by_name) return i < n_old ? &old[i] : NULL;
    for (size_t k = 0; k < n_old; k++)
        if (strcmp(old[k].name, now[i].name) == 0) return &old[k];
    return NULL;
}

/* Gives now[0..n) their ids: a field that continues its counterpart in
 * `old` keeps that id, any other gets the next free one, level by level as
 * Iceberg assigns fresh ids (a struct's fields, then each one's children).
 * `parent` is the path of the column they belong to when it continues (NULL
 * at the top and under a new column): a new required field there is
 * refused, as rows written before have no value for it. */
static tl_status assign_ids(tl_ice_field *now, size_t n, const tl_ice_field *old, size_t n_old,
                            bool by_name, const char *parent, int32_t *next, tl_error *err)
{
    const tl_ice_field **was = calloc(n + 1, sizeof *was);
    if (was == NULL) return tl_error_nomem(err);
    tl_status st = TL_OK;
    for (size_t i = 0; st == TL_OK && i < n; i++) {
        was[i] = counterpart(now, i, old, n_old, by_name);
        if (was[i] && !continues(was[i], &now[i])) was[i] = NULL;
        now[i].id = was[i] ? was[i]->id : ++*next;
        if (parent && !was[i] && now[i].required)
            st = tl_error_set(err, TL_ERR_INVALID,
                              "column \"%s.%s\" is new and required: rows written before this "
                              "change have no value for it (make it nullable)",
                              parent, now[i].name);
    }
    for (size_t i = 0; st == TL_OK && i < n; i++) {
        if (!TL_ICE_TYPE_IS_NESTED(now[i].type.id)) continue;
        char *path =
            was[i] ? parent ? tl_strdup_printf("%s.%s", parent, now[i].name) : strdup(now[i].name)
                   : NULL;
        if (was[i] && path == NULL) st = tl_error_nomem(err);
        if (st == TL_OK)
            st = assign_ids(now[i].children, now[i].n_children, was[i] ? was[i]->children : NULL,
                            was[i] ? was[i]->n_children : 0, now[i].type.id == TL_ICE_STRUCT, path,
                            next, err);
        free(path);
    }
    free(was);
    return st;
}

/* Appends a copy of f (the ingest-time column the table adds itself). */
static tl_status add_field(tl_ice_schema *s, const tl_ice_field *f, tl_error *err)
{
    tl_ice_field *fields = realloc(s->fields, (s->n_fields + 1) * sizeof *fields);
    if (fields == NULL) return tl_error_nomem(err);
    s->fields = fields;
    fields[s->n_fields] = *f;
    fields[s->n_fields].name = strdup(f->name);
    fields[s->n_fields].doc = f->doc ? strdup(f->doc) : NULL;
    s->n_fields++;
    if (fields[s->n_fields - 1].name == NULL || (f->doc && fields[s->n_fields - 1].doc == NULL))
        return tl_error_nomem(err);
    return TL_OK;
}

/* A column the contract names must continue as it was. */
static tl_status check_kept(const tl_ice_schema *old, const tl_ice_schema *now, const char *name,
                            const char *what, tl_error *err)
{
    const tl_ice_field *a = tl_ice_schema_find(old, name), *b = tl_ice_schema_find(now, name);
    if (a && b && a->id == b->id) return TL_OK;
    return tl_error_set(err, TL_ERR_INVALID,
                        "the new schema must keep the %s \"%s\" with its type: a time-series "
                        "table's time column and series key cannot change (create a new table)",
                        what, name);
}

/* The new schema: ev's columns with their ids, and the contract's columns. */
static tl_status plan_schema(const tl_ice_metadata *md, const tl_contract *c,
                             const tl_evolution *ev, tl_ice_schema *out, tl_error *err)
{
    const tl_ice_schema *old = tl_ice_metadata_current_schema(md);
    if (ev->schema == NULL || ev->schema->release == NULL || ev->schema->format == NULL ||
        strcmp(ev->schema->format, "+s") != 0)
        return tl_error_set(err, TL_ERR_INVALID, "the new schema must be an Arrow struct schema");
    TL_TRY(tl_ice_schema_from_arrow(ev->schema, 1, out, err));
    if (out->n_fields == 0)
        return tl_error_set(err, TL_ERR_INVALID, "the new schema has no columns");
    for (size_t i = 0; i < out->n_fields; i++)
        if (c->ingest_column && strcmp(out->fields[i].name, c->ingest_column) == 0)
            return tl_error_set(err, TL_ERR_INVALID,
                                "column \"%s\" is the table's ingest time, which it adds itself: "
                                "leave it out of the new schema",
                                out->fields[i].name);
    int32_t next = md->last_column_id;
    TL_TRY(
        assign_ids(out->fields, out->n_fields, old->fields, old->n_fields, true, NULL, &next, err));
    if (c->time_column) {
        TL_TRY(check_kept(old, out, c->time_column, "time column", err));
        ((tl_ice_field *)tl_ice_schema_find(out, c->time_column))->required = true;
    }
    for (size_t i = 0; i < c->series_key.len; i++)
        TL_TRY(check_kept(old, out, c->series_key.items[i], "series key column", err));
    if (c->ingest_column) TL_TRY(add_field(out, tl_ice_schema_find(old, c->ingest_column), err));
    /* Identifier fields that are still there stay identifiers. */
    out->identifier_field_ids = calloc(old->n_identifier_field_ids + 1, sizeof(int32_t));
    if (out->identifier_field_ids == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < old->n_identifier_field_ids; i++)
        if (tl_ice_schema_field_by_id(out, old->identifier_field_ids[i]))
            out->identifier_field_ids[out->n_identifier_field_ids++] = old->identifier_field_ids[i];
    return TL_OK;
}

typedef struct spec_plan {
    tl_ice_partition_spec spec;
    tl_ice_partition_field fields[TL_MAX_PARTITION_FIELDS];
    char transforms[TL_MAX_PARTITION_FIELDS][TL_ICE_TRANSFORM_STR_MAX];
    char *names[TL_MAX_PARTITION_FIELDS]; /* owned */
} spec_plan;

static void spec_plan_free(spec_plan *p)
{
    for (size_t i = 0; i < p->spec.n_fields; i++) free(p->names[i]);
}

/* Adds a field (name taken); its id is an earlier spec's for the same
 * field, else the next free one. */
static void add_spec_field(const tl_ice_metadata *md, spec_plan *p, int32_t *last,
                           int32_t source_id, tl_ice_transform tr, char *name)
{
    size_t i = p->spec.n_fields++;
    tl_ice_transform_format(tr, p->transforms[i], sizeof p->transforms[i]);
    p->names[i] = name;
    int32_t id = tl_ice_metadata_partition_field_id(md, source_id, p->transforms[i], name);
    for (size_t k = 0; id >= 0 && k < i; k++)
        if (p->fields[k].field_id == id) id = -1;
    p->fields[i] =
        (tl_ice_partition_field){source_id, id >= 0 ? id : ++*last, name, p->transforms[i]};
    p->spec.fields = p->fields;
}

static tl_status plan_spec(const tl_ice_metadata *md, const tl_contract *c, const tl_evolution *ev,
                           const tl_ice_schema *schema, spec_plan *p, tl_error *err)
{
    int32_t last = md->last_partition_id < 999 ? 999 : md->last_partition_id;
    if (ev->partition_by_len > TL_MAX_PARTITION_BY)
        return tl_error_set(err, TL_ERR_INVALID, "partition_by: at most %d entries, got %zu",
                            TL_MAX_PARTITION_BY, ev->partition_by_len);
    /* The time partition stays first, as it was. */
    const tl_ice_partition_spec *cur = tl_ice_metadata_default_spec(md);
    const tl_ice_field *time = c->time_column ? tl_ice_schema_find(schema, c->time_column) : NULL;
    for (size_t i = 0; time && cur && i < cur->n_fields; i++) {
        const tl_ice_partition_field *f = &cur->fields[i];
        tl_ice_transform tr;
        if (f->source_id != time->id || tl_ice_transform_parse(f->transform, &tr, NULL) != TL_OK)
            continue;
        char *name = strdup(f->name);
        if (name == NULL) return tl_error_nomem(err);
        add_spec_field(md, p, &last, f->source_id, tr, name);
        break;
    }
    for (size_t i = 0; i < ev->partition_by_len; i++) {
        const char *entry = ev->partition_by ? ev->partition_by[i] : NULL;
        char *column = NULL, *name = NULL;
        tl_ice_transform tr;
        TL_TRY(tl_part_by_parse(entry, schema, &column, &tr, err));
        tl_status st =
            tl_part_by_check_series(c->time_column, (const char *const *)c->series_key.items,
                                    c->series_key.len, c->dedup, entry, column, tr, err);
        if (st == TL_OK) st = tl_ice_partition_field_name(column, tr, &name, err);
        for (size_t k = 0; st == TL_OK && k < p->spec.n_fields; k++)
            if (strcmp(p->names[k], name) == 0)
                st = tl_error_set(err, TL_ERR_INVALID, "partition_by \"%s\" is given twice", entry);
        if (st == TL_OK)
            add_spec_field(md, p, &last, tl_ice_schema_find(schema, column)->id, tr, name);
        else
            free(name);
        free(column);
        TL_TRY(st);
    }
    return TL_OK;
}

tl_status tl_evolution_apply(const tl_ice_metadata *md, const tl_evolution *ev,
                             tl_ice_metadata **out, tl_error *err)
{
    *out = NULL;
    tl_contract c;
    TL_TRY(tl_contract_load(md, &c, err));
    tl_ice_schema schema = {0};
    spec_plan p = {0};
    tl_status st = plan_schema(md, &c, ev, &schema, err);
    if (st == TL_OK) st = plan_spec(md, &c, ev, &schema, &p, err);
    if (st == TL_OK) st = tl_ice_metadata_copy(md, out, err);
    if (st == TL_OK) st = tl_ice_metadata_evolve(*out, &schema, &p.spec, err);
    if (st != TL_OK) {
        tl_ice_metadata_free(*out);
        *out = NULL;
    }
    spec_plan_free(&p);
    tl_ice_schema_free(&schema);
    tl_contract_free(&c);
    return st;
}

tl_status tl_table_stage_evolution(tl_table *t, const tl_evolution *ev, tl_table_stash *stash,
                                   tl_error *err)
{
    tl_ice_metadata *md = NULL;
    TL_TRY(tl_evolution_apply(t->md, ev, &md, err));
    tl_contract contract;
    tl_status st = tl_contract_load(md, &contract, err);
    if (st != TL_OK) {
        tl_ice_metadata_free(md);
        return st;
    }
    if (stash) {
        *stash = (tl_table_stash){t->md, t->md_token, t->contract, t->version, true};
    } else {
        tl_contract_free(&t->contract);
        tl_md_cache_give_back(t->md_cache, t->md_token, t->md); /* frees it if not cached */
    }
    t->md = md;
    t->md_token = 0;
    t->contract = contract;
    return TL_OK;
}

void tl_table_unstage(tl_table *t, tl_table_stash *stash, bool committed)
{
    if (!stash->staged) return;
    stash->staged = false;
    if (!committed && t->version == stash->version) { /* no commit, no reload: put it back */
        tl_contract_free(&t->contract);
        tl_ice_metadata_free(t->md);
        t->md = stash->md;
        t->md_token = stash->md_token;
        t->contract = stash->contract;
        return;
    }
    tl_contract_free(&stash->contract);
    tl_md_cache_give_back(t->md_cache, stash->md_token, stash->md);
    /* A lost race moved the handle on and staged the winner's version: that
     * version as stored (a failed reload leaves the next commit to find out). */
    if (!committed) tl_table_reload(t, t->version, NULL);
}
