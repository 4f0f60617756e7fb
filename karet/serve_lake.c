#include "serve_lake.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tl_lake *open_at(service *svc, const char *url, char *err, size_t errlen)
{
    tl_lake *lake = NULL;
    tl_error e = {0};
    if (tl_lake_open(url, (const char *const *)svc->cfg.storage_options, &lake, &e) != TL_OK) {
        snprintf(err, errlen, "%s", e.message);
        return NULL;
    }
    return lake;
}

tl_lake *lake_open_objects(service *svc, char *err, size_t errlen)
{
    return open_at(svc, svc->cfg.lake_url, err, errlen);
}

tl_lake *lake_open_warehouse(service *svc, char *err, size_t errlen)
{
    char url[4096];
    const char *base = svc->cfg.lake_url;
    size_t n = strlen(base);
    while (n > 0 && base[n - 1] == '/') n--;
    snprintf(url, sizeof url, "%.*s/%s", (int)n, base, WAREHOUSE_DIR);
    return open_at(svc, url, err, errlen);
}

int lake_drop_namespace(service *svc, const char *slug, char *err, size_t errlen)
{
    tl_lake *lake = lake_open_warehouse(svc, err, errlen);
    if (lake == NULL) return -1;
    char **names = NULL;
    tl_error e = {0};
    int dropped = 0;
    if (tl_lake_list_tables(lake, &names, &e) != TL_OK) {
        snprintf(err, errlen, "%s", e.message);
        tl_lake_close(lake);
        return -1;
    }
    size_t n = strlen(slug);
    for (char **p = names; *p && dropped >= 0; p++) {
        if (strncmp(*p, slug, n) != 0 || (*p)[n] != '.') continue;
        if (tl_lake_drop_table(lake, *p, &e) != TL_OK) {
            snprintf(err, errlen, "%s", e.message);
            dropped = -1;
        } else {
            dropped++;
        }
    }
    tl_strings_free(names);
    tl_lake_close(lake);
    return dropped;
}

void lake_bucket_of(const char *url, char **bucket, char **prefix)
{
    *bucket = *prefix = NULL;
    if (strncmp(url, "s3://", 5) != 0) return;
    const char *b = url + 5, *slash = strchr(b, '/');
    *bucket = slash ? strndup(b, (size_t)(slash - b)) : strdup(b);
    const char *rest = slash ? slash + 1 : "";
    size_t n = strlen(rest);
    while (n > 0 && rest[n - 1] == '/') n--;
    *prefix = malloc(n + 2);
    if (*prefix) {
        memcpy(*prefix, rest, n);
        (*prefix)[n] = 0;
        if (n) strcat(*prefix, "/");
    }
}
