#include "store/store.h"

#include <stdlib.h>
#include <string.h>

#include "core/strlist.h"

tl_status tl_store_open(const char *location, const char *const *options, tl_store **out,
                        tl_error *err)
{
    if (location == NULL || location[0] == '\0')
        return tl_error_set(err, TL_ERR_INVALID, "empty warehouse location");
    const char *scheme_end = strstr(location, "://");
    if (scheme_end != NULL && strncmp(location, "file://", 7) != 0)
        return tl_error_set(err, TL_ERR_INVALID,
                            "unsupported warehouse URL \"%s\" (use a local path or file://)",
                            location);
    if (options != NULL && options[0] != NULL)
        return tl_error_set(err, TL_ERR_INVALID, "unknown storage option \"%s\" for a local lake",
                            options[0]);
    const char *path = scheme_end ? location + 7 : location;
    return tl_store_local_open(path, out, err);
}

void tl_store_free(tl_store *s)
{
    if (s != NULL) s->ops->free(s);
}

tl_status tl_store_remove_prefix(tl_store *s, const char *prefix, tl_error *err)
{
    tl_strlist keys = {0};
    tl_status st = tl_store_list(s, prefix, &keys, err);
    for (size_t i = 0; st == TL_OK && i < keys.len; i++)
        st = tl_store_remove(s, keys.items[i], err);
    tl_strlist_free(&keys);
    return st;
}

char *tl_store_url_of(const tl_store *s, const char *key)
{
    return tl_strdup_printf("%s/%s", s->url, key);
}

const char *tl_store_key_of(const tl_store *s, const char *url)
{
    size_t n = strlen(s->url);
    if (strncmp(url, s->url, n) != 0 || url[n] != '/') return NULL;
    return url + n + 1;
}
