/* The warehouse's table registry: a JSON array of "namespace.table" names in
 * timelake-tables.json at the root. The reference keeps it so that listing
 * tables costs one read instead of a listing of the whole bucket; we keep it
 * in the same shape so each implementation sees the other's tables. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/strlist.h"
#include "core/json_text.h"
#include "table/table_internal.h"

#define REGISTRY_KEY "timelake-tables.json"

static tl_status registry_read(tl_store *store, tl_strlist *out, tl_error *err)
{
    tl_buf b = {0};
    tl_error e = {0};
    tl_status st = tl_store_get(store, REGISTRY_KEY, &b, &e);
    /* No registry is an empty lake; a folder in its place is damage to
     * report (locally: an object store has no empty folders). */
    if (st == TL_ERR_NOT_FOUND && strstr(e.message, "is a directory"))
        return tl_error_set(err, TL_ERR_STORAGE,
                            "%s at the lake's root is a directory, not the registry of table "
                            "names: move it away",
                            REGISTRY_KEY);
    if (st == TL_ERR_NOT_FOUND) return TL_OK;
    if (st != TL_OK && err) *err = e;
    if (st != TL_OK) return st;
    json_error_t jerr;
    bool nomem;
    json_t *root = tl_json_loadb((const char *)b.data, b.len, 0, &jerr, &nomem);
    tl_buf_free(&b);
    if (nomem) return tl_error_nomem(err);
    if (!json_is_array(root)) {
        json_decref(root);
        return tl_error_set(err, TL_ERR_STORAGE, "%s is not a JSON array of table names",
                            REGISTRY_KEY);
    }
    size_t i;
    json_t *v;
    json_array_foreach(root, i, v)
    {
        if (json_is_string(v) && tl_strlist_push(out, json_string_value(v)) != 0) {
            json_decref(root);
            return tl_error_nomem(err);
        }
    }
    json_decref(root);
    return TL_OK;
}

static tl_status registry_write(tl_store *store, tl_strlist *names, tl_error *err)
{
    tl_strlist_sort(names);
    json_t *root = json_array();
    /* A name that could not be added fails the write: the registry written
     * without it would drop a table from every listing. */
    bool whole = root != NULL;
    for (size_t i = 0; whole && i < names->len; i++)
        whole = json_array_append_new(root, json_string(names->items[i])) == 0;
    char *text = whole ? tl_json_dumps(root, JSON_INDENT(2)) : NULL;
    json_decref(root);
    if (text == NULL) return tl_error_nomem(err);
    tl_status st = tl_store_put(store, REGISTRY_KEY, text, strlen(text), err);
    free(text);
    return st;
}

tl_status tl_registry_add(tl_store *store, const char *full_name, tl_error *err)
{
    tl_strlist names = {0};
    tl_status st = registry_read(store, &names, err);
    if (st == TL_OK && !tl_strlist_contains(&names, full_name)) {
        st = tl_strlist_push(&names, full_name) == 0 ? registry_write(store, &names, err)
                                                     : tl_error_nomem(err);
    }
    tl_strlist_free(&names);
    return st;
}

tl_status tl_registry_remove(tl_store *store, const char *full_name, tl_error *err)
{
    tl_strlist names = {0}, kept = {0};
    tl_status st = registry_read(store, &names, err);
    bool found = false;
    for (size_t i = 0; st == TL_OK && i < names.len; i++) {
        if (strcmp(names.items[i], full_name) == 0)
            found = true;
        else if (tl_strlist_push(&kept, names.items[i]) != 0)
            st = tl_error_nomem(err);
    }
    if (st == TL_OK && found) st = registry_write(store, &kept, err);
    tl_strlist_free(&names);
    tl_strlist_free(&kept);
    return st;
}

tl_status tl_lake_list_tables(tl_lake *lake, char ***out, tl_error *err)
{
    tl_strlist names = {0};
    tl_status st = registry_read(lake->store, &names, err);
    if (st != TL_OK) {
        tl_strlist_free(&names);
        return st;
    }
    tl_strlist_sort(&names);
    *out = tl_strlist_detach(&names);
    return *out ? TL_OK : tl_error_nomem(err);
}

void tl_strings_free(char **strings)
{
    if (strings == NULL) return;
    for (char **p = strings; *p; p++) free(*p);
    free(strings);
}
