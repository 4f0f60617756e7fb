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
    if (wh == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    tl_status st = tl_lake_open(url, storage_options, &out->objects, &e);
    if (st == TL_OK) st = tl_lake_open(wh, storage_options, &out->warehouse, &e);
    for (size_t i = 0; st == TL_OK && i < KARET_READERS - 1; i++)
        st = tl_lake_open(url, storage_options, &out->readers[i], &e);
    if (st != TL_OK) {
        snprintf(err, errlen, "cannot open the lake %s: %s", url, e.message);
        karet_lake_close(out);
        free(wh);
        return -1;
    }
    free(wh);
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
