/* Files compiled into the binary (cmake/karet_web.cmake): the pages' CSS,
 * JavaScript and icons from karet/web/. */
#ifndef KARET_WEB_ASSETS_H
#define KARET_WEB_ASSETS_H

#include <stddef.h>

typedef struct web_asset {
    const char *name;         /* the file name, e.g. "app.css" */
    const char *content_type; /* from its extension */
    const unsigned char *data;
    size_t len;
    const char *version; /* 16 hex digits of its SHA-256 */
} web_asset;

/* The table ends with an entry whose name is NULL. */
extern const web_asset WEB_ASSETS[];

/* The asset of that name, or NULL. */
const web_asset *web_asset_find(const char *name);

#endif
