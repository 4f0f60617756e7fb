/* Opening a lake: the root handle for objects and the warehouse handle for
 * tables, at <lake>/warehouse. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

/* "<url>/warehouse", without doubling a trailing slash. The caller frees it. */
static char *warehouse_url(const char *url)
{
    size_t n = strlen(url);
    while (n > 1 && url[n - 1] == '/') n--;
    char *out = malloc(n + sizeof "/warehouse");
    if (out) snprintf(out, n + sizeof "/warehouse", "%.*s/warehouse", (int)n, url);
    return out;
}

/* The storage options with timelake_query_threads=1 after them (malloc'd;
 * the strings are borrowed), or NULL when out of memory. A run maps files
 * on threads of its own, each with a handle of the lake: DuckDB threads of
 * their own would only add waits (its calling thread polls while another
 * runs a small file's one task). */
static const char **mapping_options(const char *const *storage_options)
{
    size_t n = 0;
    while (storage_options && storage_options[n]) n += 2;
    const char **out = calloc(n + 3, sizeof *out);
    if (out == NULL) return NULL;
    for (size_t i = 0; i < n; i++) out[i] = storage_options[i];
    out[n] = "timelake_query_threads";
    out[n + 1] = "1";
    return out;
}

int karet_lake_open(const char *url, const char *const *storage_options, karet_lake *out, char *err,
                    size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (url == NULL || url[0] == '\0') {
        snprintf(err, errlen, "no lake given");
        return -1;
    }
    tl_error e = {0};
    char *wh = warehouse_url(url);
    const char **mapping = mapping_options(storage_options);
    if (wh == NULL || mapping == NULL) {
        free(wh);
        free(mapping);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    tl_status st = tl_lake_open(url, mapping, &out->objects, &e);
    if (st == TL_OK) st = tl_lake_open(wh, storage_options, &out->warehouse, &e);
    for (size_t i = 0; st == TL_OK && i < KARET_READERS - 1; i++)
        st = tl_lake_open(url, mapping, &out->readers[i], &e);
    free(wh);
    free(mapping);
    if (st != TL_OK) {
        snprintf(err, errlen, "cannot open the lake %s: %s", url, e.message);
        karet_lake_close(out);
        return -1;
    }
    return 0;
}

void karet_lake_close(karet_lake *lake)
{
    if (lake == NULL) return;
    for (size_t i = 0; i < KARET_READERS - 1; i++) tl_lake_close(lake->readers[i]);
    tl_lake_close(lake->warehouse);
    tl_lake_close(lake->objects);
    memset(lake, 0, sizeof *lake);
}
