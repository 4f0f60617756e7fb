/* A table's config and its hash. */
#include "table_config.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_text.h"

static void walk_dims(const kconfig *c, const json_t *node, bool *used)
{
    if (json_is_array(node)) {
        for (size_t i = 0; i < json_array_size(node); i++)
            walk_dims(c, json_array_get(node, i), used);
        return;
    }
    if (!json_is_object(node)) return;
    const char *kind = json_string_value(json_object_get(node, "kind"));
    if (kind && strcmp(kind, "dim_ref") == 0) {
        const char *id = json_string_value(json_object_get(node, "dim_id"));
        const kdimension *d = id ? kconfig_dim(c, id) : NULL;
        if (d) used[d->index] = true;
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)node, key, v) walk_dims(c, v, used);
}

void ktable_dims_used(const kconfig *c, const ktable *t, bool *used)
{
    for (size_t i = 0; i < c->nmappings; i++) {
        const kmapping *m = &c->mappings[i];
        if (m->table != t) continue;
        walk_dims(c, m->json, used);
        if (m->source && m->source->record_filter) walk_dims(c, m->source->record_filter, used);
    }
}

/* A copy of an entity's JSON without its display name. */
static json_t *without_name(const json_t *o)
{
    json_t *copy = json_deep_copy(o);
    if (copy) json_object_del(copy, "name");
    return copy;
}

json_t *ktable_config(const kconfig *c, const ktable *t, const json_t *dim_files)
{
    json_t *mappings = json_array(), *sources = json_object(), *dims = json_object();
    bool *used = calloc(c->ndims + 1, sizeof *used);
    if (mappings == NULL || sources == NULL || dims == NULL || used == NULL) goto oom;
    for (size_t i = 0; i < c->nmappings; i++) {
        const kmapping *m = &c->mappings[i];
        if (m->table != t) continue;
        json_array_append_new(mappings, without_name(m->json));
        json_object_set_new(sources, m->source->id, without_name(m->source->json));
    }
    ktable_dims_used(c, t, used);
    for (size_t i = 0; i < c->ndims; i++)
        if (used[i]) json_object_set_new(dims, c->dims[i].id, without_name(c->dims[i].json));
    free(used);
    return json_pack("{s:i, s:o, s:o, s:o, s:o, s:O?}", "format", 1, "table", without_name(t->json),
                     "mappings", mappings, "sources", sources, "dimensions", dims,
                     "dimension_files", dim_files);
oom:
    json_decref(mappings);
    json_decref(sources);
    json_decref(dims);
    free(used);
    return NULL;
}

bool ktable_config_hash(const kconfig *c, const ktable *t, const json_t *dim_files, char out[65])
{
    json_t *j = ktable_config(c, t, dim_files);
    char *text =
        j ? kjson_dumps_jansson(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII) : NULL;
    json_decref(j);
    if (text == NULL) return false;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    bool ok = EVP_Digest(text, strlen(text), md, &n, EVP_sha256(), NULL) == 1;
    free(text);
    for (unsigned int i = 0; ok && i < n && i < 32; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
    return ok;
}
