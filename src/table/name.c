#include "table/name.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool valid_part(const char *s, size_t n)
{
    if (n == 0 || n >= TL_NAME_MAX) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

tl_status tl_qname_parse(const char *name, const char *default_namespace, tl_qname *out,
                         tl_error *err)
{
    const char *dot = name ? strchr(name, '.') : NULL;
    const char *ns = dot ? name : default_namespace;
    size_t ns_len = dot ? (size_t)(dot - name) : strlen(default_namespace);
    const char *table = dot ? dot + 1 : name;
    if (name == NULL || !valid_part(ns, ns_len) || !valid_part(table, strlen(table)))
        return tl_error_set(err, TL_ERR_INVALID,
                            "table name \"%s\" must be [namespace.]table using [A-Za-z0-9_-]",
                            name ? name : "(null)");
    memcpy(out->namespace_, ns, ns_len);
    out->namespace_[ns_len] = '\0';
    snprintf(out->table, sizeof out->table, "%s", table);
    snprintf(out->full, sizeof out->full, "%s.%s", out->namespace_, out->table);
    snprintf(out->key, sizeof out->key, "%s/%s", out->namespace_, out->table);
    return TL_OK;
}
